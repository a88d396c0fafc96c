/**
 * Retry timing of the producer client: exponential backoff with full jitter in milliseconds
 * (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015):
 * delay = random(0, min(cap, base * 2^(attempt-1))), floored by a server's Retry-After.
 */
import { fullJitterDelay } from '../core/backoff.ts';

/** Retry settings of {@link JobClient}; both fields optional in its options. */
export interface ClientRetryOptions {
  /** Total tries of a request, the first included (1 = no retry). Integer 1–20. @default 3 */
  readonly maxAttempts: number;
  /** Upper bound of the first retry's delay, in milliseconds; doubles per retry. @default 100 */
  readonly baseDelayMs: number;
}

/** Defaults of {@link ClientRetryOptions}; defined here only. */
export const DEFAULT_CLIENT_RETRY: ClientRetryOptions = Object.freeze({ maxAttempts: 3, baseDelayMs: 100 });

/** No single wait of the client is longer than this, in milliseconds (a producer must not hang). */
export const MAX_CLIENT_RETRY_DELAY_MS = 20_000;

/**
 * Delay before retry number `failedAttempt` (the 1-based try that just failed), in whole
 * milliseconds within [min(minDelayMs, cap), cap] where cap = min(20 s, base * 2^(failedAttempt-1)).
 *
 * @param minDelayMs floor from the failure itself (Retry-After), capped at 20 s.
 * @param random uniform [0, 1) source; injectable for tests.
 */
export function clientRetryDelayMs(
  failedAttempt: number,
  baseDelayMs: number,
  minDelayMs = 0,
  random: () => number = Math.random,
): number {
  const floor = Math.min(MAX_CLIENT_RETRY_DELAY_MS, Math.ceil(minDelayMs));
  return fullJitterDelay(failedAttempt, baseDelayMs, MAX_CLIENT_RETRY_DELAY_MS, floor, random);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
