import { DEFAULT_MESSAGES } from '../src/lib/errors/api-error.js';
import { useApp } from './support/app.js';
import { send } from './support/http.js';
import { postPlant } from './support/plants.js';
import { contractOf, type OpenApiDocument, readSpec } from './support/spec.js';

const ERROR_STATUSES = ['400', '401', '409', '413', '415', '429', '500', '503'];

type Operation = {
  operationId?: string;
  summary?: string;
  security?: Record<string, string[]>[];
  requestBody?: {
    required?: boolean;
    content: Record<string, { schema: { $ref: string } }>;
  };
  responses: Record<
    string,
    {
      content?: Record<string, { schema: { $ref: string }; example?: unknown }>;
      headers?: Record<string, unknown>;
    }
  >;
};

describe('the published OpenAPI document', () => {
  const service = useApp();
  let published: OpenApiDocument;
  let spec: OpenApiDocument;

  beforeAll(async () => {
    const answer = await send(`${service().url}/openapi.json`);
    expect(answer.status).toBe(200);
    published = answer.body as OpenApiDocument;
    spec = await readSpec();
  });

  const createPlant = (document: OpenApiDocument): Operation =>
    document.paths['/plants'].post as unknown as Operation;

  it('is OpenAPI 3 and states the spec title, version and license', () => {
    expect((published as unknown as { openapi: string }).openapi).toMatch(
      /^3\./,
    );
    expect(published.info.title).toBe(spec.info.title);
    expect(published.info.version).toBe('1.0.0');
    expect(published.info.license?.name).toBe(spec.info.license?.name);
  });

  it.each(['Plant', 'NewPlant', 'Error'])(
    'states the %s schema as the spec does',
    (name) => {
      const ours = contractOf(published, {
        $ref: `#/components/schemas/${name}`,
      });
      const theirs = contractOf(spec, { $ref: `#/components/schemas/${name}` });
      expect(ours).toEqual(theirs);
    },
  );

  it('states the types and formats exactly: int64 id, int32 error', () => {
    expect(
      contractOf(published, { $ref: '#/components/schemas/NewPlant' })
        .properties?.id,
    ).toEqual({
      type: 'integer',
      format: 'int64',
    });
    expect(
      contractOf(published, { $ref: '#/components/schemas/Error' }).properties
        ?.error,
    ).toEqual({
      type: 'integer',
      format: 'int32',
    });
  });

  it('states POST /plants as the spec does: addPlant, NewPlant in, Plant out, Error on 400', () => {
    const ours = createPlant(published);
    const theirs = createPlant(spec);

    expect(ours.operationId).toBe(theirs.operationId);
    expect(ours.requestBody?.required).toBe(true);
    expect(ours.requestBody?.content['application/json'].schema).toEqual(
      theirs.requestBody?.content['application/json'].schema,
    );
    for (const status of ['200', '400']) {
      expect(
        ours.responses[status].content?.['application/json'].schema,
      ).toEqual(theirs.responses[status].content?.['application/json'].schema);
    }
  });

  it('documents every status the service answers on POST /plants, each with the Error body', () => {
    const responses = createPlant(published).responses;
    expect(Object.keys(responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    for (const status of ERROR_STATUSES) {
      expect(responses[status].content?.['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
    }
  });

  it('gives each error status its own example: the status and the catalogue sentence', () => {
    const responses = createPlant(published).responses;
    for (const status of ERROR_STATUSES) {
      expect(responses[status].content?.['application/json'].example).toEqual({
        error: Number(status),
        message: DEFAULT_MESSAGES[Number(status)],
      });
    }
  });

  it("gives the Error schema's message, as its example, what the service answers to a bad id", async () => {
    const schemas = (
      published as unknown as {
        components: {
          schemas: Record<
            string,
            { properties: Record<string, { example?: unknown }> }
          >;
        };
      }
    ).components.schemas;
    const answer = await postPlant(
      service().url,
      '{"id": 1.5, "name": "Fern"}',
    );
    expect(answer.status).toBe(400);
    expect(schemas.Error?.properties.message?.example).toBe(
      (answer.body as { message: string }).message,
    );
  });

  it('lists Retry-After where the service sends it: 429 and 503', () => {
    const responses = createPlant(published).responses;
    for (const status of ['429', '503']) {
      expect(Object.keys(responses[status].headers ?? {})).toEqual([
        'Retry-After',
      ]);
    }
    expect(
      (published.paths['/health/ready'].get as unknown as Operation).responses[
        '503'
      ].headers?.['Retry-After'],
    ).toBeDefined();
  });

  it('names every operation once and summarises each', () => {
    const operations = Object.values(published.paths).flatMap((path) =>
      Object.values(path),
    ) as unknown as Operation[];
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    expect(new Set(ids).size).toBe(ids.length);
    for (const operation of operations) {
      expect(operation.summary).toMatch(/\S/);
    }
  });

  it('secures the service with an http bearer scheme named bearerAuth', () => {
    expect(published.components.securitySchemes.bearerAuth).toEqual(
      spec.components.securitySchemes.bearerAuth,
    );
    expect(published.security).toEqual(spec.security);
    expect(createPlant(published).security ?? published.security).toEqual([
      { bearerAuth: [] },
    ]);
  });

  it('marks the health check, and only it, as open', () => {
    expect(
      (published.paths['/health'].get as unknown as Operation).security,
    ).toEqual([]);
  });

  it('serves Swagger UI at /docs without a token', async () => {
    const answer = await send(`${service().url}/docs`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    expect(answer.text).toContain('swagger');
  });
});
