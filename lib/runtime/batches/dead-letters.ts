/**
 * How a batch child's record ends, as the record pipeline's stages meet it (record/run-job.ts,
 * record/dead-lettering.ts, record/lease.ts call these through the `batches` feature): its run's
 * completion counted in its batch, its dead letter counted (before or after the DLQ send), and a
 * duplicate delivery finishing what an earlier run left undone. A retry outcome (`batch-pending`)
 * whenever the count cannot be written yet, so a batch child is never left uncounted.
 */
import { backoffDelaySeconds, DEFAULT_RETRY_POLICY } from '../../core/backoff.ts';
import type { JobEnvelope } from '../../core/envelope.ts';
import type { Lease } from '../idempotency/guard.ts';
import type { DeadLetterInput } from '../record/dead-lettering.ts';
import type { AnyJob } from '../record/deps.ts';
import { type RecordOutcome, retry } from '../record/outcome.ts';
import type { RecordRun } from '../record/record-run.ts';
import { noteCompletionWrite } from '../record/run-job.ts';
import {
  afterDuplicateChild,
  completeBatchChild,
  countDeadLetteredChild,
  sendCompletionOrHandOff,
} from './count.ts';

/**
 * A batch child dead-lettered before its lease (its data, its group parked, its identity): counted
 * before the DLQ send (`done`: the batch may now be done). When the store fails, nothing was sent
 * yet: the record's retry outcome.
 */
export async function countBeforeSend(
  run: RecordRun,
  input: DeadLetterInput,
): Promise<{ readonly done: boolean } | RecordOutcome> {
  const envelope = run.envelope as JobEnvelope;
  try {
    return {
      done: await countDeadLetteredChild(run, envelope, undefined, input.error, input.reason),
    };
  } catch (error) {
    return batchPendingRetry(
      run,
      input,
      error,
      'batch child to be dead-lettered, but its count in its batch could not be written first: retried, nothing sent yet',
    );
  }
}

/**
 * After the DLQ send of a batch child that held a lease: its dead letter is counted in its batch
 * (with its lease's permanent end, one transaction), and the completion job sent when that made
 * the batch done (or handed off: never a retry once the DLQ copy is sent). When the store fails,
 * the lease is ended alone, and only once that is written is the record left on the queue: its
 * redelivery is then absorbed as this message's duplicate (the store names this message id as
 * dead-lettered), which counts it (lease.ts). Never a second DLQ copy: if even the lease cannot be
 * ended the record is acknowledged uncounted, logged ERROR, and the batch's watchdog names it.
 * @param failedAtMs when the dead-lettering began (before the DLQ send), epoch ms: the lease's
 *   failure time (idempotency/decide.ts, isCopyOfDeadLetter).
 */
export async function countInBatch(
  run: RecordRun,
  input: DeadLetterInput,
  failedAtMs: number,
): Promise<RecordOutcome | undefined> {
  const envelope = run.envelope as JobEnvelope;
  const batchId = envelope.batchid as string;
  let done: boolean;
  try {
    done = await countDeadLetteredChild(run, envelope, input.lease, input.error, input.reason, failedAtMs);
  } catch (error) {
    const ended =
      input.lease === undefined ? 'failed' : await endPermanently(input.lease, input.error, failedAtMs);
    if (ended === 'ok') {
      return batchPendingRetry(
        run,
        input,
        error,
        'batch child dead-lettered but not yet counted in its batch: retried (its redelivery is absorbed as a duplicate and counts it)',
      );
    }
    run.logger.error(
      "batch child dead-lettered, but neither counted in its batch nor its lease ended (the store failed): acknowledged, as a retry could dead-letter it twice; the batch's watchdog names it among the children not counted",
      { batchId, error, lease: ended },
    );
    return undefined;
  }
  if (done) await sendCompletionOrHandOff(run, batchId, envelope.type, true);
  return undefined;
}

/** Ends a lease as permanent, dated `failedAtMs`; `failed` when the store did not answer. */
async function endPermanently(
  lease: Lease,
  error: unknown,
  failedAtMs: number,
): Promise<'ok' | 'fenced' | 'failed'> {
  try {
    return await lease.fail(error, 'permanent', failedAtMs);
  } catch {
    return 'failed';
  }
}

/** A `batch-pending` retry after a backoff, logged as the record's outcome. */
function batchPendingRetry(
  run: RecordRun,
  input: DeadLetterInput,
  error: unknown,
  message: string,
): RecordOutcome {
  const delaySeconds = backoffDelaySeconds(
    input.attempts,
    input.job?.retry ?? DEFAULT_RETRY_POLICY,
    0,
    run.deps.random,
  );
  run.logger.error(message, {
    outcome: 'retry',
    reason: 'batch-pending',
    batchId: run.envelope?.batchid,
    delaySeconds,
    error,
  });
  return retry(delaySeconds, 'batch-pending');
}

/**
 * A duplicate of a batch child: what a crashed or failed earlier run of it left undone (its count,
 * its batch's completion job) is done now (batches/count.ts); a retry outcome when it cannot be yet.
 */
export async function afterDuplicateDelivery(
  run: RecordRun,
  job: AnyJob,
  envelope: JobEnvelope,
  status: 'completed' | 'dead-lettered',
): Promise<RecordOutcome | undefined> {
  if (envelope.batchid === undefined) return undefined;
  const error = await afterDuplicateChild(run, envelope, status);
  if (error === undefined) return undefined;
  const delaySeconds = backoffDelaySeconds(run.receiveCount, job.retry, 0, run.deps.random);
  run.logger.error("batch child's count or its batch's completion job still pending: retried", {
    outcome: 'retry',
    reason: 'batch-pending',
    batchId: envelope.batchid,
    delaySeconds,
    error,
  });
  return retry(delaySeconds, 'batch-pending');
}

/**
 * After a batch child's run: its lease completed and its outcome counted in its batch (one
 * transaction, count.ts), then its batch's completion job sent when it was the last (handed off to
 * the watchdog when this record cannot send it). Undefined: done. Otherwise a `batch-pending`
 * retry: a batch child must be counted, and its batch's completion job sent when it is the last,
 * so the record stays on the queue and its redelivery (run again, or a duplicate) finishes it.
 * @param attempt the run's attempt (its backoff).
 */
export async function completeChildRun(
  run: RecordRun,
  job: AnyJob,
  lease: Lease,
  envelope: JobEnvelope,
  result: unknown,
  childLinks: string[] | undefined,
  attempt: number,
): Promise<RecordOutcome | undefined> {
  const batchId = envelope.batchid as string;
  let counted = false;
  try {
    const write = await completeBatchChild(run, lease, envelope, result, childLinks);
    noteCompletionWrite(run, job, write);
    counted = write === 'ok';
    if (counted) {
      // A completion job this record cannot send is handed off (WARN, the watchdog sends it);
      // one it could send on its redelivery (a duplicate then) is retried.
      const pending = await sendCompletionOrHandOff(run, batchId, job.type, false);
      if (pending !== undefined) throw pending;
    }
    return undefined;
  } catch (error) {
    if (counted) run.deps.metrics.add(job.type, 'JobCompleted');
    const delaySeconds = backoffDelaySeconds(attempt, job.retry, 0, run.deps.random);
    run.logger.error(
      "batch child done but not yet counted, or its batch's completion job not sent: retried",
      {
        outcome: 'retry',
        reason: 'batch-pending',
        batchId,
        counted,
        delaySeconds,
        error,
      },
    );
    return retry(delaySeconds, 'batch-pending');
  }
}
