import {
  Body,
  Controller,
  HttpStatus,
  type INestApplication,
  Post,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ApiBody, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { DEFAULT_MESSAGES } from '../errors/api-error.js';
import { ApiErrorResponses } from '../errors/api-error-responses.decorator.js';
import { AcceptsJson } from './accepts-json.decorator.js';
import { JsonBodyGuard } from './json-body.guard.js';
import { JsonBodyReader } from './json-body.reader.js';

@Controller('things')
class ThingsController {
  @Post()
  @AcceptsJson()
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    HttpStatus.UNAUTHORIZED,
    HttpStatus.SERVICE_UNAVAILABLE,
  )
  @ApiBody({ schema: { type: 'object' } })
  create(@Body() thing: { id: unknown }): object {
    return { id: String(thing.id), type: typeof thing.id };
  }
}

/** A host's route marked with the package's decorators, on a Nest application of its own. */
describe('@AcceptsJson() and @ApiErrorResponses() on a route', () => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [ThingsController],
      providers: [
        JsonBodyGuard,
        { provide: JsonBodyReader, useValue: new JsonBodyReader('1kb') },
      ],
    }).compile();
    app = moduleRef.createNestApplication({
      bodyParser: false,
      logger: false,
    });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('reads the JSON body into the handler, exactly', async () => {
    const response = await fetch(`${base}/things`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"id": 9007199254740993}',
    });
    expect(response.status).toBe(201);
    // The reader's exact parse: an integer past 2^53 keeps its digits.
    expect(await response.json()).toEqual({
      id: '9007199254740993',
      type: 'bigint',
    });
  });

  it('documents the route as taking JSON and the Error answers it gives, with their headers', () => {
    const document = SwaggerModule.createDocument(
      app,
      new DocumentBuilder().build(),
    );
    const operation = document.paths['/things'].post!;
    expect(Object.keys(operation.requestBody ?? {})).toContain('content');
    expect(
      Object.keys(
        (operation.requestBody as { content: Record<string, unknown> }).content,
      ),
    ).toEqual(['application/json']);
    const errorBody = { $ref: '#/components/schemas/Error' };
    expect(operation.responses).toMatchObject({
      '400': {
        description: DEFAULT_MESSAGES[400],
        content: { 'application/json': { schema: errorBody } },
      },
      '401': {
        description: DEFAULT_MESSAGES[401],
        headers: {
          'WWW-Authenticate': {
            description:
              'Bearer realm="plant-store", with error="invalid_token" when a token was sent',
            schema: { type: 'string' },
          },
        },
      },
      '503': {
        description: DEFAULT_MESSAGES[503],
        headers: {
          'Retry-After': {
            description: 'Seconds to wait before retrying',
            schema: { type: 'integer' },
          },
        },
      },
    });
    expect(
      (operation.responses['400'] as { headers?: unknown }).headers,
    ).toBeUndefined();
    expect(document.components?.schemas).toHaveProperty('Error');
    expect(
      (operation.responses['503'] as { content: Record<string, unknown> })
        .content['application/json'],
    ).toMatchObject({
      example: { error: 503, message: DEFAULT_MESSAGES[503] },
    });
  });
});
