import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApp } from './support/app.js';
import { errorBody } from './support/http.js';
import { parseResponse, RawConnection } from './support/raw-http.js';

describe('HTTP server timeouts', () => {
  it('sets its server timeouts on purpose', async () => {
    const service = await startApp();
    try {
      const server = service.app.getHttpServer() as Server;
      expect(server.headersTimeout).toBe(10_000);
      expect(server.requestTimeout).toBe(30_000);
      expect(server.keepAliveTimeout).toBe(65_000);
    } finally {
      await service.close();
    }
  });

  it('cuts off a client that trickles its headers, with a 408 Error body', async () => {
    const slow = await startApp({ HTTP_HEADERS_TIMEOUT_MS: '1000' });
    try {
      const connection = await RawConnection.open(
        Number(new URL(slow.url).port),
      );
      connection.write('POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      let open = true;
      void connection.closed.then(() => (open = false));
      // The trickler's own pace (one header line every 250 ms, never the blank line that
      // ends them), bounded at 40 lines: 10 s, ten times the timeout under test.
      for (let line = 0; line < 40 && open; line += 1) {
        connection.write(`X-Slow-${line}: x\r\n`);
        await sleep(250);
      }
      expect(open).toBe(false);
      const answer = parseResponse(await connection.closed);
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual(
        errorBody(408, 'The request took too long to arrive.'),
      );
    } finally {
      await slow.close();
    }
  });
});
