import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { RequestHandler } from 'express';
import helmet from 'helmet';
import { SECURITY_HEADERS, securityHeaders } from './security-headers.js';

function headersAfter(middleware: RequestHandler): Record<string, unknown> {
  const request = new IncomingMessage(new Socket());
  const response = new ServerResponse(request);
  let calledNext = false;
  middleware(
    request as Parameters<RequestHandler>[0],
    response as Parameters<RequestHandler>[1],
    () => (calledNext = true),
  );
  expect(calledNext).toBe(true);
  return response.getHeaders();
}

describe('securityHeaders', () => {
  it("sets exactly the headers helmet's own middleware sets, with the same values", () => {
    const expected = headersAfter(helmet(SECURITY_HEADERS));
    expect(Object.keys(expected).length).toBeGreaterThan(10);
    expect(headersAfter(securityHeaders(SECURITY_HEADERS))).toEqual(expected);
  });

  it('follows the options it is given', () => {
    const headers = headersAfter(
      securityHeaders({
        contentSecurityPolicy: SECURITY_HEADERS.contentSecurityPolicy,
        xFrameOptions: { action: 'deny' },
      }),
    );
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['content-security-policy']).not.toContain(
      'upgrade-insecure-requests',
    );
  });

  it('refuses a directive computed per request rather than freezing it', () => {
    expect(() =>
      securityHeaders({
        contentSecurityPolicy: {
          directives: { scriptSrc: ["'self'", () => "'nonce-x'"] },
        },
      }),
    ).toThrow(/per request/);
  });
});
