import {
  DOCS_STYLE_APP,
  ensureDocsStyleApp,
} from '../bench/lib/docs-style-app.mjs';
import { freePort } from '../test-kit/free-port.mjs';
import { startNodeProcess } from '../test-kit/node-process.mjs';
import { adapterUnderTest } from './support/adapter-under-test.js';
import { errorBody, send } from './support/http.js';
import { migratedDatabase } from './support/migrated-database.js';
import { eventually } from './support/poll.js';
import { TOKEN } from './support/tokens.js';

/**
 * The benchmark's yardstick (bench/servers/docs-style-app.ts) on the adapter of the project
 * (Express, or its Fastify variant under e2e-fastify): it must answer the contract's
 * outcomes as the service does, or the bench would compare unlike work.
 */
describe('the bench docs-style app', () => {
  let url: string;
  let stop: () => Promise<unknown>;

  beforeAll(async () => {
    // Compiled once for both e2e projects (and again only when its sources change).
    const started = performance.now();
    const compiled = await ensureDocsStyleApp();
    process.stderr.write(
      `[docs-style-app] ${compiled ? 'compiled' : 'up to date, not compiled'} (${Math.round(performance.now() - started)} ms)\n`,
    );
    let output = '';
    const port = await freePort();
    const { child, exited } = startNodeProcess({
      args: [DOCS_STYLE_APP],
      env: {
        PATH: process.env.PATH ?? '',
        // Migrated by the service's migrations, as the bench's database is.
        DATABASE_URL: await migratedDatabase('docs_style'),
        API_TOKENS: TOKEN,
        PORT: String(port),
        HOST: '127.0.0.1',
        ...adapterUnderTest(),
      },
      onOutput: (text) => (output += text),
    });
    stop = () => {
      child.kill('SIGTERM');
      return exited;
    };
    url = `http://127.0.0.1:${port}`;
    await eventually(`the docs-style app at ${url}\n${output}`, () =>
      fetch(`${url}/health`).then(
        (answer) => (answer.ok ? true : undefined),
        () => undefined,
      ),
    );
  }, 120_000);

  afterAll(() => stop?.());

  const create = (body: string, token: string | null = TOKEN) =>
    send(`${url}/plants`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
      },
      body,
    });

  it('creates a plant (200, its name and tag), refuses its id again (409), a missing token (401) and a bad body (400), each with an Error body', async () => {
    // Exact as a JavaScript number, as the docs' DTOs have it; unique per run.
    const id = 2 ** 40 + (Date.now() % 2 ** 30);
    const created = await create(
      `{"id": ${id}, "name": "Fern", "tag": "green"}`,
    );
    expect({ status: created.status, body: created.body }).toEqual({
      status: 200,
      body: { name: 'Fern', tag: 'green' },
    });
    const answers = await Promise.all([
      create(`{"id": ${id}, "name": "Fern"}`),
      create(`{"id": ${id + 1}, "name": "Fern"}`, null),
      create(`{"id": "seven", "name": "Fern"}`),
    ]);
    expect(answers.map(({ status, body }) => ({ status, body }))).toEqual(
      [409, 401, 400].map((status) => ({ status, body: errorBody(status) })),
    );
  });
});
