/**
 * Rate-limit buckets in DynamoDB (one item per limit name and key, `pk` =
 * `limitRecordKey('rate', name, key)`): shared by every instance and queue that names the limit.
 *
 * A lazy token bucket. Taking a token is one atomic UpdateItem, `tokens = tokens - 1` on
 * condition `tokens >= 1`, with no read: DynamoDB applies concurrent takes one after the other,
 * so many instances take from one bucket without losing races to each other. Only when the bucket
 * is empty is it refilled: a consistent GetItem, then one UpdateItem that credits the time since
 * the last refill at the current rate (rate-limit.ts, `refill`), conditioned on the refill time and
 * the last decrease read, so of several instances refilling at once exactly one credits the time.
 * A throttling report (adaptive limits) is a GetItem and one UpdateItem under the same condition:
 * the rate falls once per `decreaseIntervalMs` for the whole fleet, and a refill computed before
 * it can never write the old rate back.
 *
 * Cost per granted token: one UpdateItem; per refill (when the bucket ran dry) one GetItem and one
 * UpdateItem more, and the first token of a new bucket one PutItem. DynamoDB's own per-item
 * limit (about 1,000 writes per second per partition key) bounds one bucket's rate: see
 * docs/cost.md.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { limitRecordKey } from '../idempotency/keys.ts';
import {
  type BucketState,
  bucketAfterThrottle,
  capacityAt,
  clampRate,
  freshBucket,
  type RateLimitDefinition,
  refill,
  takeAfterRefill,
} from './rate-limit.ts';
import { type LimitTable, num, readNum } from './table.ts';

/** Rounds of (take, refill) before a contended bucket answers "wait". */
const MAX_ROUNDS = 6;
/** How long a bucket item lives after its latest write, in seconds (TTL `expiresAt`): 1 day. */
export const BUCKET_RECORD_TTL_SECONDS = 24 * 60 * 60;

/** Result of {@link RateBuckets.take}. */
export type TakeOutcome = { readonly granted: true } | { readonly granted: false; readonly waitMs: number };

/** A bucket as read, refilled to now (for operators and tests). */
export interface BucketView extends BucketState {
  readonly pk: string;
  /** Tokens the bucket holds at most at its current rate. */
  readonly capacity: number;
}

/** Rate buckets on one table. */
export class RateBuckets {
  readonly #table: LimitTable;
  readonly #now: () => number;

  constructor(table: LimitTable, now: () => number) {
    this.#table = table;
    this.#now = now;
  }

