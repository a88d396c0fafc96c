/**
 * A read of the idempotency store before the run failed (the lease, the group's park): a
 * permanent answer dead-letters the record; anything else means the store could not answer
 * (throttling, network), so the record is retried without spending an attempt. The queue's
 * maxReceiveCount (above maxAttempts) is the safety net for a long outage.
 */
import { backoffDelaySeconds } from '../../core/backoff.ts';
import { classifyError } from '../../core/errors.ts';
import { deadLetter } from './dead-lettering.ts';
import type { AnyJob } from './deps.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';

/**
 * The record's outcome after the store's call threw `error`.
 * @param message the WARN line of a retry, saying which read failed.
 * @param noPark true when the dead letter must not park the group (the park itself was unreadable).
 */
export function storeUnavailable(
  run: RecordRun,
  job: AnyJob,
  error: unknown,
  message: string,
  noPark: boolean,
): Promise<RecordOutcome> | RecordOutcome {
  const { deps } = run;
  const classification = classifyError(error, deps.now());
  if (classification.kind === 'permanent') {
    return deadLetter(run, { error, reason: classification.reason, attempts: run.receiveCount, job, noPark });
  }
  const delaySeconds = backoffDelaySeconds(
    run.receiveCount,
    job.retry,
    classification.minDelayMs,
    deps.random,
  );
  run.logger.warn(message, { outcome: 'retry', reason: classification.reason, delaySeconds, error });
  return retry(delaySeconds, 'guard-unavailable');
}
