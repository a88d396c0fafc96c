/**
 * The record pipeline's side of batches: counting a child once when it completes or is
 * dead-lettered (in one transaction with its lease end: ledger.ts), and sending the batch's
 * completion job when a count makes the batch done. Called from run-job.ts (a child completed),
 * dead-lettering.ts (a child dead-lettered) and lease.ts (a duplicate of a child: the count of a
 * crashed run is finished, the completion job sent if it was not).
 *
 * Who sends the completion job: any run that finds the batch done (every child counted) and not
 * yet completed, after its own count, or on a duplicate. Several may send it (two children counted
 * at once, a redelivery): the body is the one kept on the batch item, so every send is the same job
 * (same `source` + `id`: FIFO dedup within 5 minutes, the job's idempotency always), which runs once.
 */
import { createHash } from 'node:crypto';
import {
  BATCH_RECORD_TTL_SECONDS,
  type BatchChildStatus,
  isBatchDone,
  MAX_BATCH_OPEN_LIMIT_SECONDS,
} from '../../core/batch.ts';
import type { JobEnvelope } from '../../core/envelope.ts';
import { classifyError } from '../../core/errors.ts';
import type { Lease, TogetherWrite } from '../idempotency/guard.ts';
import type { RecordRun } from '../record/record-run.ts';
import type { ChildCount } from './ledger.ts';

/** Most UTF-8 bytes of a child's result kept in its outcome item (the rest stays on its job record). */
export const MAX_CHILD_RESULT_BYTES = 4096;

/** TTL of an outcome item: as long as any batch's items can live. */
function outcomeExpiresAt(nowMs: number): number {
  return Math.floor(nowMs / 1000) + MAX_BATCH_OPEN_LIMIT_SECONDS + BATCH_RECORD_TTL_SECONDS;
}

/** The count of a completed child: its result as JSON when small enough. */
function succeededCount(envelope: JobEnvelope, batchId: string, result: unknown): ChildCount {
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch {
    json = undefined;
  }
  const base = { batchId, childId: envelope.id, jobType: envelope.type, status: 'succeeded' as const };
  if (json === undefined) return base;
  if (Buffer.byteLength(json, 'utf8') > MAX_CHILD_RESULT_BYTES) {
    return {
      ...base,
      reason: `result over ${MAX_CHILD_RESULT_BYTES} bytes: read it from the child's job record`,
    };
  }
  return { ...base, resultJson: json };
}

/**
 * Completes a batch child's lease and counts it, in one transaction. A child already counted (a
 * second run after a takeover) or whose batch is gone completes its lease alone; a child waiting for
 * its redrive is moved from `waiting` to `succeeded`.
 * @returns the lease write's outcome (`fenced`: another run holds the lease and will count).
 * @throws {IdempotencyStoreError} when DynamoDB fails: the record must then not be acknowledged.
 */
export async function completeBatchChild(
  run: RecordRun,
  lease: Lease,
  envelope: JobEnvelope,
  result: unknown,
  childLinks: readonly string[] | undefined,
): Promise<'ok' | 'fenced'> {
  const { deps } = run;
  const batchId = envelope.batchid as string;
  const ledger = deps.batchLedger;
  if (ledger === undefined || lease.completeTogether === undefined) {
    run.logger.error(
      'this job is a child of a batch, but the worker has no idempotency table with transactions: it cannot be counted and its batch will not complete (its watchdog reports it)',
      { batchId },
    );
    return lease.complete(result, childLinks);
  }
  const count = succeededCount(envelope, batchId, result);
  const expiresAt = outcomeExpiresAt(deps.now());
  let written: TogetherWrite = await lease.completeTogether(
    result,
    childLinks,
    ledger.countItems(count, expiresAt),
  );
  if (typeof written === 'object') {
    const [outcomeCode, batchCode] = written.cancelled;
    if (outcomeCode === 'ConditionalCheckFailed') {
      const existing = await ledger.readChild(batchId, envelope.id);
      if (existing?.status === 'waiting-for-redrive') {
        // The redrive of a dead-lettered child of a wait-for-redrive batch: now it counts.
        written = await lease.completeTogether(
          result,
          childLinks,
          ledger.countItems(count, expiresAt, 'waiting-for-redrive'),
        );
      }
    } else if (batchCode === 'ConditionalCheckFailed') {
      run.logger.warn(
        'the batch of this child does not exist (expired, or a wrong batch id): completed uncounted',
        {
          batchId,
        },
      );
    }
    // Counted already (or cannot be): the lease ends alone.
    if (typeof written === 'object') return lease.complete(result, childLinks);
  }
  if (written === 'ok') deps.metrics.add(envelope.type, 'BatchChildCounted');
  return written;
}

