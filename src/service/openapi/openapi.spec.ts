import {
  Controller,
  Delete,
  Get,
  type INestApplication,
  Post,
  type Type,
} from '@nestjs/common';
import { ApiOperation, type OpenAPIObject } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import {
  createOpenApiDocument,
  isDocumentationPath,
  setupOpenApi,
} from './openapi.js';

describe('isDocumentationPath: the documents and Swagger UI, however the path is spelled, and nothing else', () => {
  it('knows the two documents and the UI with its assets, in any case, with a query', () => {
    expect(
      [
        '/openapi.json',
        '/openapi.yaml',
        '/OpenAPI.JSON',
        '/openapi.json?download=1',
        '/docs',
        '/docs/',
        '/DOCS',
        '/docs?x=1',
        '/docs/swagger-ui.css',
      ].filter((path) => !isDocumentationPath(path)),
    ).toEqual([]);
  });

  it('does not take a path that only looks like one of them', () => {
    expect(
      [
        '/plants',
        '/',
        '/openapiXjson',
        '/openapi.jsonx',
        '/openapi.json.bak',
        '/docsx',
        '/x/docs',
        'docs',
        '/openapi',
      ].filter(isDocumentationPath),
    ).toEqual([]);
  });
});

@Controller('things')
class ThingsController {
  @Get()
  @ApiOperation({ operationId: 'listThings' })
  list(): string[] {
    return [];
  }

  // One handler on three paths: the first keeps its operationId.
  @Post(['', 'by-name/:name', 'a/b_c'])
  @ApiOperation({ operationId: 'addThing' })
  add(): string {
    return 'added';
  }

  @Delete(':id')
  remove(): void {}
}

async function appWith(...controllers: Type[]): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ controllers }).compile();
  return moduleRef.createNestApplication({ logger: false });
}

describe('createOpenApiDocument', () => {
  let app: INestApplication;
  beforeAll(async () => {
    app = await appWith(ThingsController);
  });
  afterAll(async () => {
    await app.close();
  });

  it('states the service, its server and its opaque bearer tokens, required everywhere', () => {
    const { paths, components, ...rest } = JSON.parse(
      JSON.stringify(createOpenApiDocument(app)),
    ) as OpenAPIObject;
    expect(rest).toEqual({
      openapi: '3.0.0',
      info: {
        title: 'Plant Store',
        description: [
          'A plant store with one operation that creates a plant.',
          '',
          'Every answer other than 200 carries an Error body whose `error` is the HTTP status.',
          'Beyond the statuses listed per operation, an unknown path answers 404 and another',
          'method on a path the service serves answers 405 with `Allow` (on /plants, `Allow: POST`).',
        ].join('\n'),
        version: '1.0.0',
        contact: {},
        license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
      },
      servers: [{ url: '/', description: 'this service' }],
      security: [{ bearerAuth: [] }],
      tags: [],
    });
    expect(components?.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer' },
    });
    expect(Object.keys(paths)).toEqual([
      '/things',
      '/things/by-name/{name}',
      '/things/a/b_c',
      '/things/{id}',
    ]);
  });

  it('names a handler’s further paths after their method and path, so that each operationId is unique', () => {
    const { paths } = createOpenApiDocument(app);
    const ids = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(
        ([method, operation]) =>
          `${method} ${path} ${(operation as { operationId?: string }).operationId}`,
      ),
    );
    expect(ids).toEqual([
      'get /things listThings',
      'post /things addThing',
      'post /things/by-name/{name} postThingsByNameName',
      'post /things/a/b_c postThingsABC',
      // Nest names an operation without one after its controller and handler.
      'delete /things/{id} ThingsController_remove',
    ]);
  });
});

describe('setupOpenApi', () => {
  let app: INestApplication;
  let url: string;
  let document: OpenAPIObject;
  beforeAll(async () => {
    app = await appWith(ThingsController);
    document = setupOpenApi(app);
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves the document it returns at /openapi.json and /openapi.yaml', async () => {
    const json = await fetch(`${url}/openapi.json`);
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual(JSON.parse(JSON.stringify(document)));
    expect(document.info.title).toBe('Plant Store');

    const yaml = await fetch(`${url}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^text\/yaml/);
    const text = await yaml.text();
    expect(text).toMatch(/^openapi: 3\.0\.0\n/);
    expect(text).toContain('\n  title: Plant Store\n');
  });

  it('serves Swagger UI at /docs, pointing at the document', async () => {
    const page = await fetch(`${url}/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="swagger-ui"></div>');
    const init = await fetch(`${url}/docs/swagger-ui-init.js`);
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('"title": "Plant Store"');
  });
});
