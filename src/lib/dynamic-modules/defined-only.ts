/** The fields given a value: `{ limit: undefined }` means the default, as leaving it out does. */
export function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
