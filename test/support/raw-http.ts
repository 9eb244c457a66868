// HTTP/1.1 by hand, for the specs that check the protocol itself: any bytes written as they
// are (a broken request line, a body past its length, a half-sent upload), and everything
// the server does in return, its closing the connection included. The open loops' client
// (test-kit/http-client.mjs) is another job: a keep-alive pool that sends well-formed
// requests cheaply and only reads their answers.
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

/** Whether `text` holds a whole response: its head and as many body bytes as it declares. */
export function isWholeResponse(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  return (
    length !== null &&
    Buffer.byteLength(text.slice(end + 4)) >= Number(length[1])
  );
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

  /**
   * Resolves with what was received once `done` holds for it, while the socket stays open
   * on this side; rejects when the server closes first or after `timeoutMs`.
   */
  until(done: (text: string) => boolean, timeoutMs = 10_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done(this.received)) return;
        finish();
        resolve(this.received);
      };
      const onClose = (): void => {
        check();
        finish();
        reject(new Error(`closed before expected; got ${this.received}`));
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `nothing expected in ${timeoutMs} ms; got ${this.received}`,
          ),
        );
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.socket.off('data', check);
        this.socket.off('close', onClose);
      };
      this.socket.on('data', check);
      this.socket.on('close', onClose);
      check();
    });
  }

  /** Writes `request` and resolves to the response it gets (a 204 carries no length). */
  async ask(request: string): Promise<RawResponse> {
    this.write(request);
    return parseResponse(
      await this.until(
        (text) => isWholeResponse(text) || text.startsWith('HTTP/1.1 204'),
      ),
    );
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

/** Raw connections to one service that a test opens; closeAll() (in afterEach) ends them. */
export class RawConnections {
  private readonly opened: RawConnection[] = [];

  constructor(private readonly port: () => number) {}

  async open(): Promise<RawConnection> {
    const connection = await RawConnection.open(this.port());
    this.opened.push(connection);
    return connection;
  }

  closeAll(): void {
    for (const connection of this.opened.splice(0)) connection.socket.destroy();
  }
}
