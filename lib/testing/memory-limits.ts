/**
 * The flow-control store in memory, for running a real worker (`createWorker`) whose jobs declare
 * `concurrency` or `rateLimits` in a unit test, without DynamoDB. It keeps the DynamoDB store's
 * state (each key's slot holders with their expiries, each bucket's tokens, rate and times) and
 * decides with the DynamoDB store's own rules (lib/runtime/limits/: `liveHolders` for which
 * holders still count, `takeAfterRefill` / `bucketAfterThrottle` and the token-bucket arithmetic
 * for rate limits), so a test sees what production does: a key at its limit makes the record
 * wait without spending an attempt, an empty bucket makes it wait as long as the rate says, a
 * throttling report lowers the rate. In one process every write is atomic, so the conditional
 * writes of the DynamoDB store have no counterpart here. What it does not model: DynamoDB's
 * failures, sharing between processes, and the items' TTL.
 */

import { describeValue, isPlainObject, unknownKeyProblems } from '../client/option-keys.ts';
import { limitRecordKey } from '../runtime/idempotency/keys.ts';
import { IDEMPOTENCY_DEFAULTS } from '../runtime/idempotency/options.ts';
import { randomToken } from '../runtime/idempotency/record.ts';
import type { BucketView, TakeOutcome } from '../runtime/limits/buckets.ts';
import {
  type BucketState,
  bucketAfterThrottle,
  capacityAt,
  clampRate,
  freshBucket,
  type RateLimitDefinition,
  refill,
  takeAfterRefill,
} from '../runtime/limits/rate-limit.ts';
import {
  liveHolders,
  type SlotHolders,
  type SlotOutcome,
  type SlotRequest,
} from '../runtime/limits/slots.ts';
import type { LimitStorePort } from '../runtime/limits/store.ts';

/** Options of {@link MemoryLimitStore}; defaults are the DynamoDB store's. */
export interface MemoryLimitStoreOptions {
  /** Clock, epoch milliseconds (slot expiries, bucket refills). Share it with the worker's `now`. @default Date.now */
  readonly now?: () => number;
  /** Clock-skew allowance before a slot holder counts as expired, ms. @default 1000 */
  readonly leaseMarginMs?: number;
}

/** Concurrency slots in memory: at most `limit` live holders per name and key. */
export class MemorySlots {
  readonly #holders = new Map<string, Map<string, number>>();
  readonly #limits = new Map<string, number>();
  readonly #now: () => number;
  readonly #marginMs: number;

  constructor(now: () => number, marginMs: number) {
    this.#now = now;
    this.#marginMs = marginMs;
  }

