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

/** 'close' when an unread body may follow (a declared gigabyte); 'keep' when the server may read it out. */
export type ConnectionAfterAnswer = 'close' | 'keep';

/** The one builder of an Error answer, built once, written often (docs/performance.md#small-costs-paid-per-request). */
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
