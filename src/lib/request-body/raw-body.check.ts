import { Readable } from 'node:stream';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

type Middleware = (
  request: unknown,
  response: unknown,
  next: (error?: unknown) => void,
) => void;

interface RouterLayer {
  readonly handle?: Middleware;
}

/** body-parser's JSON middleware, by the name it gives its function. */
const JSON_PARSER = 'jsonParser';

/**
 * Whether a JSON body parser keeps the raw body (Nest's `rawBody: true` has it store
 * `request.rawBody`): asked of the parser itself, with a body of `{}` that never reaches
 * a route, the host's or ours.
 */
function keepsRawBody(parser: Middleware): Promise<boolean> {
  const request = Object.assign(Readable.from([Buffer.from('{}')]), {
    method: 'POST',
    url: '/',
    headers: { 'content-type': 'application/json', 'content-length': '2' },
  });
  return new Promise((resolve, reject) =>
    parser(request, {}, (error) =>
      error === undefined
        ? resolve(Buffer.isBuffer((request as { rawBody?: unknown }).rawBody))
        : reject(error as Error),
    ),
  );
}

/**
 * A JSON body an application's parser read with JSON.parse has lost every digit of an id
 * past 2^53, and the raw text is gone unless the application keeps it (`rawBody: true`).
 * Without it, a create with such an id could only fail (issue 30): so a host whose JSON
 * parser does not keep raw bodies is told at start, not by a 500 at the first large id.
 * A host with the parser off (`bodyParser: false`, as the service) has nothing to check.
 */
@Injectable()
export class RawBodyCheck implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  async onModuleInit(): Promise<void> {
    const app = this.adapterHost.httpAdapter?.getInstance?.() as
      { router?: { stack?: RouterLayer[] } } | undefined;
    const parsers = (app?.router?.stack ?? [])
      .map((layer) => layer.handle)
      .filter((handle) => handle?.name === JSON_PARSER) as Middleware[];
    for (const parser of parsers) {
      if (!(await keepsRawBody(parser)))
        throw new Error(
          'PlantsModule: this application parses JSON bodies without keeping them raw, so ' +
            'a plant id beyond 2^53 would arrive rounded. Create it with ' +
            'NestFactory.create(AppModule, { rawBody: true }), or with bodyParser: false.',
        );
    }
  }
}
