/**
 * A batch's watchdog message (envelope `batchwatch`), handled by the worker instead of a job: at
 * the batch's open limit (`createdAtMs + openLimitSeconds`), a batch not completed is reported:
 * the `BatchOverdue` metric (its JobQueue alarm) and a WARN log naming the children not counted.
 * A batch whose children are all counted but whose completion job never came (the child that
 * counted last could not send it: count.ts, `sendCompletionOrHandOff`) gets it sent from here, the
 * same body as every other sender's (one job); the watchdog runs on the completion job's queue.
 * Received before it is due (SQS delays stop at 900 s), it is put back until then with a visibility
 * timeout (at most 12 h, ChangeMessageVisibility API), spending no attempt of any job.
 */
import { backoffDelaySeconds, DEFAULT_RETRY_POLICY } from '../../core/backoff.ts';
import { batchChildId, isBatchDone } from '../../core/batch.ts';
import type { JobEnvelope } from '../../core/envelope.ts';
import { classifyError } from '../../core/errors.ts';
import { type RecordOutcome, retry } from '../record/outcome.ts';
import type { RecordRun } from '../record/record-run.ts';
import { sendCompletionIfDone } from './count.ts';

/** Longest visibility timeout SQS takes: 12 hours (ChangeMessageVisibility API). */
const MAX_VISIBILITY_SECONDS = 43_200;
/** Most missing children named in the overdue log. */
const MAX_MISSING_LISTED = 20;

/** Checks the batch a watchdog message watches; never throws. */
export async function watchBatch(run: RecordRun, envelope: JobEnvelope): Promise<RecordOutcome> {
  const { deps } = run;
  const batchId = envelope.batchwatch as string;
  const ledger = deps.batchLedger;
  if (ledger === undefined) {
    run.logger.error(
      'batch watchdog received by a worker that keeps no batches (no idempotency table): dropped',
      {
        batchId,
      },
    );
    return { status: 'completed' };
  }
  try {
    const batch = await ledger.read(batchId);
    if (batch === undefined) {
      run.logger.info('batch watchdog: no such batch (expired, or never written): nothing to watch', {
        batchId,
      });
      return { status: 'completed' };
    }
    const dueAtMs = batch.createdAtMs + batch.openLimitSeconds * 1000;
    const now = deps.now();
    if (batch.state !== 'completed' && now < dueAtMs) {
      return retry(Math.min(MAX_VISIBILITY_SECONDS, Math.ceil((dueAtMs - now) / 1000)), 'not-due');
    }
    if (batch.state === 'completed') {
      run.logger.info('batch watchdog: the batch completed in time', { batchId });
      return { status: 'completed' };
    }
    const missing: string[] = [];
    let missingCount = 0;
    if (!isBatchDone(batch)) {
      for (let start = 0; start < batch.total; start += 100) {
        const ids = Array.from({ length: Math.min(100, batch.total - start) }, (_, i) =>
          batchChildId(batchId, start + i),
        );
        const found = await ledger.readChildren(batchId, ids);
        for (const [offset, id] of ids.entries()) {
          const child = found.get(id);
          if (child !== undefined && child.status !== 'waiting-for-redrive') continue;
          missingCount += 1;
          if (missing.length < MAX_MISSING_LISTED) {
            missing.push(
              `${start + offset}:${id}${child === undefined ? '' : ' (dead-lettered, waiting for its redrive)'}`,
            );
          }
        }
      }
    }
    deps.metrics.add(envelope.type, 'BatchOverdue');
    const done = isBatchDone(batch);
    let completionSent = false;
    let completionError: unknown;
    if (done) {
      try {
        await sendCompletionIfDone(run, batchId, envelope.type);
        completionSent = true;
      } catch (error) {
        completionError = error;
      }
    }
    run.logger.warn('batch overdue: still open past its openLimitSeconds', {
      batchId,
      openLimitSeconds: batch.openLimitSeconds,
      openForSeconds: Math.round((now - batch.createdAtMs) / 1000),
      total: batch.total,
      succeeded: batch.succeeded,
      deadLettered: batch.deadLettered,
      waitingForRedrive: batch.waiting,
      notCounted: missingCount,
      missingChildren: missing,
      ...(done
        ? {
            note: completionSent
              ? 'every child is counted: the completion job had not completed; the watchdog sent it again (a duplicate of one sent before is absorbed)'
              : 'every child is counted, but the watchdog could not send the completion job either',
          }
        : {}),
      ...(completionError === undefined ? {} : { error: completionError }),
    });
    // A send that failed for a passing reason is tried again; one refused (its queue unknown
    // here) would be refused on every try: the overdue report is all that is left.
    if (completionError !== undefined && classifyError(completionError).kind !== 'permanent') {
      throw completionError;
    }
    return { status: 'completed' };
  } catch (error) {
    const delaySeconds = backoffDelaySeconds(run.receiveCount, DEFAULT_RETRY_POLICY, 0, deps.random);
    run.logger.warn(
      'batch watchdog could not read its batch or send its completion job; it will be retried',
      {
        batchId,
        delaySeconds,
        error,
      },
    );
    return retry(delaySeconds, 'guard-unavailable');
  }
}
