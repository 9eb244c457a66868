import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export const OPENAPI_JSON_PATH = 'openapi.json';
export const SWAGGER_UI_PATH = 'docs';
const OPENAPI_YAML_PATH = 'openapi.yaml';

const DESCRIPTION = [
  'A plant store with one operation that creates a plant.',
  '',
  'Every answer other than 200 carries an Error body whose `error` is the HTTP status.',
  'Beyond the statuses listed per operation, an unknown path answers 404 and another',
  'method on a path the service serves answers 405 with `Allow` (on /plants, `Allow: POST`).',
].join('\n');

type Operations = OpenAPIObject['paths'][string];

function camelCaseOf(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return [method, ...words]
    .map((word, index) =>
      index === 0 ? word : word[0].toUpperCase() + word.slice(1),
    )
    .join('');
}

/** One operationId per path: further paths of a handler are named after method and path. */
function makeOperationIdsUnique(document: OpenAPIObject): void {
  const seen = new Set<string>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const id = (operation as Operations['get'])?.operationId;
      if (id === undefined) continue;
      if (seen.has(id)) {
        (operation as { operationId: string }).operationId = camelCaseOf(
          method,
          path,
        );
      }
      seen.add((operation as { operationId: string }).operationId);
    }
  }
}

/** The service's own OpenAPI document, generated from the controllers and DTOs. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Plant Store')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .setLicense('MIT', 'https://opensource.org/license/mit')
    // Relative: the service itself, wherever the document is fetched from.
    .addServer('/', 'this service')
    .addBearerAuth(
      // Tokens are opaque: no bearerFormat (the builder would otherwise claim JWT).
      { type: 'http', scheme: 'bearer', bearerFormat: undefined },
      'bearerAuth',
    )
    .addSecurityRequirements('bearerAuth')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  makeOperationIdsUnique(document);
  return document;
}

/** Serves the document at /openapi.json and Swagger UI at /docs, both without a token. */
export function setupOpenApi(app: INestApplication): OpenAPIObject {
  const document = createOpenApiDocument(app);
  SwaggerModule.setup(SWAGGER_UI_PATH, app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    yamlDocumentUrl: OPENAPI_YAML_PATH,
  });
  return document;
}

// Swagger UI's assets lie below its path; the documents are files of their own.
const DOCUMENTATION_PATH = new RegExp(
  `^/(?:${OPENAPI_JSON_PATH}|${OPENAPI_YAML_PATH}|${SWAGGER_UI_PATH})(?:[/?]|$)`.replaceAll(
    '.',
    '\\.',
  ),
  'i',
);

/** Whether a target is the documentation's, served for GET only (other methods: 405 from the front door). */
export function isDocumentationPath(url: string): boolean {
  return DOCUMENTATION_PATH.test(url);
}
