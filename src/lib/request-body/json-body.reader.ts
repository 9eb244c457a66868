import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeRequestOf } from '../http-request/node-http.js';
import { ApiError } from '../errors/api-error.js';
import {
  InvalidJsonError,
  isJsonObject,
  parseExactJson,
} from './exact-json.js';
import { bodyLimitBytes, declaredLength, declaresBody } from './body-limit.js';
import { continueIfAwaited } from './expect-continue.js';
import { readBody } from './read-body.js';

const JSON_MEDIA_TYPE = 'application/json';

/** The request as a guard gets it (Node's, or Fastify's `raw` wrapper), with any parser's `body`/`rawBody`. */
export type FrameworkRequest = (IncomingMessage | { raw: IncomingMessage }) & {
  body?: unknown;
  rawBody?: unknown;
};

function isJsonMediaType(request: IncomingMessage): boolean {
  const contentType = request.headers['content-type'];
  if (contentType === undefined) return false;
  const [mediaType, ...parameters] = contentType.split(';');
  if (mediaType.trim().toLowerCase() !== JSON_MEDIA_TYPE) return false;
  // RFC 8259 section 8.1: JSON is UTF-8; any other declared charset is refused.
  return parameters.every((parameter) => {
    const [name, value = ''] = parameter.split('=');
    return (
      name.trim().toLowerCase() !== 'charset' ||
      value.trim().replace(/"/g, '').toLowerCase() === 'utf-8'
    );
  });
}

/** A compressed body is refused (415) rather than expanded: the limit is on what is sent. */
function isEncoded(request: IncomingMessage): boolean {
  const encoding = request.headers['content-encoding'];
  return encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
}

/** An integer JSON.parse may have rounded: only the bytes could say what was sent. */
class InexactIntegerError extends Error {
  override readonly name = 'InexactIntegerError';
  constructor() {
    super(
      "The request body was parsed by the application's JSON body parser (JSON.parse), " +
        'which rounds integers beyond 2^53, and its bytes were not kept. Create the ' +
        'application with { rawBody: true } (every other route stays as it was) so that ' +
        'the plant route re-reads the exact bytes; see docs/using-the-modules.md.',
    );
  }
}

/** A JSON.parse result as the exact parser would give it; an unsafe integer fails (a 500 naming the fix). */
function exactFromParsed(document: unknown): unknown {
  if (typeof document !== 'object' || document === null) return document;
  if (Array.isArray(document)) return document;
  const exact: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) {
    if (typeof value === 'number' && Number.isInteger(value)) {
      if (!Number.isSafeInteger(value)) throw new InexactIntegerError();
      exact[key] = BigInt(value);
    } else {
      exact[key] = value;
    }
  }
  return exact;
}

/**
 * Reads and parses a JSON body, refusing what the headers can before a byte or 100 Continue;
 * behind an application parser it takes `rawBody`, or else its result (exactFromParsed).
 */
export class JsonBodyReader {
  private readonly limitBytes: number;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(private readonly limit: string) {
    this.limitBytes = bodyLimitBytes(limit);
  }

  async read(
    from: FrameworkRequest,
    response: ServerResponse,
  ): Promise<object> {
    const request = nodeRequestOf(from);
    if (declaresBody(request) && !isJsonMediaType(request)) {
      throw ApiError.unsupportedMediaType();
    }
    if (isEncoded(request)) throw ApiError.unsupportedContentEncoding();
    if ((declaredLength(request) ?? 0) > this.limitBytes) {
      throw ApiError.payloadTooLarge(this.limit);
    }
    const document = request.readableEnded
      ? this.readByTheApplication(from)
      : this.parse(await this.readOwn(request, response));
    if (!isJsonObject(document)) throw ApiError.notAJsonObject();
    return document;
  }

  private async readOwn(
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<Buffer> {
    continueIfAwaited(request, response);
    return readBody(request, this.limitBytes, this.limit);
  }

  /** The body an application body parser read before this route's guards ran. */
  private readByTheApplication(request: FrameworkRequest): unknown {
    const { rawBody } = request;
    if (Buffer.isBuffer(rawBody)) {
      if (rawBody.length > this.limitBytes)
        throw ApiError.payloadTooLarge(this.limit);
      return this.parse(rawBody);
    }
    const parsed: unknown = request.body;
    if (parsed === undefined) {
      // Read by something that kept neither the bytes nor a document: nothing to go on.
      throw new Error(
        'The request body was read by another body parser, which kept nothing of it.',
      );
    }
    return exactFromParsed(parsed);
  }

  private parse(bytes: Buffer): unknown {
    if (bytes.length === 0) {
      throw ApiError.badRequest(
        'The request body is empty; send a JSON object.',
      );
    }
    try {
      return parseExactJson(this.utf8.decode(bytes));
    } catch (error) {
      if (error instanceof InvalidJsonError)
        throw ApiError.badRequest(error.message);
      if (error instanceof TypeError) {
        throw ApiError.badRequest('The request body is not valid UTF-8.');
      }
      throw error;
    }
  }
}
