import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors/api-error.js';

/** Reads at most `limit` bytes, else 413 at once; the front door decides the rest (early-answer.ts). */
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
