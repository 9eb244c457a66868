import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors/api-error.js';

const UNIT_BYTES: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1024,
  mb: 1024 * 1024,
};

/** A body size: bytes, or with a unit (16384, 16kb, 1mb). */
export const BODY_LIMIT_FORMAT = /^(\d+)(b|kb|mb)?$/i;

export function isBodyLimit(limit: string): boolean {
  return BODY_LIMIT_FORMAT.test(limit);
}

/** A body limit ("16kb", "1mb", "16384", checked by isBodyLimit) in bytes; a kb is 1024 bytes. */
export function bodyLimitBytes(limit: string): number {
  const [, digits, unit = 'b'] = BODY_LIMIT_FORMAT.exec(limit) ?? [];
  return Number(digits) * UNIT_BYTES[unit.toLowerCase()];
}

/** The declared Content-Length, or undefined when the body is chunked or absent. */
export function declaredLength(request: IncomingMessage): number | undefined {
  const length = request.headers['content-length'];
  return length === undefined ? undefined : Number(length);
}

export function declaresBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined ||
    (length !== undefined && length !== '0')
  );
}

/**
 * Reads a request body of at most `limit` bytes. Past the limit it stops at once and
 * rejects with 413, whatever the client still sends: the service's front door decides what
 * becomes of the rest (src/service/http-server/early-answer.ts).
 */
export function readBody(
  request: IncomingMessage,
  limit: number,
  limitText: string,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onFailure);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        stop();
        reject(ApiError.payloadTooLarge(limitText));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks, received));
    };
    const onFailure = (): void => {
      stop();
      reject(
        ApiError.badRequest('The request body was cut off before its end.'),
      );
    };
    const onClose = (): void => {
      if (!request.complete) onFailure();
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onFailure);
    request.on('close', onClose);
  });
}

const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Node answers `Expect: 100-continue` with `100 Continue` as soon as the headers arrive,
 * before authentication, so a client would upload its body only to be told 401. With a
 * 'checkContinue' listener Node leaves that to us: the request is marked here and handled
 * as any other, and the body reader sends `100 Continue` once the token and headers are
 * accepted. An answer sent without it closes the connection (Node does so when 100 was
 * never sent).
 */
export function holdContinue(request: IncomingMessage): void {
  awaitingContinue.add(request);
}

/** Tells a client waiting on `Expect: 100-continue` to send its body, once. */
export function continueIfAwaited(
  request: IncomingMessage,
  response: ServerResponse,
): void {
  if (awaitingContinue.delete(request) && !response.headersSent) {
    response.writeContinue();
  }
}