  /** Takes a slot of `request.key`, or says the key is full (as `ConcurrencySlots.acquire`). */
  async acquire(request: SlotRequest): Promise<SlotOutcome> {
    const pk = limitRecordKey('concurrency', request.name, request.key);
    // Expired holders (crashed runs) are pruned, as the DynamoDB store's acquisition does.
    const live = liveHolders(this.#holders.get(pk) ?? new Map(), this.#now(), this.#marginMs);
    this.#limits.set(pk, request.limit);
    if (live.size >= request.limit) {
      this.#holders.set(pk, live);
      return { status: 'full', holders: live.size, nextExpiryMs: Math.min(...live.values()) };
    }
    const token = randomToken();
    live.set(token, request.expiresAtMs);
    this.#holders.set(pk, live);
    return {
      status: 'acquired',
      slot: {
        release: async () => {
          this.#holders.get(pk)?.delete(token);
        },
      },
    };
  }

  /** The holders of a key, expired ones included (as `ConcurrencySlots.read`). */
  async read(name: string, key: string): Promise<SlotHolders> {
    const pk = limitRecordKey('concurrency', name, key);
    return { pk, holders: new Map(this.#holders.get(pk)), limit: this.#limits.get(pk) };
  }
}

/** Rate buckets in memory, one per limit name and key. */
export class MemoryBuckets {
  readonly #buckets = new Map<string, BucketState>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Takes one token, or says how long until one (as `RateBuckets.take`). */
  async take(limit: RateLimitDefinition, key: string): Promise<TakeOutcome> {
    const pk = limitRecordKey('rate', limit.name, key);
    const stored = this.#buckets.get(pk);
    // A whole token left: taken without a refill, as the DynamoDB store's conditional decrement.
    if (stored !== undefined && stored.tokens >= 1) {
      this.#buckets.set(pk, { ...stored, tokens: stored.tokens - 1 });
      return { granted: true };
    }
    const taken = takeAfterRefill(limit, stored, this.#now());
    if (!taken.granted) return taken;
    this.#buckets.set(pk, taken.next);
    return { granted: true };
  }

  /** Reports throttling: the rate falls, once per `decreaseIntervalMs` (as `RateBuckets.throttled`). */
  async throttled(limit: RateLimitDefinition, key: string): Promise<void> {
    const pk = limitRecordKey('rate', limit.name, key);
    const lowered = bucketAfterThrottle(limit, this.#buckets.get(pk), this.#now());
    if (lowered !== undefined) this.#buckets.set(pk, lowered);
  }

  /** The bucket of a key refilled to now (as `RateBuckets.read`). */
  async read(limit: RateLimitDefinition, key: string): Promise<BucketView> {
    const pk = limitRecordKey('rate', limit.name, key);
    const now = this.#now();
    const stored = this.#buckets.get(pk);
    const state = refill(
      limit,
      stored === undefined ? freshBucket(limit, now) : clampRate(limit, stored),
      now,
    );
    return { pk, ...state, capacity: capacityAt(limit, state.rate) };
  }
}

/**
 * Concurrency slots and rate buckets in memory: pass it as `createWorker({ limits: new
 * MemoryLimitStore() })`. One instance is one table: workers given the same instance share their
 * limits, as workers on one idempotency table do.
 *
 * @example
 * ```ts
 * import { createWorker, defineJob, defineRateLimit } from 'sqs-jobs';
 * import { jobRecord, lambdaContext, MemoryIdempotencyStore, MemoryLimitStore, sqsEvent } from 'sqs-jobs/testing';
 * import { z } from 'zod';
 *
 * const partnerApi = defineRateLimit({ name: 'partner-api', perSecond: 1, burst: 1, adaptive: false });
 * const sync = defineJob({
 *   type: 'partner.sync',
 *   queue: 'partner',
 *   schema: z.object({ orderId: z.string() }),
 *   rateLimits: [partnerApi],
 *   async run(_data, ctx) {
 *     await ctx.rateLimit(partnerApi);
 *   },
 * });
 * const limits = new MemoryLimitStore();
 * const handler = createWorker({
 *   jobs: [sync],
 *   idempotency: new MemoryIdempotencyStore(),
 *   limits,
 *   queueName: 'partner',
 *   queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/partner',
 *   dlqUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/partner-dlq',
 * });
 * await handler(sqsEvent([jobRecord(sync, { orderId: 'o-1' })]), lambdaContext());
 * const bucket = await limits.buckets.read(partnerApi, '*'); // the token the run took
 * ```
 */
export class MemoryLimitStore implements LimitStorePort {
  readonly slots: MemorySlots;
  readonly buckets: MemoryBuckets;

  /**
   * @throws {TypeError} when `options` is not an object, has a key other than `now` and
   *   `leaseMarginMs`, or `now` is not a function.
   * @throws {RangeError} when `now()` does not return a finite number of epoch milliseconds (a NaN
   *   clock would turn every limit off: no holder would ever count), or `leaseMarginMs` is not a
   *   finite number ≥ 0. A clock that returns one later throws the same RangeError where it is read.
   */
  constructor(options: MemoryLimitStoreOptions = {}) {
    const now = checkedClock(options);
    this.slots = new MemorySlots(now, options.leaseMarginMs ?? IDEMPOTENCY_DEFAULTS.leaseMarginMs);
    this.buckets = new MemoryBuckets(now);
  }
}

const OPTION_KEYS = ['now', 'leaseMarginMs'] as const;

/** Checks `MemoryLimitStore`'s options; returns the clock, which checks each reading too. */
function checkedClock(options: unknown): () => number {
  if (!isPlainObject(options)) {
    throw new TypeError(
      `MemoryLimitStore options must be an object { now?: () => epoch ms, leaseMarginMs?: number ≥ 0 } (or nothing), got ${describeValue(options)}`,
    );
  }
  const unknown = unknownKeyProblems(options, OPTION_KEYS, 'MemoryLimitStore options');
  if (unknown.length > 0) throw new TypeError(unknown.join('; '));
  const { now = Date.now, leaseMarginMs } = options;
  if (typeof now !== 'function') {
    throw new TypeError(
      `MemoryLimitStore options.now must be a function returning epoch milliseconds (e.g. () => clock.ms), got ${describeValue(now)}`,
    );
  }
  if (
    leaseMarginMs !== undefined &&
    !(typeof leaseMarginMs === 'number' && Number.isFinite(leaseMarginMs) && leaseMarginMs >= 0)
  ) {
    throw new RangeError(
      `MemoryLimitStore options.leaseMarginMs must be a finite number of milliseconds ≥ 0, got ${describeValue(leaseMarginMs)}`,
    );
  }
  const clock = (): number => {
    const ms: unknown = now();
    // NaN compares false with everything: no holder would count and no bucket would empty.
    if (typeof ms !== 'number' || !Number.isFinite(ms)) {
      throw new RangeError(
        `MemoryLimitStore options.now must return a finite number of epoch milliseconds, got ${describeValue(ms)}`,
      );
    }
    return ms;
  };
  clock();
  return clock;
}
