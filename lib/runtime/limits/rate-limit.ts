/**
 * Shared rate limits (`defineRateLimit`): a token bucket per name (and key), kept in DynamoDB so
 * every instance and queue that names it shares it (buckets.ts), and its arithmetic here, pure:
 * refill with additive recovery of the rate, multiplicative decrease on throttling (AIMD, the
 * rule TCP congestion control uses so that many senders converge on a fair share).
 */
import { JobError } from '../../core/errors.ts';

export { rateLimitConflicts } from '../../core/rate-limit-conflicts.ts';

import { shownValue } from '../../core/shown-value.ts';

/**
 * Longest time a bucket may take to refill from empty to full, in seconds (1 day): its item lives
 * one day after its latest write (`BUCKET_RECORD_TTL_SECONDS`, buckets.ts), and a bucket whose item
 * expired comes back full. A bucket that refills within that time loses nothing by expiring; a
 * slower one would grant a whole burst again after a quiet day, more than its rate.
 */
export const MAX_REFILL_SECONDS = 24 * 60 * 60;

/** Lowest `perSecond` (burst 1): one request per day, 1 / 86,400 ≈ 0.0000116 (see {@link MAX_REFILL_SECONDS}). */
export const MIN_PER_SECOND = 1 / MAX_REFILL_SECONDS;

/** The adaptive part of a rate limit: how it falls under throttling and recovers after. */
export interface AdaptiveRateOptions {
  /** Lowest rate the limit falls to, requests per second (> 0). @default perSecond / 100 */
  readonly minPerSecond?: number;
  /** The rate is multiplied by this on a throttling answer (0 < x < 1). @default 0.5 */
  readonly decreaseFactor?: number;
  /**
   * How fast the rate recovers while no throttling is reported: requests per second regained per
   * second (> 0). @default perSecond / 20 (from half to full in 10 s)
   */
  readonly recoveryPerSecond?: number;
  /**
   * One decrease per this many ms: the throttling answers of one overload episode, reported by
   * many runs at once, lower the rate once, not once each. @default 1000
   */
  readonly decreaseIntervalMs?: number;
}

/** Input of {@link defineRateLimit}. */
export interface RateLimitSpec {
  /** The limit's name: every job (on any queue) that names it shares its bucket. */
  readonly name: string;
  /**
   * Sustained rate, requests per second (0.5 = one every 2 s); at least {@link MIN_PER_SECOND}
   * (one a day), and at least `burst / 86,400` (the bucket refills within a day).
   */
  readonly perSecond: number;
  /** Most requests at once after a quiet period (the bucket's size, >= 1). @default perSecond, at least 1 */
  readonly burst?: number;
  /**
   * `false` for a fixed rate; otherwise the rate falls when a run reports throttling
   * (`permit.throttled()`) and recovers gradually. @default true, with the defaults of {@link AdaptiveRateOptions}
   */
  readonly adaptive?: boolean | AdaptiveRateOptions;
}

/** A validated rate limit, every default filled in. Pass it to `ctx.rateLimit` and to the job's `rateLimits`. */
export interface RateLimitDefinition {
  readonly kind: 'rate-limit';
  readonly name: string;
  readonly perSecond: number;
  readonly burst: number;
  /** Undefined when the limit is fixed. */
  readonly adaptive: Required<AdaptiveRateOptions> | undefined;
}

/**
 * Declares a shared rate limit. Declare it once (a module both the job and its queue import) and
 * list it in the job's `rateLimits`, so its JobQueue grants what waiting needs.
 *
 * @example
 * ```ts
 * import { defineJob, defineRateLimit } from 'sqs-jobs';
 * import { z } from 'zod';
 *
 * export const partnerApi = defineRateLimit({ name: 'partner-api', perSecond: 20, burst: 40 });
 *
 * export const syncOrder = defineJob({
 *   type: 'partner.sync-order',
 *   queue: 'partner',
 *   schema: z.object({ tenantId: z.string(), orderId: z.string() }),
 *   rateLimits: [partnerApi],
 *   async run({ tenantId, orderId }, ctx) {
 *     const permit = await ctx.rateLimit(partnerApi, { key: tenantId }); // waits for a token
 *     const response = await fetch(`https://partner.example/orders/${orderId}`, { signal: ctx.signal });
 *     if (response.status === 429 || response.status === 503) await permit.throttled(); // the fleet slows down
 *     return { status: response.status };
 *   },
 * });
 * ```
 *
 * @throws {JobError} when `name` is empty, `perSecond` is not > 0, `burst` < 1, the bucket takes
 *   more than a day to refill (`burst / perSecond` > 86,400 s: under one request a day, for
 *   example), or an adaptive option is out of range (all problems in one message).
 */
