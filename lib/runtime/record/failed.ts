/**
 * The failure stage: a run (or a stage after routing) failed. Classifies the error
 * (core/errors.ts), then retries with backoff while attempts are left, or dead-letters.
 */
import { backoffDelaySeconds } from '../../core/backoff.ts';
import { classifyError } from '../../core/errors.ts';
import type { Lease } from '../idempotency/guard.ts';
import { deadLetter } from './dead-lettering.ts';
import type { AnyJob } from './deps.ts';
import { noteFailure } from './failed-jobs.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { failLease } from './release-lease.ts';

/**
 * A run (or a stage after routing) failed: retry with backoff, or dead-letter.
 * @param lease the run's lease, when it took one: its attempt count decides, and it is released.
 * @param durationMs how long the run took, in milliseconds (a `JobDuration` sample); undefined when it did not run.
 */
export async function failed(
  run: RecordRun,
  job: AnyJob,
  error: unknown,
  lease: Lease | undefined,
  durationMs: number | undefined,
): Promise<RecordOutcome> {
  const { deps } = run;
  if (durationMs !== undefined) deps.metrics.add(job.type, 'JobDuration', durationMs);
  const classification = classifyError(error, deps.now());
  const attempt = lease?.attempt ?? run.receiveCount;
  if (classification.kind === 'permanent') {
    return deadLetter(run, { error, reason: classification.reason, attempts: attempt, job, lease });
  }
  if (attempt >= job.retry.maxAttempts) {
    return deadLetter(run, {
      error,
      reason: `attempts-used-up: ${classification.reason}`,
      attempts: attempt,
      job,
      lease,
    });
  }
  const delaySeconds = backoffDelaySeconds(attempt, job.retry, classification.minDelayMs, deps.random);
  if (lease) await failLease(run, lease, error, 'transient');
  deps.metrics.add(job.type, 'JobRetried');
  noteFailure(run, job.type, 'retry');
  run.logger.warn('job failed; it will be retried', {
    outcome: 'retry',
    reason: classification.reason,
    delaySeconds,
    maxAttempts: job.retry.maxAttempts,
    durationMs,
    error,
  });
  return retry(delaySeconds, 'transient');
}
