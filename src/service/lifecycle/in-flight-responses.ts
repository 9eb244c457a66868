import type { ServerResponse } from 'node:http';

interface Entry {
  readonly response: ServerResponse;
  /** Where the entry sits in the list; updated when another entry takes its place. */
  index: number;
}

/** The responses not yet closed, for the drain; not a Set (docs/performance.md#what-bought-the-most-and-where-it-is-measured). */
export class InFlightResponses {
  private readonly entries: Entry[] = [];

  add(response: ServerResponse): void {
    const entry: Entry = { response, index: this.entries.length };
    this.entries.push(entry);
    response.once('close', () => this.remove(entry));
  }

  get size(): number {
    return this.entries.length;
  }

  /** The responses in flight now, in no particular order. */
  *[Symbol.iterator](): IterableIterator<ServerResponse> {
    // A copy: a response may close while the caller is still iterating.
    for (const { response } of this.entries.slice()) yield response;
  }

  private remove(entry: Entry): void {
    const last = this.entries.pop();
    if (last === undefined || last === entry) return;
    this.entries[entry.index] = last;
    last.index = entry.index;
  }
}
