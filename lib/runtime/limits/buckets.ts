/**
 * Rate-limit buckets in DynamoDB (one item per limit name and key, `pk` =
 * `limitRecordKey('rate', name, key)`): shared by every instance and queue that names the limit.
 * Every change is a read-modify-write conditioned on the item's `version`, so two instances never
 * both spend the same token and a decrease is never lost.
 *
 * Each instance keeps the last state it saw per bucket and writes from it directly: that state is
 * optimistic (another instance can only have taken tokens or lowered the rate since), so a take
 * computed from it either is right or fails its condition, and only then is the item read.
 * Cost per granted take: one conditional PutItem when this instance was the last writer, else one
 * failed PutItem, one consistent GetItem and one PutItem. A throttling report: the same.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { limitRecordKey } from '../idempotency/keys.ts';
import {
  type BucketState,
  capacityAt,
  decrease,
  freshBucket,
  msUntilToken,
  type RateLimitDefinition,
  refill,
} from './rate-limit.ts';
import { type LimitTable, num, readNum } from './table.ts';

/** Rounds of conditional writes before a contended bucket answers "wait". */
const MAX_WRITE_ROUNDS = 6;
/** How long a bucket item lives after its latest write, in seconds (TTL `expiresAt`): 1 day. */
export const BUCKET_RECORD_TTL_SECONDS = 24 * 60 * 60;
/** Most buckets whose last state an instance keeps (LRU by insertion). */
const CACHED_BUCKETS = 1000;

/** Result of {@link RateBuckets.take}. */
export type TakeOutcome = { readonly granted: true } | { readonly granted: false; readonly waitMs: number };

/** A bucket as read, refilled to now (for operators and tests). */
export interface BucketView extends BucketState {
  readonly pk: string;
  /** Tokens the bucket holds at most at its current rate. */
  readonly capacity: number;
}

interface Cached {
  readonly state: BucketState;
  /** The item's version this state was read or written at; 0 = no item. */
  readonly version: number;
}

/** Rate buckets on one table. */
export class RateBuckets {
  readonly #table: LimitTable;
  readonly #now: () => number;
  readonly #cache = new Map<string, Cached>();

  constructor(table: LimitTable, now: () => number) {
    this.#table = table;
    this.#now = now;
  }

  /**
   * Takes one token of `limit` for `key`, or says how long until one is expected.
   * @throws {LimitStoreError} when DynamoDB fails.
   */
  take(limit: RateLimitDefinition, key: string): Promise<TakeOutcome> {
    return this.#change(limit, key, (state) => {
      if (state.tokens < 1) return { waitMs: msUntilToken(state) };
      return { next: { ...state, tokens: state.tokens - 1 } };
    });
  }

  /**
   * Reports a throttling answer (429, 503, a timeout) of what `limit` protects: the rate falls
   * ({@link decrease}) for every instance, at most once per `decreaseIntervalMs`. Nothing for a
   * fixed limit.
   * @throws {LimitStoreError} when DynamoDB fails.
   */
  async throttled(limit: RateLimitDefinition, key: string): Promise<void> {
    if (limit.adaptive === undefined) return;
    const now = this.#now();
    await this.#change(limit, key, (state) => {
      const next = decrease(limit, state, now);
      return next === state ? { waitMs: 0 } : { next };
    });
  }

  /** The bucket of a key refilled to now (one consistent GetItem). @throws {LimitStoreError} */
  async read(limit: RateLimitDefinition, key: string): Promise<BucketView> {
    const pk = limitRecordKey('rate', limit.name, key);
    const now = this.#now();
    const read = stateOf(await this.#table.get('read-bucket', pk), limit, now);
    const state = refill(limit, read.state, now);
    return { pk, ...state, capacity: capacityAt(limit, state.rate) };
  }

  /**
   * One read-modify-write of a bucket: `decide` gets the bucket refilled to now and answers the
   * state to write, or a wait (nothing written). Conditioned on the version the state came from.
   */
  async #change(
    limit: RateLimitDefinition,
    key: string,
    decide: (state: BucketState) => { readonly next: BucketState } | { readonly waitMs: number },
  ): Promise<TakeOutcome> {
    const pk = limitRecordKey('rate', limit.name, key);
    let known = this.#cache.get(pk);
    let fromCache = known !== undefined;
    let lastWaitMs = 0;
    for (let round = 0; round < MAX_WRITE_ROUNDS; round++) {
      const now = this.#now();
      if (known === undefined) {
        known = stateOf(await this.#table.get('take', pk), limit, now);
        fromCache = false;
      }
      const decided = decide(refill(limit, known.state, now));
      if ('waitMs' in decided) {
        // A cached state is optimistic: "no token" from it is true of the item too.
        this.#remember(pk, known);
        return { granted: false, waitMs: decided.waitMs };
      }
      const version = known.version + 1;
      const written = await this.#table.put('take', bucketItem(pk, limit, decided.next, version, now), {
        condition: known.version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
        values: known.version === 0 ? {} : { ':v': num(known.version) },
      });
      if (written) {
        this.#remember(pk, { state: decided.next, version });
        return { granted: true };
      }
      // Another instance wrote since: read the item and decide again.
      known = undefined;
      lastWaitMs = fromCache ? 0 : 1000 / Math.max(limit.perSecond, 1e-3);
    }
    // Lost every race: the bucket is being drained by others right now.
    return { granted: false, waitMs: lastWaitMs };
  }

  #remember(pk: string, cached: Cached): void {
    this.#cache.delete(pk);
    this.#cache.set(pk, cached);
    if (this.#cache.size > CACHED_BUCKETS) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
  }
}

function stateOf(
  item: Record<string, AttributeValue> | undefined,
  limit: RateLimitDefinition,
  now: number,
): Cached {
  const version = readNum(item, 'version');
  const tokens = readNum(item, 'tokens');
  const rate = readNum(item, 'rate');
  const updatedAtMs = readNum(item, 'updatedAtMs');
  if (version === undefined || tokens === undefined || rate === undefined || updatedAtMs === undefined) {
    // No item (or not one of ours): a full bucket. An unreadable item is overwritten only if
    // it still has no version, by the `attribute_not_exists(pk)` of a first write: never.
    return { state: freshBucket(limit, now), version: item === undefined ? 0 : (version ?? 0) };
  }
  // A rate above the declared one (the limit was redeclared lower) is cut to it.
  return {
    state: {
      tokens,
      rate: Math.min(rate, limit.perSecond),
      updatedAtMs,
      decreasedAtMs: readNum(item, 'decreasedAtMs') ?? 0,
    },
    version,
  };
}

function bucketItem(
  pk: string,
  limit: RateLimitDefinition,
  state: BucketState,
  version: number,
  now: number,
): Record<string, AttributeValue> {
  return {
    pk: { S: pk },
    recordType: { S: 'rate-bucket' },
    limitName: { S: limit.name },
    tokens: num(state.tokens),
    rate: num(state.rate),
    perSecond: num(limit.perSecond),
    burst: num(limit.burst),
    updatedAtMs: num(state.updatedAtMs),
    decreasedAtMs: num(state.decreasedAtMs),
    version: num(version),
    expiresAt: num(Math.floor(now / 1000) + BUCKET_RECORD_TTL_SECONDS),
  };
}