  /**
   * Takes one token of `limit` for `key`, or says how long until one is expected.
   * @throws {LimitStoreError} when DynamoDB fails.
   */
  async take(limit: RateLimitDefinition, key: string): Promise<TakeOutcome> {
    const pk = limitRecordKey('rate', limit.name, key);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const ttl = this.#ttl();
      // Race prevented: the test and the decrement are one atomic conditional update.
      const taken = await this.#table.update('take', pk, {
        update: 'SET tokens = tokens - :one, expiresAt = :ttl',
        condition: 'tokens >= :one',
        values: { ':one': num(1), ':ttl': num(ttl) },
      });
      if (taken) return { granted: true };
      // Empty (or no bucket yet): refill from the time elapsed, taking this token with it.
      const now = this.#now();
      const stored = stateOf(await this.#table.get('take', pk));
      const refilled = takeAfterRefill(limit, stored, now);
      if (!refilled.granted) return refilled;
      if (stored === undefined) {
        const created = await this.#table.put('take', bucketItem(pk, limit, refilled.next, ttl), {
          condition: 'attribute_not_exists(pk)',
        });
        if (created) return { granted: true };
        continue;
      }
      const written = await this.#writeAfterRead(pk, limit, stored, refilled.next);
      if (written) return { granted: true };
      // Another instance refilled (or decreased) first: its tokens are taken on the next round.
    }
    // Lost every round: others are draining the bucket right now.
    return { granted: false, waitMs: 1000 / limit.perSecond };
  }

  /**
   * Reports a throttling answer (429, 503, a timeout) of what `limit` protects: the rate falls
   * ({@link decrease}) for every instance, at most once per `decreaseIntervalMs`. Nothing for a
   * fixed limit.
   * @throws {LimitStoreError} when DynamoDB fails.
   */
  async throttled(limit: RateLimitDefinition, key: string): Promise<void> {
    if (limit.adaptive === undefined) return;
    const pk = limitRecordKey('rate', limit.name, key);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const stored = stateOf(await this.#table.get('throttled', pk));
      const lowered = bucketAfterThrottle(limit, stored, this.#now());
      // Decreased within the interval already (by any instance): this report is the same episode.
      if (lowered === undefined) return;
      if (stored === undefined) {
        const created = await this.#table.put('throttled', bucketItem(pk, limit, lowered, this.#ttl()), {
          condition: 'attribute_not_exists(pk)',
        });
        if (created) return;
        continue;
      }
      if (await this.#writeAfterRead(pk, limit, stored, lowered)) return;
    }
  }

  /** The bucket of a key refilled to now (one consistent GetItem). @throws {LimitStoreError} */
  async read(limit: RateLimitDefinition, key: string): Promise<BucketView> {
    const pk = limitRecordKey('rate', limit.name, key);
    const now = this.#now();
    const stored = stateOf(await this.#table.get('read-bucket', pk));
    const state = refill(
      limit,
      stored === undefined ? freshBucket(limit, now) : clampRate(limit, stored),
      now,
    );
    return { pk, ...state, capacity: capacityAt(limit, state.rate) };
  }

  /**
   * Writes `next` over the bucket read as `read`. Race prevented: conditioned on the refill time
   * and the last decrease that were read, so a refill is credited once, and a decrease is never
   * overwritten by a refill computed before it (nor the other way round). Takes in between only
   * lowered `tokens`, which `next` was computed without: at most the tokens they took are
   * credited twice, never a rate.
   */
  #writeAfterRead(
    pk: string,
    limit: RateLimitDefinition,
    read: BucketState,
    next: BucketState,
  ): Promise<boolean> {
    return this.#table.update('refill', pk, {
      update:
        'SET tokens = :tokens, rate = :rate, updatedAtMs = :updated, decreasedAtMs = :decreased, perSecond = :perSecond, burst = :burst, expiresAt = :ttl',
      condition: 'updatedAtMs = :readUpdated AND decreasedAtMs = :readDecreased',
      values: {
        ':tokens': num(next.tokens),
        ':rate': num(next.rate),
        ':updated': num(next.updatedAtMs),
        ':decreased': num(next.decreasedAtMs),
        ':perSecond': num(limit.perSecond),
        ':burst': num(limit.burst),
        ':ttl': num(this.#ttl()),
        ':readUpdated': num(read.updatedAtMs),
        ':readDecreased': num(read.decreasedAtMs),
      },
    });
  }

  #ttl(): number {
    return Math.floor(this.#now() / 1000) + BUCKET_RECORD_TTL_SECONDS;
  }
}

/** The bucket an item holds; undefined when there is none (or it is not a bucket). */
function stateOf(item: Record<string, AttributeValue> | undefined): BucketState | undefined {
  const tokens = readNum(item, 'tokens');
  const rate = readNum(item, 'rate');
  const updatedAtMs = readNum(item, 'updatedAtMs');
  const decreasedAtMs = readNum(item, 'decreasedAtMs');
  if (
    tokens === undefined ||
    rate === undefined ||
    updatedAtMs === undefined ||
    decreasedAtMs === undefined
  ) {
    return undefined;
  }
  return { tokens, rate, updatedAtMs, decreasedAtMs };
}

function bucketItem(
  pk: string,
  limit: RateLimitDefinition,
  state: BucketState,
  ttl: number,
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
    expiresAt: num(ttl),
  };
}
