import {
  type OutgoingHttpHeaders,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { type ApiError, defaultMessage } from './api-error.js';
import { ErrorBody } from './error-body.dto.js';

/** What an answer needs of Fastify's reply (the package does not depend on Fastify). */
export interface ReplyLike {
  code(status: number): ReplyLike;
  headers(headers: object): ReplyLike;
  send(body: string): unknown;
}

/**
 * What becomes of the connection after the answer: 'close' when the request may carry a
 * body nobody will read (a client declaring a gigabyte would otherwise hold it), 'keep'
 * when the connection may carry the client's next request (the server decides, as for any
 * answer: a caller that answers before the body has the body read and discarded first).
 */
export type ConnectionAfterAnswer = 'close' | 'keep';

/**
 * The one builder of an Error answer: its status, its headers (the ApiError's own, such as
 * Retry-After, WWW-Authenticate or Allow, and the content headers) and the `{ error,
 * message }` body, as text. Every writer of an Error answer uses it: the exception filter,
 * the protocol checks and load shedding in front of the route, the handler of requests
 * Node's parser refuses, and the metrics port.
 *
 * Built once and written as often as needed where the same answer repeats: under overload
 * the same refusal goes out thousands of times a second, and building its HttpException
 * each time (a captured stack) was a fifth of a refusal's cost in a CPU profile.
 */
export class ErrorAnswer {
  readonly headers: Readonly<OutgoingHttpHeaders>;
  // A string, not a Buffer: Node then writes the head and the body in one call.
  readonly body: string;

  constructor(
    readonly status: number,
    message: string,
    headers: Readonly<Record<string, string>> = {},
    connection: ConnectionAfterAnswer = 'keep',
  ) {
    this.body = JSON.stringify(new ErrorBody(status, message));
    this.headers = {
      ...headers,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(this.body),
      ...(connection === 'close' ? { Connection: 'close' } : {}),
    };
  }

  static of(
    error: ApiError,
    connection: ConnectionAfterAnswer = 'keep',
  ): ErrorAnswer {
    return new ErrorAnswer(
      error.getStatus(),
      error.message,
      error.headers,
      connection,
    );
  }

  /** The catalogue's answer for a status. */
  static forStatus(
    status: number,
    connection: ConnectionAfterAnswer = 'keep',
  ): ErrorAnswer {
    return new ErrorAnswer(status, defaultMessage(status), {}, connection);
  }

  writeTo(response: ServerResponse): void {
    response.writeHead(this.status, this.headers);
    response.end(this.body);
  }

  /** Through Fastify's reply: with the headers its hooks put there (security, request id). */
  sendThrough(reply: ReplyLike): void {
    void reply.code(this.status).headers(this.headers).send(this.body);
  }

  /** The whole HTTP/1.1 response as text, for a socket that has no ServerResponse. */
  toRawResponse(): string {
    const head = Object.entries(this.headers)
      .map(([name, value]) => `${name}: ${String(value)}\r\n`)
      .join('');
    return `HTTP/1.1 ${this.status} ${STATUS_CODES[this.status] ?? ''}\r\n${head}\r\n${this.body}`;
  }
}
