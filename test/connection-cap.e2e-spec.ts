import { eventually } from './support/poll.js';
import {
  isWholeResponse,
  parseResponse,
  RawConnection,
} from './support/raw-http.js';
import { startApp } from './support/app.js';
import { errorBody } from './support/http.js';

const OVERLOADED = 'The service is overloaded; retry later.';
const LIVE = 'GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/** A GET /health/live on a new connection: its answer, and the connection. */
async function probe(port: number) {
  const connection = await RawConnection.open(port);
  connection.write(LIVE);
  const text = await connection.until(isWholeResponse);
  return { connection, answer: parseResponse(text) };
}

describe('HTTP_MAX_CONNECTIONS', () => {
  it('answers a connection past the cap at once with the overload 503, Retry-After and Connection: close, and serves new ones again once one closes', async () => {
    const service = await startApp({ HTTP_MAX_CONNECTIONS: '2' });
    const opened: RawConnection[] = [];
    try {
      const port = Number(new URL(service.url).port);
      for (let index = 0; index < 2; index += 1) {
        const { connection, answer } = await probe(port);
        opened.push(connection);
        expect(answer.status).toBe(200);
      }

      const past = await RawConnection.open(port);
      opened.push(past);
      past.write(LIVE);
      // The whole answer, then the server's close: no reset (it reads what it was sent).
      const refused = parseResponse(await past.closed);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.headers.connection).toBe('close');
      expect(JSON.parse(refused.body)).toEqual(errorBody(503, OVERLOADED));

      opened[0].socket.destroy();
      // The server learns of the close when it reads it: polled, not waited for.
      const served = await eventually('a new connection served', async () => {
        const { connection, answer } = await probe(port);
        opened.push(connection);
        connection.socket.destroy();
        return answer.status === 200 ? answer : undefined;
      });
      expect(served.status).toBe(200);
    } finally {
      for (const connection of opened) connection.socket.destroy();
      await service.close();
    }
  });
});
