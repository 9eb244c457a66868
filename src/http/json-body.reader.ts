import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { raw } from 'express';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { ApiError } from '../errors/api-error.js';
import { InvalidJsonError, parseExactJson } from './exact-json.js';

const JSON_MEDIA_TYPE = 'application/json';

function declaresBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined ||
    (length !== undefined && length !== '0')
  );
}

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

/** body-parser's errors carry a `type`; the two a client can act on get their own words. */
function translateReadError(error: unknown, limit: string): unknown {
  const type =
    typeof error === 'object' && error !== null
      ? (error as { type?: unknown }).type
      : undefined;
  if (type === 'entity.too.large') return ApiError.payloadTooLarge(limit);
  if (type === 'encoding.unsupported')
    return ApiError.unsupportedContentEncoding();
  return error;
}

/**
 * Reads and parses a JSON request body. It runs after the bearer guard (see JsonBodyGuard),
 * so a caller without a valid token learns nothing about the body rules.
 */
@Injectable()
export class JsonBodyReader {
  private readonly limit: string;
  private readonly readRaw: ReturnType<typeof raw>;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(@InjectEnvironment() env: Environment) {
    this.limit = env.BODY_LIMIT;
    // inflate: false, a compressed body is refused (415) instead of being expanded.
    this.readRaw = raw({ type: () => true, limit: this.limit, inflate: false });
  }

  async read(request: Request, response: Response): Promise<object> {
    if (declaresBody(request) && !isJsonMediaType(request)) {
      throw ApiError.unsupportedMediaType();
    }
    const bytes = await this.readBytes(request, response);
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

  private readBytes(request: Request, response: Response): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.readRaw(request, response, (error?: unknown) => {
        if (error === undefined) {
          resolve(
            Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          );
        } else {
          reject(translateReadError(error, this.limit));
        }
      });
    });
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
