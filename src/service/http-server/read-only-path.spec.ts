import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isReadMethod, refusedOtherThanRead } from './read-only-path.js';

describe('read-only paths: GET and HEAD, and 405 with Allow for anything else', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (!refusedOtherThanRead(request, response)) response.end('read');
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('knows GET and HEAD as reads, and nothing else, nor no method', () => {
    expect(
      ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'get', '', undefined].map(
        isReadMethod,
      ),
    ).toEqual([true, true, false, false, false, false, false, false]);
  });

  it('lets a read through, and answers any other method 405 with Allow and the Error body', async () => {
    const read = await fetch(url);
    expect([read.status, await read.text()]).toEqual([200, 'read']);
    for (const method of ['POST', 'DELETE', 'OPTIONS']) {
      const refused = await fetch(url, { method });
      expect({
        method,
        status: refused.status,
        allow: refused.headers.get('allow'),
        body: await refused.json(),
      }).toEqual({
        method,
        status: 405,
        allow: 'GET, HEAD',
        body: { error: 405, message: expect.any(String) as string },
      });
    }
  });
});
