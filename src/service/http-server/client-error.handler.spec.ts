import type { Socket } from 'node:net';
import { useListening } from '../../../test/support/node-server.js';
import { parseResponse } from '../../../test/support/raw-http.js';
import { answerClientError } from './client-error.handler.js';

describe('answerClientError: what Node’s parser refuses', () => {
  const door = useListening(
    (_request, response) => response.writeHead(204).end(),
    {
      prepare: (server) => server.on('clientError', answerClientError),
    },
  );

  async function refusalOf(request: string) {
    const connection = await door.open();
    connection.write(request);
    return parseResponse(await connection.closed);
  }

  it.each([
    ['a broken request line', 'NOT HTTP AT ALL\r\n\r\n', 400],
    [
      'headers past the size limit',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(32 * 1024)}\r\n\r\n`,
      431,
    ],
  ])(
    'answers %s with %i, the Error body and a close',
    async (_case, request, status) => {
      const answer = await refusalOf(request);
      expect(answer.status).toBe(status);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toMatchObject({ error: status });
    },
  );

  it('destroys a socket it can no longer write to, and writes nothing', () => {
    const socket = { writable: false, destroy: vi.fn(), write: vi.fn() };
    answerClientError(
      Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      socket as unknown as Socket,
    );
    expect(socket.destroy).toHaveBeenCalledOnce();
    expect(socket.write).not.toHaveBeenCalled();
  });
});
