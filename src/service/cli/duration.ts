const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** "90d", "12h", "30m" in milliseconds; null for anything else. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,6})([dhm])$/.exec(text.trim());
  if (match === null) return null;
  const amount = Number(match[1]);
  return amount > 0 ? amount * UNIT_MS[match[2] as keyof typeof UNIT_MS] : null;
}