export function defineRateLimit(spec: RateLimitSpec): RateLimitDefinition {
  if (typeof spec !== 'object' || spec === null) {
    throw new JobError(`defineRateLimit needs { name, perSecond, burst?, adaptive? }, got ${String(spec)}`);
  }
  const problems: string[] = [];
  const known = new Set(['name', 'perSecond', 'burst', 'adaptive']);
  for (const field of Object.keys(spec)) {
    if (!known.has(field)) problems.push(`unknown field ${field} (known: ${[...known].join(', ')})`);
  }
  if (typeof spec.name !== 'string' || spec.name === '') problems.push('name must be a non-empty string');
  const positive = (value: unknown): value is number =>
    typeof value === 'number' && Number.isFinite(value) && value > 0;
  if (!positive(spec.perSecond))
    problems.push(`perSecond must be a number > 0, got ${shownValue(spec.perSecond)}`);
  const perSecond = positive(spec.perSecond) ? spec.perSecond : 1;
  const burst = spec.burst ?? Math.max(1, perSecond);
  if (!positive(burst) || burst < 1)
    problems.push(`burst must be a number >= 1, got ${shownValue(spec.burst)}`);
  else if (positive(spec.perSecond) && burst / perSecond > MAX_REFILL_SECONDS) {
    problems.push(
      `perSecond ${spec.perSecond} refills a burst of ${burst} in ${Math.round(burst / perSecond)} s, more than a day (${MAX_REFILL_SECONDS} s, how long a bucket is kept after its last use): use perSecond >= ${burst} / ${MAX_REFILL_SECONDS} (${burst === 1 ? 'one request a day' : `${burst} a day`}), or a smaller burst`,
    );
  }
  let adaptive: Required<AdaptiveRateOptions> | undefined;
  if (spec.adaptive !== false) {
    const a = spec.adaptive === true || spec.adaptive === undefined ? {} : spec.adaptive;
    if (typeof a !== 'object' || a === null) {
      problems.push(
        `adaptive must be a boolean or { minPerSecond?, decreaseFactor?, recoveryPerSecond?, decreaseIntervalMs? }`,
      );
    } else {
      adaptive = {
        minPerSecond: a.minPerSecond ?? perSecond / 100,
        decreaseFactor: a.decreaseFactor ?? 0.5,
        recoveryPerSecond: a.recoveryPerSecond ?? perSecond / 20,
        decreaseIntervalMs: a.decreaseIntervalMs ?? 1000,
      };
      if (!positive(adaptive.minPerSecond) || adaptive.minPerSecond > perSecond) {
        problems.push(
          `adaptive.minPerSecond must be > 0 and <= perSecond, got ${shownValue(adaptive.minPerSecond)}`,
        );
      }
      if (!positive(adaptive.decreaseFactor) || adaptive.decreaseFactor >= 1) {
        problems.push(
          `adaptive.decreaseFactor must be > 0 and < 1, got ${shownValue(adaptive.decreaseFactor)}`,
        );
      }
      if (!positive(adaptive.recoveryPerSecond)) {
        problems.push(
          `adaptive.recoveryPerSecond must be > 0, got ${shownValue(adaptive.recoveryPerSecond)}`,
        );
      }
      if (typeof adaptive.decreaseIntervalMs !== 'number' || !(adaptive.decreaseIntervalMs >= 0)) {
        problems.push(
          `adaptive.decreaseIntervalMs must be a number >= 0, got ${shownValue(adaptive.decreaseIntervalMs)}`,
        );
      }
    }
  }
  if (problems.length > 0) {
    throw new JobError(`invalid rate limit ${JSON.stringify(spec.name)}: ${problems.join('; ')}`);
  }
  return Object.freeze({ kind: 'rate-limit', name: spec.name, perSecond, burst, adaptive });
}

/** Whether a value is a {@link RateLimitDefinition} (made by {@link defineRateLimit}). */
export function isRateLimit(value: unknown): value is RateLimitDefinition {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'rate-limit';
}

/** The state of one bucket, as stored. */
export interface BucketState {
  /** Tokens in the bucket (fractional). */
  readonly tokens: number;
  /** The current rate, requests per second: `perSecond` unless lowered by throttling. */
  readonly rate: number;
  /** When `tokens` and `rate` were computed, epoch ms. */
  readonly updatedAtMs: number;
  /** The last decrease, epoch ms (0: never). */
  readonly decreasedAtMs: number;
}

