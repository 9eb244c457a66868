/** A JSON object, as a parser makes one: not null, not an array. The contract's bodies all are. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
