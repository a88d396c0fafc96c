/**
 * What the record pipeline decides for one record: its outcome, and why a record is reported
 * failed (left on the queue for another delivery). The batch scheduler reads these (batch.ts).
 */

/**
 * Visibility, in seconds, of a record not started because the Lambda deadline is near: short,
 * so it is picked up again at once by the next invocation.
 */
export const DEADLINE_RELEASE_SECONDS = 2;

/** Why a record is reported failed. */
export type RetryReason =
  /** The job failed transiently and has attempts left. */
  | 'transient'
  /** Another run holds the lease (a concurrent duplicate); no attempt spent. */
  | 'busy'
  /** Not started: the Lambda deadline is near; no attempt spent. */
  | 'deadline'
  /** The record was due for the DLQ but the DLQ send failed: it stays on the queue, never lost. */
  | 'dead-letter-failed'
  /** The idempotency store could not answer (throttling, network). */
  | 'guard-unavailable'
  /** FIFO: an earlier record of the same group was reported failed; this one was not run. */
  | 'group-blocked'
  /** FIFO, `park`: the record was due for the DLQ but its group's park could not be written. */
  | 'park-failed'
  /** FIFO, `park`: the blocking job completed but its group's park could not be cleared; its next delivery is absorbed and clears it. */
  | 'unpark-failed'
  /** A flow-control limit (concurrency, rate) is full; no attempt spent (limit-wait.ts). */
  | 'limited'
  /** A bug in the worker itself. */
  | 'internal'
  /**
   * Not due yet: a job sent for later that arrived before its `runat` (clock skew), or a batch's
   * watchdog received before its batch's open limit. It waits; no attempt spent.
   */
  | 'not-due'
  /** A batch child was done but its count or its batch's completion job could not be written or sent: its redelivery finishes it. */
  | 'batch-pending';

/** What happened to one record. Only `retry` is reported in `batchItemFailures`. */
export type RecordOutcome =
  | { readonly status: 'completed' }
  | { readonly status: 'duplicate' }
  | { readonly status: 'dead-lettered' }
  /** A job sent for later that was cancelled: not run, acknowledged (lib/runtime/record/scheduled.ts). */
  | { readonly status: 'cancelled' }
  /** A message of an earlier generation of a rescheduled job: not run, acknowledged; the new generation runs. */
  | { readonly status: 'superseded' }
  /**
   * A flow-control limit was full: a copy of the message was sent back to the queue, visible after
   * `delaySeconds`, and this delivery is acknowledged (limit-wait.ts). Not an attempt.
   */
  | { readonly status: 'resent'; readonly delaySeconds: number }
  | { readonly status: 'retry'; readonly delaySeconds: number; readonly reason: RetryReason };

/** The outcome of a record left on the queue, visible again after `delaySeconds`. */
export const retry = (delaySeconds: number, reason: RetryReason): RecordOutcome => ({
  status: 'retry',
  delaySeconds,
  reason,
});

/** The outcome of a completed run: one frozen object, so completing allocates nothing. */
export const COMPLETED: RecordOutcome = Object.freeze({ status: 'completed' });
