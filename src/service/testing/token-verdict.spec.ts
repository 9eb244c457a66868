import { listening } from '../../../test/support/node-server.js';
import { tokenVerdict } from './token-verdict.js';

interface SeenRequest {
  method?: string;
  url?: string;
  authorization?: string;
  contentType?: string;
  body: string;
}

describe('tokenVerdict', () => {
  it('reads 400 and 429 as accepted, 401 as refused, and any other answer as saying nothing', async () => {
    const seen: SeenRequest[] = [];
    // Answers each request with the status its token names.
    const service = await listening((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const { method, url, headers } = request;
        seen.push({
          method,
          url,
          authorization: headers.authorization,
          contentType: headers['content-type'],
          body,
        });
        const status = Number(headers.authorization?.slice('Bearer '.length));
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end('{"error":0,"message":"x"}');
      });
    });
    try {
      const verdicts = [];
      for (const status of [400, 429, 401, 503, 500, 200])
        verdicts.push(await tokenVerdict(service.url, String(status)));
      expect(verdicts).toEqual([
        { accepted: true, status: 400 },
        { accepted: true, status: 429 },
        { accepted: false, status: 401 },
        { accepted: undefined, status: 503 },
        { accepted: undefined, status: 500 },
        { accepted: undefined, status: 200 },
      ]);
      // A create that cannot write: an empty JSON body, with the token as a bearer.
      expect(seen[0]).toEqual({
        method: 'POST',
        url: '/plants',
        authorization: 'Bearer 400',
        contentType: 'application/json',
        body: '{}',
      });
    } finally {
      await service.close();
    }
  });
});
