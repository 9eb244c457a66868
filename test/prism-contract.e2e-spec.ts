import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { type RunningApp, startApp } from './support/app.js';
import { freePort } from '../test-kit/free-port.mjs';
import { type Answer } from './support/http.js';
import { newPlantJson, postPlant } from './support/plants.js';
import { SPEC_PATH } from './support/spec.js';

interface Violation {
  location: string[];
  severity: string;
  message: string;
}

let counter = 0n;
/**
 * Prism parses JSON into doubles and so checks int64 ids against 2^53 - 1; the service
 * takes the whole int64 range (test/plants.e2e-spec.ts). Ids here stay below 2^53.
 */
function prismSafeId(): bigint {
  counter += 1n;
  return BigInt(Date.now()) * 1000n + counter;
}

const violationsOf = (answer: Answer): Violation[] =>
  JSON.parse(answer.headers.get('sl-violations') ?? '[]') as Violation[];

const responseViolations = (answer: Answer): Violation[] =>
  violationsOf(answer).filter(
    (violation) => violation.location[0] === 'response',
  );

// The spec lists 200 and 400 only; Prism warns about any other status, and nothing more.
const UNLISTED_STATUS =
  'Unable to match the returned status code with those defined in the document: 200,400';

/**
 * Stoplight Prism, an independent reading of the contract (the pinned
 * test/contract/plant-store.openapi.yaml), as a proxy in front of the real service: it checks every request and answer against the spec
 * and reports what does not match in the sl-violations header.
 */
describe('the contract, as Prism reads the shared spec', () => {
  let service: RunningApp;
  let prism: ChildProcess;
  let prismUrl: string;

  beforeAll(async () => {
    service = await startApp();
    const port = await freePort();
    prismUrl = `http://127.0.0.1:${port}`;
    prism = spawn(
      resolve('node_modules/.bin/prism'),
      [
        'proxy',
        SPEC_PATH,
        service.url,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    await new Promise<void>((ready, fail) => {
      prism.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('Prism is listening')) ready();
      });
      prism.once('exit', () => fail(new Error(`Prism exited:\n${output}`)));
    });
  });
  afterAll(async () => {
    prism?.kill();
    await service?.close();
  });

  it('finds a created plant a valid 200 Plant', async () => {
    const answer = await postPlant(
      prismUrl,
      newPlantJson(prismSafeId(), 'Prism', 'checked'),
    );
    expect(answer.status).toBe(200);
    expect(violationsOf(answer)).toEqual([]);
  });

  it('finds a plant without a tag a valid 200 Plant', async () => {
    const answer = await postPlant(
      prismUrl,
      newPlantJson(prismSafeId(), 'Untagged'),
    );
    expect(answer.status).toBe(200);
    expect(violationsOf(answer)).toEqual([]);
  });

  it.each([
    ['a string id', '{"id": "12", "name": "Fern"}'],
    ['no name', `{"id": ${prismSafeId()}}`],
    ['a null tag', `{"id": ${prismSafeId()}, "name": "Fern", "tag": null}`],
  ])(
    'agrees that %s is invalid, and finds our 400 a valid Error',
    async (_case, json) => {
      const answer = await postPlant(prismUrl, json);
      expect(answer.status).toBe(400);
      expect(
        violationsOf(answer).filter(
          (violation) => violation.location[0] === 'request',
        ),
      ).not.toEqual([]);
      expect(responseViolations(answer)).toEqual([]);
    },
  );

  it('finds nothing wrong with statuses the spec leaves open, beyond their not being listed', async () => {
    const id = prismSafeId();
    await postPlant(prismUrl, newPlantJson(id, 'First'));
    const answers = [
      await postPlant(prismUrl, newPlantJson(id, 'Second')),
      await postPlant(prismUrl, newPlantJson(prismSafeId(), 'Fern'), {
        token: 'wrong-token-0123456789',
      }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([409, 401]);
    for (const answer of answers) {
      expect(responseViolations(answer)).toEqual([
        {
          location: ['response'],
          severity: 'Warning',
          message: UNLISTED_STATUS,
        },
      ]);
    }
  });
});
