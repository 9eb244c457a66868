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

/**
 * The request as Nest hands it to a guard: Node's (Express) or Fastify's wrapper around it
 * (`raw`). `body` and `rawBody` are where an application body parser left what it read.
 */
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

/**
 * An integer JSON.parse may have rounded: a host's body parser read it, and only the
 * bytes could say what was sent.
 */
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

/**
 * What JSON.parse made of a body, as the exact parser would have made it where it can
 * tell: an integer within ±(2^53 - 1) is exact in a double, so it becomes the bigint the
 * exact parser gives. A larger one may have been rounded, so the request fails rather than
 * store another id (a 500: the exception filter logs the message, which names the fix).
 * Only the body's own fields: nothing deeper is ever stored.
 */
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
 * Reads and parses a JSON request body. Everything the headers alone can refuse (media
 * type, encoding, a declared length over the limit) is refused before a byte of the body
 * is read, and before a client that asked for `Expect: 100-continue` is told to send it.
 *
 * In the service (no application body parser) it reads the body itself, after the bearer
 * guard (see JsonBodyGuard), so a caller without a valid token learns nothing about the
 * body rules, and integers are parsed exactly. In a host that keeps Nest's body parser the
 * body has been read before any guard: it then takes the bytes Nest keeps with
 * `rawBody: true` (same rules, exact ids), or else what JSON.parse made of them
 * (exactFromParsed).
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
