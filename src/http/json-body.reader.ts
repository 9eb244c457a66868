import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { ApiError } from '../errors/api-error.js';
import { InvalidJsonError, parseExactJson } from './exact-json.js';
import { continueIfAwaited } from './expect-continue.js';
import {
  bodyLimitBytes,
  declaredLength,
  declaresBody,
  readBody,
} from './request-body.js';

const JSON_MEDIA_TYPE = 'application/json';

function isJsonMediaType(request: Request): boolean {
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
function isEncoded(request: Request): boolean {
  const encoding = request.headers['content-encoding'];
  return encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
}

/**
 * Reads and parses a JSON request body. It runs after the bearer guard (see
 * JsonBodyGuard), so a caller without a valid token learns nothing about the body
 * rules. Everything the headers alone can refuse (media type, encoding, a declared length
 * over the limit) is refused before a byte of the body is read, and before a client that
 * asked for `Expect: 100-continue` is told to send it.
 */
@Injectable()
export class JsonBodyReader {
  private readonly limit: string;
  private readonly limitBytes: number;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(@InjectEnvironment() env: Environment) {
    this.limit = env.BODY_LIMIT;
    this.limitBytes = bodyLimitBytes(env.BODY_LIMIT);
  }

  async read(request: Request, response: Response): Promise<object> {
    if (declaresBody(request) && !isJsonMediaType(request)) {
      throw ApiError.unsupportedMediaType();
    }
    if (isEncoded(request)) throw ApiError.unsupportedContentEncoding();
    if ((declaredLength(request) ?? 0) > this.limitBytes) {
      throw ApiError.payloadTooLarge(this.limit);
    }
    continueIfAwaited(request, response);
    const bytes = await readBody(request, this.limitBytes, this.limit);
    if (bytes.length === 0) {
      throw ApiError.badRequest(
        'The request body is empty; send a JSON object.',
      );
    }
    const document = this.parse(bytes);
    if (
      typeof document !== 'object' ||
      document === null ||
      Array.isArray(document)
    ) {
      throw ApiError.badRequest('The request body must be a JSON object.');
    }
    return document;
  }

  private parse(bytes: Buffer): unknown {
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
