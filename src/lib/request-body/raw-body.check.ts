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

/** Whether a JSON parser keeps `request.rawBody`, asked of the parser itself with `{}`. */
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

/** A host JSON parser that drops raw bodies would round ids past 2^53: said at start, not by a 500. */
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
