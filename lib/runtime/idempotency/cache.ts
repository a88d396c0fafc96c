/**
 * A bounded in-memory cache of completed keys, per warm worker: a duplicate of a job this
 * instance already saw complete is answered without a DynamoDB call.
 */

/** What the cache keeps about a completed key. */
export interface CompletedEntry {
  readonly payloadHash: string;
  /** The stored result as JSON text (parsed anew on each hit, so callers never share objects). */
  readonly resultJson: string | undefined;
  readonly resultStored: boolean;
  /** The record's TTL, epoch seconds: the entry is dropped from then on. */
  readonly expiresAt: number;
}

/** Results larger than this (UTF-8 bytes of JSON) are not cached: memory stays under `size` × 4 KiB. */
export const MAX_CACHED_RESULT_BYTES = 4096;

/** Least-recently-used map of record key → completed entry, at most `size` entries. */
export class CompletedKeyCache {
  readonly #size: number;
  readonly #entries = new Map<string, CompletedEntry>();

  /** @param size maximum number of entries; 0 turns the cache off. */
  constructor(size: number) {
    this.#size = size;
  }

  /** Number of entries held. */
  get length(): number {
    return this.#entries.size;
  }

  /** The entry of `pk` if present and not expired at `nowMs`; a hit becomes most recent. */
  get(pk: string, nowMs: number): CompletedEntry | undefined {
    const entry = this.#entries.get(pk);
    if (!entry) return undefined;
    this.#entries.delete(pk);
    if (entry.expiresAt <= Math.floor(nowMs / 1000)) return undefined;
    this.#entries.set(pk, entry);
    return entry;
  }

  /** Adds or refreshes an entry, evicting the least recently used beyond `size`. */
  set(pk: string, entry: CompletedEntry): void {
    if (this.#size <= 0) return;
    if (
      entry.resultJson !== undefined &&
      Buffer.byteLength(entry.resultJson, 'utf8') > MAX_CACHED_RESULT_BYTES
    ) {
      return;
    }
    this.#entries.delete(pk);
    this.#entries.set(pk, entry);
    while (this.#entries.size > this.#size) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  /** Drops every entry. */
  clear(): void {
    this.#entries.clear();
  }
}
