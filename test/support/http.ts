// HTTP for the specs: a request and its whole answer, and the Error body every failure has.
import { get } from 'node:http';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export async function send(
  url: string,
  { method = 'GET', headers = {}, body }: SendOptions = {},
): Promise<Answer> {
  const response = await fetch(url, {
    method,
    headers,
    body,
    redirect: 'manual',
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: parsed,
  };
}

/** The Error body of a create refused because the database cannot commit. */
export const DATABASE_503 = {
  error: 503,
  message: 'The database is unavailable; retry later.',
};

/** The whole Error body the service must answer with for a status. */
export function errorBody(
  status: number,
  message: unknown = expect.any(String),
): unknown {
  return { error: status, message };
}

/**
 * The answer is the Error body of `status`, with `message` when given: asserted as one
 * value, so a wrong status shows the body that came with it.
 */
export function expectErrorAnswer(
  answer: Pick<Answer, 'status' | 'body'>,
  status: number,
  message?: unknown,
): void {
  expect({ status: answer.status, body: answer.body }).toEqual({
    status,
    body: errorBody(status, message),
  });
}

/**
 * A GET on a connection of its own: with node:cluster each new connection may reach
 * another worker, where fetch's pool would keep asking the same one.
 */
export function getOnNewConnection(
  url: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text }),
      );
    }).on('error', reject);
  });
}