/**
 * Counts a dead-lettered batch child: `dead-lettered` under `complete-with-failures`, else
 * `waiting-for-redrive` (not counted: the batch waits). With a lease, in one transaction with its
 * permanent end; without (a child dead-lettered before its lease), alone, its token from the SQS
 * message id. A child already counted (dead-lettered again after a failed redrive) ends its lease
 * alone.
 * @param failedAtMs when the dead-lettering began (before the DLQ send), epoch ms: the lease's
 *   failure time (`Lease.fail`). @default now
 * @returns whether the batch may now be done (the caller then checks it).
 * @throws {IdempotencyStoreError} when DynamoDB fails.
 */
export async function countDeadLetteredChild(
  run: RecordRun,
  envelope: JobEnvelope,
  lease: Lease | undefined,
  error: unknown,
  reason: string,
  failedAtMs?: number,
): Promise<boolean> {
  const { deps } = run;
  const batchId = envelope.batchid as string;
  const ledger = deps.batchLedger;
  if (ledger === undefined) {
    run.logger.error('this dead-lettered job is a child of a batch, but the worker cannot count it', {
      batchId,
    });
    if (lease) await lease.fail(error, 'permanent', failedAtMs);
    return false;
  }
  const batch = await ledger.read(batchId);
  const status: BatchChildStatus =
    batch?.policy === 'wait-for-redrive' ? 'waiting-for-redrive' : 'dead-lettered';
  const items = ledger.countItems(
    {
      batchId,
      childId: envelope.id,
      jobType: envelope.type,
      status,
      reason,
      error: describe(error),
    },
    outcomeExpiresAt(deps.now()),
  );
  let written: TogetherWrite | 'ok' | { readonly cancelled: readonly string[] };
  if (lease?.failTogether !== undefined) {
    written = await lease.failTogether(error, items, failedAtMs);
    if (typeof written === 'object') await lease.fail(error, 'permanent', failedAtMs);
  } else {
    if (lease) await lease.fail(error, 'permanent', failedAtMs);
    const token = createHash('sha256')
      .update(`${run.record.messageId}\ndead-letter\n${JSON.stringify(items)}`)
      .digest('hex')
      .slice(0, 36);
    written = await ledger.transact(`batch#${batchId}`, items, token);
  }
  if (written === 'ok') deps.metrics.add(envelope.type, 'BatchChildCounted');
  run.logger.warn(
    status === 'dead-lettered'
      ? 'batch child dead-lettered: counted as failed (complete-with-failures), the completion job lists it'
      : 'batch child dead-lettered: its batch waits for its redrive (wait-for-redrive)',
    { batchId, counted: written === 'ok' },
  );
  return status === 'dead-lettered';
}

/**
 * Sends the batch's completion job when every child is counted and the batch is not completed:
 * one consistent GetItem, and a SendMessage when due.
 * @throws when the read or the send fails: the caller leaves its record on the queue, and the
 *   redelivery checks again.
 */
export async function sendCompletionIfDone(run: RecordRun, batchId: string, jobType: string): Promise<void> {
  const ledger = run.deps.batchLedger;
  if (ledger === undefined) return;
  const batch = await ledger.read(batchId);
  if (batch === undefined || batch.state === 'completed' || !isBatchDone(batch)) return;
  const sender = run.deps.childSender();
  if (sender.sendEnvelope === undefined) {
    run.logger.error(
      "batch done, but the worker's child sender cannot send its completion job (no sendEnvelope)",
      {
        batchId,
      },
    );
    return;
  }
  await sender.sendEnvelope(batch.completionQueue, batch.completionEnvelope);
  run.deps.metrics.add(jobType, 'BatchCompletionSent');
  run.logger.info('batch done: completion job sent', {
    batchId,
    total: batch.total,
    succeeded: batch.succeeded,
    deadLettered: batch.deadLettered,
  });
}

