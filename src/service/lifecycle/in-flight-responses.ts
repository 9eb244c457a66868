import type { ServerResponse } from 'node:http';

interface Entry {
  readonly response: ServerResponse;
  /** Where the entry sits in the list; updated when another entry takes its place. */
  index: number;
}

/**
 * The responses not yet closed, for the drain to mark `Connection: close`.
 *
 * Not a Set, on purpose. A Set that gains and loses an entry per request rebuilds its
 * table every few requests, and V8 links each table it replaced to the new one (for live
 * iterators). Once one table of that chain reaches the old generation, scavenges keep every
 * later table alive through it, and with them every response in flight when each table was
 * built, until the next full collection: under steady load the service promoted about
 * 0.8 MB per scavenge, ran a full collection every 2 s, and its open-loop p99 was 3 to 4
 * times what it is without (bench/RESULTS.md, phase 7). An array that swaps the last entry
 * into a removed one's place holds only what is in flight, and forgets it on removal.
 */
export class InFlightResponses {
  private readonly entries: Entry[] = [];

  /** Tracks `response` until it closes. */
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
