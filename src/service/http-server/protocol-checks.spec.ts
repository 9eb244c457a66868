import type { IncomingMessage, ServerResponse } from 'node:http';
import { useListening } from '../../../test/support/node-server.js';
import {
  refuseExpectation,
  refuseUnknownMethod,
  refuseWithoutHost,
} from './protocol-checks.js';
import { isReadMethod, refusedOtherThanRead } from './read-only-path.js';

/** The checks in the front door's order; a request they let through gets 204. */
function frontDoorChecks(request: IncomingMessage, response: ServerResponse) {
  if (refuseWithoutHost(request, response)) return;
  if (refuseUnknownMethod(request, response)) return;
  if (request.url === '/read-only' && refusedOtherThanRead(request, response))
    return;
  response.writeHead(204).end();
}

describe('the protocol checks on Node’s request and response', () => {
  const door = useListening(frontDoorChecks, {
    prepare: (server) => server.on('checkExpectation', refuseExpectation),
  });

  /** One request written as it is, on a connection of its own, and its answer. */
  async function ask(request: string) {
    return (await door.open()).ask(request);
  }

  it('answers an HTTP/1.1 request without Host with 400, the Error body and a close', async () => {
    const answer = await ask('GET / HTTP/1.1\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({
      error: 400,
      message: 'An HTTP/1.1 request must carry a Host header.',
    });
  });

  it('lets an HTTP/1.0 request without Host through, and an HTTP/1.1 one with Host', async () => {
    expect((await ask('GET / HTTP/1.0\r\n\r\n')).status).toBe(204);
    expect((await ask('GET / HTTP/1.1\r\nHost: x\r\n\r\n')).status).toBe(204);
  });

  it('answers an expectation other than 100-continue with 417 and the Error body, Host first', async () => {
    const refused = await ask(
      'POST / HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nContent-Length: 0\r\n\r\n',
    );
    expect(refused.status).toBe(417);
    expect(refused.headers.connection).toBe('close');
    expect(JSON.parse(refused.body)).toEqual({
      error: 417,
      message: 'Only the expectation 100-continue is supported.',
    });
    const withoutHost = await ask(
      'POST / HTTP/1.1\r\nExpect: something-else\r\nContent-Length: 0\r\n\r\n',
    );
    expect(withoutHost.status).toBe(400);
  });

  it.each(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])(
    'lets %s through, a method Nest can route',
    async (method) => {
      expect(
        (
          await ask(
            `${method} / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`,
          )
        ).status,
      ).toBe(204);
    },
  );

  it.each(['TRACE', 'PURGE', 'REPORT'])(
    'answers %s, which no Nest route can have, with 501 and the Error body',
    async (method) => {
      const answer = await ask(`${method} / HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(answer.status).toBe(501);
      expect(JSON.parse(answer.body)).toMatchObject({ error: 501 });
    },
  );

  it('answers anything but GET or HEAD on a read-only path with 405 and Allow', async () => {
    for (const method of ['GET', 'HEAD'])
      expect(
        (await ask(`${method} /read-only HTTP/1.1\r\nHost: x\r\n\r\n`)).status,
      ).toBe(204);
    const answer = await ask(
      'DELETE /read-only HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n',
    );
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
    expect(JSON.parse(answer.body)).toMatchObject({ error: 405 });
  });

  it('counts GET and HEAD, and only those, as read methods', () => {
    expect(['GET', 'HEAD', 'POST', 'get', undefined].map(isReadMethod)).toEqual(
      [true, true, false, false, false],
    );
  });
});
