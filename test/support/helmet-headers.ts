import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet from 'helmet';
import { SECURITY_HEADERS } from '../../src/service/http-server/security-headers.js';

/** What helmet's middleware, per request, sets on a Node response for SECURITY_HEADERS. */
export function headersHelmetSets(): Record<string, string> {
  const request = new IncomingMessage(new Socket());
  const response = new ServerResponse(request);
  response.setHeader('X-Powered-By', 'a framework');
  let passed = false;
  helmet(SECURITY_HEADERS)(request, response, (error?: unknown) => {
    if (error !== undefined) throw error as Error;
    passed = true;
  });
  if (!passed) throw new Error('helmet did not call next');
  return Object.fromEntries(
    Object.entries(response.getHeaders()).map(([name, value]) => [
      name,
      String(value),
    ]),
  );
}
