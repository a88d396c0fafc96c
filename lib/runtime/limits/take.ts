/**
 * `ctx.rateLimit`: takes a token of a shared rate limit for a run, waiting inside the run while
 * the wait is short compared with the time the run has left, else throwing {@link LimitWait} so
 * the record waits outside Lambda without spending an attempt.
 */

import { shownValue } from '../../core/shown-value.ts';
import type { RateLimitOptions, RateLimitPermit } from '../job.ts';
import type { RateBuckets } from './buckets.ts';
import { LimitWait, RateLimitUsageError } from './errors.ts';
import type { RateLimitDefinition } from './rate-limit.ts';

/** A wait inside the run may take at most this share of the run's remaining time. */
export const IN_RUN_WAIT_SHARE = 0.1;
/** Bucket key of a limit taken without a key: the limit's one bucket. */
export const SINGLE_BUCKET_KEY = '*';

/** What a take needs from its run. */
export interface TakeContext {
  readonly jobType: string;
  /** The limits the job declared (`rateLimits`). */
  readonly declared: readonly RateLimitDefinition[] | undefined;
  /** Undefined when the worker has no limit store. The test kit passes buckets that always grant. */
  readonly buckets: Pick<RateBuckets, 'take' | 'throttled'> | undefined;
  /** Milliseconds the run has left (its time limit or the Lambda deadline). */
  readonly remainingMs: () => number;
  readonly signal: AbortSignal;
  /** Adds waited milliseconds to the `JobLimitWaitMs` metric. */
  readonly onWaited: (ms: number) => void;
  /** Sleeps `ms` or until `signal` aborts (then rejects with its reason). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Takes one token; see `JobContext.rateLimit`.
 * @throws {RateLimitUsageError} when the limit is not declared or there is no store.
 * @throws {LimitWait} when the wait is too long for the run.
 * @throws {LimitStoreError} when DynamoDB fails; the signal's reason when the run is aborted.
 */
export async function takeRateLimit(
  context: TakeContext,
  limit: RateLimitDefinition,
  options: RateLimitOptions | undefined,
): Promise<RateLimitPermit> {
  if (!context.declared?.some((declared) => declared.name === limit?.name)) {
    throw new RateLimitUsageError(
      `job ${context.jobType} took rate limit ${JSON.stringify(limit?.name)} that is not in its rateLimits: add it to defineJob({ rateLimits: [...] })`,
    );
  }
  const buckets = context.buckets;
  if (buckets === undefined) {
    throw new RateLimitUsageError(
      `job ${context.jobType} took rate limit ${limit.name} but the worker has no limit store: give the worker an idempotency table (JOBS_IDEMPOTENCY_TABLE), where the buckets are kept`,
    );
  }
  const key = options?.key ?? SINGLE_BUCKET_KEY;
  if (typeof key !== 'string' || key === '') {
    throw new RateLimitUsageError(
      `ctx.rateLimit(${limit.name}): key must be a non-empty string, got ${shownValue(key)}`,
    );
  }
  const sleep = context.sleep ?? abortableSleep;
  for (;;) {
    context.signal.throwIfAborted();
    const taken = await buckets.take(limit, key);
    if (taken.granted) return { throttled: () => buckets.throttled(limit, key) };
    if (taken.waitMs > context.remainingMs() * IN_RUN_WAIT_SHARE) {
      throw new LimitWait(limit.name, key, taken.waitMs);
    }
    // At least a millisecond, so a wait estimate of 0 (a lost race) cannot spin.
    const ms = Math.max(1, Math.ceil(taken.waitMs));
    await sleep(ms, context.signal);
    context.onWaited(ms);
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
