import { isDocumentationPath } from './openapi.js';

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
