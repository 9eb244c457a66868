import { eventually } from '../../test-kit/poll.js';
import { TOKEN } from './tokens.js';

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

/** POST /plants with a JSON text body and, unless told otherwise, a valid token. */
export function postPlant(
  baseUrl: string,
  json: string,
  {
    token = TOKEN,
    headers = {},
  }: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return send(`${baseUrl}/plants`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: json,
  });
}

/** The whole Error body the service must answer with for a status. */
export function errorBody(
  status: number,
  message: unknown = expect.any(String),
): unknown {
  return { error: status, message };
}

let counter = 0n;
/** An id above 2^53, so that any rounding on the way to the database shows. */
export function uniqueId(): bigint {
  counter += 1n;
  return (
    2n ** 60n +
    BigInt(process.pid) * 2n ** 32n +
    BigInt(Date.now() % 1_000_000) * 1000n +
    counter
  );
}

/** A NewPlant as JSON text, the id written exactly. */
export function newPlantJson(id: bigint, name: string, tag?: string): string {
  const tagPart = tag === undefined ? '' : `, "tag": ${JSON.stringify(tag)}`;
  return `{"id": ${id}, "name": ${JSON.stringify(name)}${tagPart}}`;
}

/**
 * Waits until a create with `token` is answered `status` (a token change reaches the
 * service through a notification: polled with a deadline, never raced).
 */
export async function untilTokenAnswered(
  baseUrl: string,
  token: string,
  status: number,
  what: string,
): Promise<void> {
  await eventually(what, async () =>
    (await postPlant(baseUrl, newPlantJson(uniqueId(), 'Fern'), { token }))
      .status === status
      ? true
      : undefined,
  );
}
