/**
 * Retry policy and exponential backoff with full jitter.
 *
 * Full jitter: delay = random(0, min(cap, base * 2^(attempt-1))), from the AWS Architecture
 * Blog "Exponential Backoff And Jitter" (2015). The cap may not exceed 12 hours, the maximum
 * SQS visibility timeout (ChangeMessageVisibility API reference).
 */
import { JobError } from './errors.ts';

/** Maximum visibility timeout SQS accepts, in seconds (12 hours). */
export const MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;

/** How a job is retried after a transient failure. */
export interface RetryPolicy {
  /** Total runs allowed, the first included (1 = never retried). Integer 1–100. @default 5 */
  readonly maxAttempts: number;
  /** Backoff base in seconds: the upper bound of the first retry's delay. @default 2 */
  readonly baseDelaySeconds: number;
  /** Upper bound of any retry's delay, in seconds; at most 43,200 (12 h). @default 900 */
  readonly maxDelaySeconds: number;
}

/** Defaults of {@link RetryPolicy}; defined here only. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 5,
  baseDelaySeconds: 2,
  maxDelaySeconds: 900,
});

/**
 * Fills a partial policy with defaults (fields absent or undefined) and checks it.
 * @throws {JobError} listing every invalid field.
 */
export function resolveRetryPolicy(partial: Partial<RetryPolicy> | undefined, jobType = 'job'): RetryPolicy {
  // A field given as undefined (e.g. from optional config) takes its default, like a missing one.
  const given = Object.fromEntries(Object.entries(partial ?? {}).filter(([, value]) => value !== undefined));
  const problems: string[] = [];
  if (partial !== undefined && (typeof partial !== 'object' || partial === null)) {
    problems.push(
      `retry must be an object { maxAttempts, baseDelaySeconds, maxDelaySeconds }, got ${partial}`,
    );
  }
  for (const field of Object.keys(given)) {
    // A typo (maxAtempts) would otherwise be kept silently while the default applies.
    if (!(field in DEFAULT_RETRY_POLICY)) {
      problems.push(`unknown field ${field} (known: ${Object.keys(DEFAULT_RETRY_POLICY).join(', ')})`);
    }
  }
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...given };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1 || policy.maxAttempts > 100) {
    problems.push(`maxAttempts must be an integer from 1 to 100, got ${policy.maxAttempts}`);
  }
  if (!Number.isFinite(policy.baseDelaySeconds) || policy.baseDelaySeconds < 0) {
    problems.push(`baseDelaySeconds must be a number >= 0, got ${policy.baseDelaySeconds}`);
  }
  if (
    !Number.isFinite(policy.maxDelaySeconds) ||
    policy.maxDelaySeconds < 0 ||
    policy.maxDelaySeconds > MAX_VISIBILITY_TIMEOUT_SECONDS
  ) {
    problems.push(
      `maxDelaySeconds must be from 0 to ${MAX_VISIBILITY_TIMEOUT_SECONDS} (12 h, the SQS visibility limit), got ${policy.maxDelaySeconds}`,
    );
  }
  if (problems.length > 0) throw new JobError(`invalid retry policy of ${jobType}: ${problems.join('; ')}`);
  return Object.freeze(policy);
}

/**
 * Delay before the next run after `attempt` failed, in whole seconds (SQS visibility
 * has 1-second resolution).
 *
 * @param attempt the attempt that just failed, 1-based.
 * @param policy the job's retry policy.
 * @param minDelayMs a floor from the failure itself (Retry-After), in milliseconds.
 * @param random a source of uniform [0, 1) numbers; injectable for tests.
 * @returns seconds in [ceil(minDelayMs/1000), maxDelaySeconds] (the floor is capped by 12 h too).
 */
export function backoffDelaySeconds(
  attempt: number,
  policy: RetryPolicy,
  minDelayMs = 0,
  random: () => number = Math.random,
): number {
  // Whole seconds: a fractional base (0.5 s) must not leak a fractional VisibilityTimeout.
  const floor = Math.min(MAX_VISIBILITY_TIMEOUT_SECONDS, Math.ceil(minDelayMs / 1000));
  return fullJitterDelay(attempt, policy.baseDelaySeconds, policy.maxDelaySeconds, floor, random);
}

/**
 * Exponential backoff with full jitter in whole units of the caller's choosing (seconds for
 * visibility, milliseconds for client retries): a uniform integer in
 * [0, floor(min(cap, base * 2^(attempt-1)))], raised to `floor` when below it.
 *
 * @param attempt the attempt that just failed, 1-based (values below 1 count as 1).
 * @param base the first retry's upper bound; `cap` the upper bound of any retry; `floor` a
 *   minimum (e.g. from Retry-After), all in the same unit.
 */
export function fullJitterDelay(
  attempt: number,
  base: number,
  cap: number,
  floor: number,
  random: () => number,
): number {
  const exponent = Math.min(Math.max(0, attempt - 1), 60);
  const ceiling = Math.floor(Math.min(cap, base * 2 ** exponent));
  const jittered = Math.min(ceiling, Math.floor(random() * (ceiling + 1)));
  return Math.max(jittered, floor);
}
