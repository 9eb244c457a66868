import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tokenVerdict } from './token-verdict.js';

/** A server that answers every request with the status its token names, and records the requests. */
async function answering(): Promise<{
  url: string;
  seen: {
    method?: string;
    url?: string;
    authorization?: string;
    body: string;
  }[];
  server: Server;
}> {
  const seen: {
    method?: string;
    url?: string;
    authorization?: string;
    body: string;
  }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({
        method: request.method,
        url: request.url,
        authorization: request.headers.authorization,
        body,
      });
      const status = Number(
        request.headers.authorization?.replace('Bearer status-', ''),
      );
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end('{"error":0,"message":"x"}');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, server };
}

describe('tokenVerdict', () => {
  it('reads 400 and 429 as accepted, 401 as refused, and any other answer as saying nothing', async () => {
    const { url, seen, server } = await answering();
    try {
      const verdicts = [];
      for (const status of [400, 429, 401, 503, 500, 200])
        verdicts.push(await tokenVerdict(url, `status-${status}`));
      expect(verdicts).toEqual([
        { accepted: true, status: 400 },
        { accepted: true, status: 429 },
        { accepted: false, status: 401 },
        { accepted: undefined, status: 503 },
        { accepted: undefined, status: 500 },
        { accepted: undefined, status: 200 },
      ]);
      // A create that cannot write: an empty body, with the token as a bearer.
      expect(seen[0]).toEqual({
        method: 'POST',
        url: '/plants',
        authorization: 'Bearer status-400',
        body: '{}',
      });
    } finally {
      server.close();
    }
  });
});
