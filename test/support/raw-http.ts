import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses one complete HTTP/1.1 response with a Content-Length body. */
export function parseResponse(text: string): RawResponse {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [
        line.slice(0, colon).trim().toLowerCase(),
        line.slice(colon + 1).trim(),
      ];
    }),
  );
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: rest.join('\r\n\r\n'),
  };
}

/** A socket and everything the server sent on it until it closed. */
export class RawConnection {
  private received = '';
  readonly closed: Promise<string>;

  private constructor(readonly socket: Socket) {
    socket.on(
      'data',
      (chunk: Buffer) => (this.received += chunk.toString('utf8')),
    );
    this.closed = new Promise((resolve) => {
      socket.on('close', () => resolve(this.received));
      socket.on('error', () => undefined);
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        resolve(new RawConnection(socket)),
      );
      socket.once('error', reject);
    });
  }

  get text(): string {
    return this.received;
  }

  write(text: string): void {
    this.socket.write(text);
  }
}

/** Resolves to the connect error code once nothing accepts connections on the port. */
export function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
  });
}
