// New plants for the specs: ids that show any rounding, NewPlant bodies, POST /plants.
import { eventually } from './poll.js';
import { type Answer, send } from './http.js';
import { TOKEN } from './tokens.js';

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