/**
 * Sends the batch's completion job when due, for a record whose own part is done (counted, or its
 * dead letter sent), and decides what a failure does to the record. Retried (the error returned)
 * only when its redelivery can fix it and sends nothing twice: a transient failure of a record
 * that was not dead-lettered (its redelivery is a duplicate, which sends the completion job).
 * Otherwise handed off: after this record's DLQ copy was sent (`afterDeadLetter`: a redelivery of a
 * record dead-lettered before its lease would be dead-lettered again), or a failure no retry fixes
 * (the completion job's queue is not one this worker can send to: ChildRejectedError). A handed-off
 * completion is logged WARN, naming the batch and why, and sent by the batch's watchdog at the
 * batch's open limit (watchdog.ts); the record is acknowledged.
 * @returns the error when the record should be retried, else undefined.
 */
export async function sendCompletionOrHandOff(
  run: RecordRun,
  batchId: string,
  jobType: string,
  afterDeadLetter: boolean,
): Promise<unknown> {
  try {
    await sendCompletionIfDone(run, batchId, jobType);
    return undefined;
  } catch (error) {
    const permanent = classifyError(error).kind === 'permanent';
    if (!afterDeadLetter && !permanent) return error;
    run.logger.warn(
      "batch done, but its completion job could not be sent from here: the batch's watchdog sends it at the batch's open limit (fix the cause by then)",
      {
        batchId,
        why: permanent
          ? 'refused: no retry of this message could send it'
          : 'failed after this message was dead-lettered: a retry would dead-letter it twice',
        error,
      },
    );
    return undefined;
  }
}

/**
 * A duplicate of a batch child (its job completed or dead-lettered before): finishes what a
 * crashed run may have left, the count of a dead letter whose transaction failed, then the
 * completion job. Undefined when all is done; the error when it could not be (retry the record:
 * its redelivery is a duplicate again, and sends no dead letter).
 */
export async function afterDuplicateChild(
  run: RecordRun,
  envelope: JobEnvelope,
  status: 'completed' | 'dead-lettered',
): Promise<unknown> {
  const batchId = envelope.batchid;
  if (batchId === undefined || run.deps.batchLedger === undefined) return undefined;
  try {
    if (status === 'dead-lettered') {
      const counted = await countDeadLetteredChild(
        run,
        envelope,
        undefined,
        new Error('dead-lettered earlier (see its dead letter)'),
        'dead-lettered',
      );
      if (!counted) return undefined;
    }
  } catch (error) {
    return error;
  }
  return sendCompletionOrHandOff(run, batchId, envelope.type, false);
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 1024 ? `${text.slice(0, 1021)}...` : text;
}

/**
 * Completes a batch's completion job and marks its batch completed, in one transaction (a batch
 * whose item is gone: the lease alone).
 * @throws {IdempotencyStoreError} when DynamoDB fails.
 */
export async function completeBatchCompletion(
  run: RecordRun,
  lease: Lease,
  batchId: string,
  jobType: string,
  result: unknown,
  childLinks: readonly string[] | undefined,
): Promise<'ok' | 'fenced'> {
  const ledger = run.deps.batchLedger;
  if (ledger === undefined || lease.completeTogether === undefined) return lease.complete(result, childLinks);
  const written = await lease.completeTogether(result, childLinks, [ledger.completedItem(batchId)]);
  if (typeof written === 'object') {
    run.logger.warn('the batch of this completion job does not exist (expired): completed alone', {
      batchId,
    });
    return lease.complete(result, childLinks);
  }
  if (written === 'ok') {
    run.deps.metrics.add(jobType, 'BatchCompleted');
    run.logger.info('batch completed: its completion job completed', { batchId });
  }
  return written;
}