/** A new bucket: full, at the configured rate. */
export function freshBucket(limit: RateLimitDefinition, now: number): BucketState {
  return { tokens: limit.burst, rate: limit.perSecond, updatedAtMs: now, decreasedAtMs: 0 };
}

/** What {@link takeAfterRefill} decided: the bucket to write, or how long until a token. */
export type RefillTake =
  | { readonly granted: true; readonly next: BucketState }
  | { readonly granted: false; readonly waitMs: number };

/**
 * A take from a bucket found without a whole token (or not found): `stored` refilled to `now`
 * (its rate cut to the declared one), then one token taken, or the wait until one. A bucket not
 * found is a new one, full. The decision of every limit store (DynamoDB, buckets.ts; memory, the
 * test kit); a store only adds how it writes `next` safely.
 */
export function takeAfterRefill(
  limit: RateLimitDefinition,
  stored: BucketState | undefined,
  now: number,
): RefillTake {
  if (stored === undefined) {
    const fresh = freshBucket(limit, now);
    return { granted: true, next: { ...fresh, tokens: fresh.tokens - 1 } };
  }
  const refilled = refill(limit, clampRate(limit, stored), now);
  if (refilled.tokens < 1) return { granted: false, waitMs: msUntilToken(refilled) };
  return { granted: true, next: { ...refilled, tokens: refilled.tokens - 1 } };
}

/**
 * The bucket after a throttling report at `now`: `stored` (or a new full bucket) refilled and
 * {@link decrease}d; undefined when nothing changes (a fixed limit, or the same overload episode).
 */
export function bucketAfterThrottle(
  limit: RateLimitDefinition,
  stored: BucketState | undefined,
  now: number,
): BucketState | undefined {
  if (limit.adaptive === undefined) return undefined;
  if (stored === undefined) return decrease(limit, freshBucket(limit, now), now);
  const refilled = refill(limit, clampRate(limit, stored), now);
  const lowered = decrease(limit, refilled, now);
  return lowered === refilled ? undefined : lowered;
}

/** A rate above the declared one (the limit was redeclared lower) is cut to it. */
export function clampRate(limit: RateLimitDefinition, state: BucketState): BucketState {
  return state.rate > limit.perSecond ? { ...state, rate: limit.perSecond } : state;
}

/** The bucket's capacity at a rate: the burst, scaled down with the rate (a lowered limit allows no full burst). */
export function capacityAt(limit: RateLimitDefinition, rate: number): number {
  return Math.max(1, (limit.burst * rate) / limit.perSecond);
}

/**
 * The bucket at `now`: the rate recovered additively (`recoveryPerSecond` per elapsed second, up
 * to `perSecond`), tokens refilled at the mean of the old and new rate (exact for a linear
 * ramp), capped by the capacity. A clock behind `updatedAtMs` counts as no time passed.
 */
export function refill(limit: RateLimitDefinition, state: BucketState, now: number): BucketState {
  const elapsedS = Math.max(0, now - state.updatedAtMs) / 1000;
  const rate =
    limit.adaptive === undefined
      ? limit.perSecond
      : Math.min(limit.perSecond, state.rate + limit.adaptive.recoveryPerSecond * elapsedS);
  const tokens = Math.min(capacityAt(limit, rate), state.tokens + (elapsedS * (state.rate + rate)) / 2);
  return { tokens, rate, updatedAtMs: Math.max(now, state.updatedAtMs), decreasedAtMs: state.decreasedAtMs };
}

/** Milliseconds until the refilled bucket `state` holds one token (0 when it does). */
export function msUntilToken(state: BucketState): number {
  return state.tokens >= 1 ? 0 : ((1 - state.tokens) / state.rate) * 1000;
}

/**
 * The bucket after a throttling answer at `now` (already refilled): the rate multiplied by
 * `decreaseFactor` (not below `minPerSecond`) and the bucket emptied, so every instance waits
 * at the new rate; unchanged when the last decrease is younger than `decreaseIntervalMs` (the
 * same overload episode) or the limit is fixed.
 */
export function decrease(limit: RateLimitDefinition, state: BucketState, now: number): BucketState {
  const adaptive = limit.adaptive;
  if (adaptive === undefined || now - state.decreasedAtMs < adaptive.decreaseIntervalMs) return state;
  const rate = Math.max(adaptive.minPerSecond, state.rate * adaptive.decreaseFactor);
  return { tokens: Math.min(state.tokens, 0), rate, updatedAtMs: state.updatedAtMs, decreasedAtMs: now };
}
