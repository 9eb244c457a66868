import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export const OPENAPI_JSON_PATH = 'openapi.json';
export const SWAGGER_UI_PATH = 'docs';

const DESCRIPTION = [
  'A plant store with one operation that creates a plant.',
  '',
  'Every answer other than 200 carries an Error body whose `error` is the HTTP status.',
  'Beyond the statuses listed per operation, an unknown path answers 404 and another',
  'method on /plants answers 405 with `Allow: POST`.',
].join('\n');

/** The service's own OpenAPI document, generated from the controllers and DTOs. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Plant Store')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .setLicense('MIT', 'https://opensource.org/license/mit')
    .addBearerAuth(
      // Tokens are opaque: no bearerFormat (the builder would otherwise claim JWT).
      { type: 'http', scheme: 'bearer', bearerFormat: undefined },
      'bearerAuth',
    )
    .addSecurityRequirements('bearerAuth')
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** Serves the document at /openapi.json and Swagger UI at /docs, both without a token. */
export function setupOpenApi(app: INestApplication): OpenAPIObject {
  const document = createOpenApiDocument(app);
  SwaggerModule.setup(SWAGGER_UI_PATH, app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    yamlDocumentUrl: 'openapi.yaml',
  });
  return document;
}
