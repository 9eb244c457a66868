import fc from 'fast-check';
import { generateSync, type JsonSchema } from 'json-schema-faker';
import { useApp } from './support/app.js';
import { send } from './support/http.js';
import { postPlant } from './support/plants.js';

type Schema = Record<string, unknown>;

/** The schema with every local $ref replaced by what it names. */
function inline(schema: unknown, schemas: Record<string, Schema>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inline(item, schemas));
  if (typeof schema !== 'object' || schema === null) return schema;
  const ref = (schema as { $ref?: string }).$ref;
  if (ref !== undefined)
    return inline(schemas[ref.replace('#/components/schemas/', '')], schemas);
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, inline(value, schemas)]),
  );
}

/** One way a body leaves the schema, read from the schema itself. */
const BREAKS = [
  'required field missing',
  'text field not a string',
  'text outside the pattern',
] as const;

/**
 * What a schema-driven fuzzer does with the served document: bodies generated from
 * NewPlant as /openapi.json publishes it (json-schema-faker) are accepted (200, or 409
 * when a generated id was already taken with other content), and the same bodies broken
 * against one of the document's own rules are refused 400.
 */
describe('bodies generated from the served OpenAPI document', () => {
  const service = useApp();
  let newPlant: Schema & {
    required: string[];
    properties: Record<string, Schema>;
  };

  beforeAll(async () => {
    const document = (await send(`${service().url}/openapi.json`)).body as {
      components: { schemas: Record<string, Schema> };
    };
    newPlant = inline(
      document.components.schemas.NewPlant,
      document.components.schemas,
    ) as typeof newPlant;
  });

  const textFields = (): string[] =>
    Object.entries(newPlant.properties)
      .filter(([, schema]) => schema.type === 'string')
      .map(([name]) => name);

  it('states the text rule as a pattern the generator follows', () => {
    for (const name of textFields())
      expect(newPlant.properties[name].pattern).toEqual(expect.any(String));
  });

  it('accepts what the schema generates, and refuses 400 what breaks one of its rules', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(...BREAKS),
        fc.constantFrom(...textFields()),
        async (seed, broken, field) => {
          const body = generateSync(newPlant as JsonSchema, {
            seed,
            alwaysFakeOptionals: seed % 2 === 0,
          }) as Record<string, unknown>;
          const positive = await postPlant(service().url, JSON.stringify(body));
          expect([200, 409], JSON.stringify(body)).toContain(positive.status);

          const negative = { ...body };
          const target =
            broken === 'required field missing'
              ? newPlant.required[seed % newPlant.required.length]
              : field;
          if (broken === 'required field missing') delete negative[target];
          else if (broken === 'text field not a string')
            negative[target] = seed;
          else {
            // The text fields are strings in the schema; one left out is the empty text.
            const text = body[target];
            negative[target] = `${typeof text === 'string' ? text : ''}\u0000`;
          }
          const refused = await postPlant(
            service().url,
            JSON.stringify(negative),
          );
          expect(refused.status, JSON.stringify(negative)).toBe(400);
        },
      ),
      { numRuns: 200 },
    );
  });
});
