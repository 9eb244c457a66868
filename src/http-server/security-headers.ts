import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's defaults, but for upgrade-insecure-requests: an API on plain HTTP behind a TLS
 * proxy, whose Swagger UI on http://localhost that directive would break.
 */
export const SECURITY_HEADERS: HelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

type HeaderList = ReadonlyArray<readonly [name: string, value: string]>;

/** A response that only notes the headers set on it. */
function recordHeadersOf(middleware: RequestHandler): HeaderList {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: unknown) =>
      headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
    getHeader: (name: string) => headers.get(name),
  };
  let finished = false;
  middleware(
    {} as Parameters<RequestHandler>[0],
    recorder as unknown as Parameters<RequestHandler>[1],
    (error?: unknown) => {
      if (error !== undefined) throw error;
      finished = true;
    },
  );
  if (!finished) throw new Error('helmet did not set its headers at once');
  return [...headers];
}

function hasRequestDependentDirective(options: HelmetOptions): boolean {
  const policy = options.contentSecurityPolicy;
  if (typeof policy !== 'object' || policy.directives === undefined)
    return false;
  return Object.values(policy.directives).some(
    (value) =>
      typeof value === 'function' ||
      (Array.isArray(value) &&
        value.some((entry) => typeof entry === 'function')),
  );
}

/**
 * helmet's security headers for `options`, worked out once at start-up by running helmet
 * against a recording response, then set on every answer by one middleware. The same
 * headers as helmet's own chain of a dozen middleware per request, which cost 2-3% of the
 * CPU of a create (bench/RESULTS.md). Only for options that do not depend on the request:
 * a directive computed per request (a nonce) is refused here rather than frozen.
 */
export function securityHeaders(options: HelmetOptions): RequestHandler {
  if (hasRequestDependentDirective(options))
    throw new Error(
      'securityHeaders: a directive computed per request needs helmet() itself',
    );
  const headers = recordHeadersOf(helmet(options));
  return (_request: IncomingMessage, response: ServerResponse, next) => {
    for (const [name, value] of headers) response.setHeader(name, value);
    next();
  };
}
