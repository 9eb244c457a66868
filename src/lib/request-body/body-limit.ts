import type { IncomingMessage } from 'node:http';

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
