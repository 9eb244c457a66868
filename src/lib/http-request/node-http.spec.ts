import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { requestIdOf } from './request-id.js';
import { nodeRequestOf, nodeResponseOf } from './node-http.js';
import { routeLabel } from './route-label.js';

function nodeRequest(headers: Record<string, string> = {}): IncomingMessage {
  const request = new IncomingMessage(new Socket());
  request.headers = headers;
  return request;
}

describe("Node's objects under either adapter", () => {
  it("are Express's own request and response, and Fastify's `raw`", () => {
    const request = nodeRequest();
    const response = new ServerResponse(request);
    expect(nodeRequestOf(request)).toBe(request);
    expect(nodeRequestOf({ raw: request })).toBe(request);
    expect(nodeResponseOf(response)).toBe(response);
    expect(nodeResponseOf({ raw: response })).toBe(response);
  });

  it("give a request one id, whether asked through Fastify's wrapper or Node's object", () => {
    const request = nodeRequest({ 'x-request-id': 'abc-123' });
    expect(requestIdOf({ raw: request })).toBe('abc-123');
    const other = nodeRequest({ 'x-request-id': 'bad id with spaces' });
    const id = requestIdOf({ raw: other });
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdOf(other)).toBe(id);
  });

  it("label a request by the route either adapter matched, and 'unmatched' otherwise", () => {
    expect(routeLabel({ route: { path: '/plants' } })).toBe('/plants');
    expect(routeLabel({ routeOptions: { url: '/health/live' } })).toBe(
      '/health/live',
    );
    expect(routeLabel({ route: { path: '/{*path}' } })).toBe('unmatched');
    expect(routeLabel({ routeOptions: { url: undefined } })).toBe('unmatched');
    expect(routeLabel({ routeOptions: { url: '*' } })).toBe('unmatched');
    expect(routeLabel({})).toBe('unmatched');
  });
});
