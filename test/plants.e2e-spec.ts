import { expectErrorAnswer } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { PublishedSchemas } from './support/openapi-schemas.js';
import { useApp } from './support/app.js';
import { countPlants, storedPlant } from './support/stored-plants.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

describe('POST /plants', () => {
  const service = useApp();
  let schemas: PublishedSchemas;

  beforeAll(async () => {
    schemas = await PublishedSchemas.fetch(service().url);
  });

  describe('creating', () => {
    it('answers 200 with exactly the Plant, and stores it', async () => {
      const id = uniqueId();
      const answer = await postPlant(
        service().url,
        newPlantJson(id, 'Monstera', 'tropical'),
      );

      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.body).toEqual({ name: 'Monstera', tag: 'tropical' });
      schemas.expectMatches('Plant', answer.body);
      expect(await storedPlant(service().dataSource, id)).toEqual({
        id: id.toString(),
        name: 'Monstera',
        tag: 'tropical',
      });
    });

    it('leaves tag out of the answer, not null, when none was sent', async () => {
      const id = uniqueId();
      const answer = await postPlant(service().url, newPlantJson(id, 'Fern'));

      expect(answer.status).toBe(200);
      expect(answer.text).toBe('{"name":"Fern"}');
      expect(await storedPlant(service().dataSource, id)).toEqual({
        id: id.toString(),
        name: 'Fern',
        tag: null,
      });
    });

    it('accepts empty strings and keeps unicode text exactly', async () => {
      const id = uniqueId();
      const name =
        'Ficus \u00e9l\u00e9gant \ud83c\udf3f \u4e2d\u6587 "quoted" \\ \n\t';
      const answer = await postPlant(service().url, newPlantJson(id, name, ''));

      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name, tag: '' });
      expect(await storedPlant(service().dataSource, id)).toEqual({
        id: id.toString(),
        name,
        tag: '',
      });
    });

    it('ignores properties the schema does not name: not stored, not echoed', async () => {
      const id = uniqueId();
      const answer = await postPlant(
        service().url,
        `{"id": ${id}, "name": "Aloe", "colour": "green", "id2": 99999999999999999999, "nested": {"a": [1]}}`,
      );

      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Aloe' });
      const columns = (await service().dataSource.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'plants' ORDER BY column_name",
      )) as { column_name: string }[];
      expect(columns.map((column) => column.column_name)).toEqual([
        'created_at',
        'id',
        'name',
        'tag',
      ]);
    });

    it.each([
      ['the largest int64', INT64_MAX],
      ['the smallest int64', INT64_MIN],
      ['2^53 + 1, which a double cannot hold', 2n ** 53n + 1n],
      ['-(2^53 + 1)', -(2n ** 53n) - 1n],
      ['zero', 0n],
    ])('stores %s to the last digit', async (_case, id) => {
      await service().dataSource.query(
        'DELETE FROM plants WHERE id = $1::bigint',
        [id.toString()],
      );
      const answer = await postPlant(service().url, newPlantJson(id, 'Edge'));

      expect(answer.status).toBe(200);
      expect(await storedPlant(service().dataSource, id)).toEqual({
        id: id.toString(),
        name: 'Edge',
        tag: null,
      });
    });
  });

  describe('validation', () => {
    const INT64_RULE =
      'id must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or an exponent.';

    it.each([
      ['int64 max + 1', '9223372036854775808', INT64_RULE],
      ['int64 min - 1', '-9223372036854775809', INT64_RULE],
      ['a huge integer', '1' + '0'.repeat(400), INT64_RULE],
      ['a string of digits', '"12"', INT64_RULE],
      ['a fraction', '1.5', INT64_RULE],
      ['an integral fraction', '12.0', INT64_RULE],
      ['an exponent', '1e3', INT64_RULE],
      ['a boolean', 'true', INT64_RULE],
      ['null', 'null', INT64_RULE],
      ['an object', '{"value": 1}', INT64_RULE],
    ])('refuses an id that is %s', async (_case, idJson, message) => {
      const answer = await postPlant(
        service().url,
        `{"id": ${idJson}, "name": "Fern"}`,
      );

      expectErrorAnswer(answer, 400, message);
      schemas.expectMatches('Error', answer.body);
    });

    it.each([
      ['no id', '{"name": "Fern"}', 'id is required.'],
      ['no name', '{"id": 1}', 'name is required.'],
      ['nothing', '{}', 'id is required; name is required.'],
      ['a number name', '{"id": 1, "name": 5}', 'name must be a string.'],
      ['a null name', '{"id": 1, "name": null}', 'name must be a string.'],
      [
        'a null tag',
        '{"id": 1, "name": "Fern", "tag": null}',
        'tag must be a string.',
      ],
      [
        'a boolean tag',
        '{"id": 1, "name": "Fern", "tag": false}',
        'tag must be a string.',
      ],
      [
        'a NUL in name',
        '{"id": 1, "name": "a\\u0000b"}',
        'name must be well-formed Unicode text without NUL characters.',
      ],
      [
        'a lone surrogate in tag',
        '{"id": 1, "name": "a", "tag": "\\ud800"}',
        'tag must be well-formed Unicode text without NUL characters.',
      ],
    ])(
      'refuses a body with %s, naming the field',
      async (_case, json, message) => {
        const answer = await postPlant(service().url, json);

        expectErrorAnswer(answer, 400, message);
      },
    );

    it('writes nothing when it refuses', async () => {
      const id = uniqueId();
      const answer = await postPlant(
        service().url,
        `{"id": ${id}, "name": "Fern", "tag": null}`,
      );

      expect(answer.status).toBe(400);
      expect(await countPlants(service().dataSource, id)).toBe(0);
    });
  });

  describe('duplicates', () => {
    it('treats the same id with the same content as a safe retry: 200, nothing written', async () => {
      const id = uniqueId();
      const first = await postPlant(
        service().url,
        newPlantJson(id, 'Cactus', 'desert'),
      );
      const before = (await service().dataSource.query(
        'SELECT xmin::text AS version FROM plants WHERE id = $1::bigint',
        [id.toString()],
      )) as { version: string }[];
      const again = await postPlant(
        service().url,
        newPlantJson(id, 'Cactus', 'desert'),
      );
      const after = (await service().dataSource.query(
        'SELECT xmin::text AS version FROM plants WHERE id = $1::bigint',
        [id.toString()],
      )) as { version: string }[];

      expect(first.status).toBe(200);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ name: 'Cactus', tag: 'desert' });
      expect(after).toEqual(before);
      expect(await countPlants(service().dataSource, id)).toBe(1);
    });

    it.each([
      ['another name', 'Other', 'desert'],
      ['another tag', 'Cactus', 'jungle'],
      ['no tag where there was one', 'Cactus', undefined],
    ])(
      'answers 409 for the same id with %s, and keeps the first',
      async (_case, name, tag) => {
        const id = uniqueId();
        await postPlant(service().url, newPlantJson(id, 'Cactus', 'desert'));
        const conflict = await postPlant(
          service().url,
          newPlantJson(id, name, tag),
        );

        expectErrorAnswer(
          conflict,
          409,
          'A plant with this id already exists with a different name or tag.',
        );
        expect(await storedPlant(service().dataSource, id)).toEqual({
          id: id.toString(),
          name: 'Cactus',
          tag: 'desert',
        });
      },
    );

    it('lets exactly one of many concurrent creates of one id win, and stores the winner', async () => {
      const id = uniqueId();
      const names = Array.from(
        { length: 40 },
        (_, index) => `Contender ${index}`,
      );
      const answers = await Promise.all(
        names.map((name) => postPlant(service().url, newPlantJson(id, name))),
      );

      const winners = answers.flatMap((answer, index) =>
        answer.status === 200 ? [names[index]] : [],
      );
      expect(winners).toHaveLength(1);
      expect(answers.filter((answer) => answer.status === 409)).toHaveLength(
        names.length - 1,
      );
      expect(await storedPlant(service().dataSource, id)).toEqual({
        id: id.toString(),
        name: winners[0],
        tag: null,
      });
    });

    it('answers 200 to every one of many concurrent identical creates, with one row', async () => {
      const id = uniqueId();
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          postPlant(service().url, newPlantJson(id, 'Twin', 'same')),
        ),
      );

      expect(answers.map((answer) => answer.status)).toEqual(
        Array(40).fill(200),
      );
      expect(await countPlants(service().dataSource, id)).toBe(1);
    });
  });
});
