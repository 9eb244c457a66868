/** A managed token as the store holds it: who it belongs to, and until when. */
export interface ActiveToken {
  readonly name: string;
  /** Epoch milliseconds, or null for no expiry. */
  readonly expiresAt: number | null;
}

/** An active row of api_tokens, as read from the database. */
export interface ActiveTokenRow {
  name: string;
  tokenHash: Buffer;
  expiresAt: Date | null;
}

/** The key a token is held under: the base64 of its SHA-256 (token-hash.ts). */
export function tokenKey(hash: Buffer): string {
  return hash.toString('base64');
}

/** The active managed tokens by hash, at most `maxTokens`; past that `complete` is false until a reload fits. */
export class ActiveTokens {
  private readonly byKey = new Map<string, ActiveToken>();
  // The key each name is held under: a notification names the row that changed.
  private readonly keyByName = new Map<string, string>();
  private overflowed = false;

  constructor(private readonly maxTokens: number) {}

  /** Everything at once from a full read (oldest first); `more`: the table had more active rows. */
  replaceAll(rows: readonly ActiveTokenRow[], more: boolean): void {
    this.byKey.clear();
    this.keyByName.clear();
    this.overflowed = more;
    for (const row of rows) this.add(row);
  }

  /** Each of `names` forgotten, then held again if among the active `rows`. */
  applyChanges(names: Iterable<string>, rows: readonly ActiveTokenRow[]): void {
    for (const name of names) {
      const key = this.keyByName.get(name);
      if (key === undefined) continue;
      this.keyByName.delete(name);
      this.byKey.delete(key);
    }
    for (const row of rows) this.add(row);
  }

  /** The token held under `key`, if any; expired ones are not answered. */
  find(key: string, now: number = Date.now()): ActiveToken | undefined {
    const token = this.byKey.get(key);
    if (token === undefined) return undefined;
    return token.expiresAt !== null && token.expiresAt <= now
      ? undefined
      : token;
  }

  /** False once the table held more active tokens than the bound. */
  get complete(): boolean {
    return !this.overflowed;
  }

  get size(): number {
    return this.byKey.size;
  }

  private add(row: ActiveTokenRow): void {
    if (this.byKey.size >= this.maxTokens) {
      this.overflowed = true;
      return;
    }
    const key = tokenKey(row.tokenHash);
    this.byKey.set(key, {
      name: row.name,
      expiresAt: row.expiresAt?.getTime() ?? null,
    });
    this.keyByName.set(row.name, key);
  }
}
