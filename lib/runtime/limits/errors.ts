/**
 * Errors of flow control (per-key concurrency, shared rate limits). Each is a
 * {@link PermanentError} or {@link TransientError} so `classifyError` routes it without special
 * cases; {@link LimitWait} is no failure at all but the signal that a record must wait.
 */
import { JobError, PermanentError, TransientError } from '../../core/errors.ts';

/**
 * A job's `concurrency.key(data)` threw, or returned something other than a non-empty string.
 * A function of the message alone, so every delivery would fail the same way: permanent,
 * dead-lettered with this evidence on the first delivery (like `JobIdentityError`).
 * `context` has `type` and `limit` (the concurrency limit's name); `cause` is what was thrown.
 */
export class ConcurrencyKeyError extends PermanentError {
  constructor(type: string, limitName: string, problem: string, cause?: unknown) {
    super(`the concurrency key of ${type} (limit ${limitName}) could not be computed: ${problem}`, {
      cause,
      context: { type, limit: limitName },
    });
  }
}

/**
 * The limit store could not answer (DynamoDB throttling, network, 5xx, missing table or
 * permission): transient, the record is retried. `cause` is the SDK error.
 */
export class LimitStoreError extends TransientError {}

/**
 * A job called `ctx.rateLimit` with a limit it did not declare in its `rateLimits`, or where no
 * limit store is configured: a mistake in code, permanent.
 */
export class RateLimitUsageError extends PermanentError {}

/**
 * Thrown by `ctx.rateLimit` when the wait for a token is too long to spend inside the run: the
 * worker ends the run without counting an attempt (the lease is handed back, the attempt
 * restored) and the record waits outside Lambda (re-sent with a delay on a standard queue, a
 * visibility delay on a FIFO queue). Not a failure: never dead-lettered, never retried with
 * backoff. A job that catches it should rethrow it.
 */
export class LimitWait extends JobError {
  /** The limit that is full (its name). */
  readonly limitName: string;
  /** The bucket's key within the limit (`''`: the limit's single bucket). */
  readonly key: string;
  /** How long until a token is expected, in milliseconds. */
  readonly waitMs: number;
  constructor(limitName: string, key: string, waitMs: number) {
    super(`rate limit ${limitName} has no token for ${Math.ceil(waitMs)} ms: the job waits outside the run`, {
      context: { limit: limitName, key, waitMs },
    });
    this.limitName = limitName;
    this.key = key;
    this.waitMs = waitMs;
  }
}
