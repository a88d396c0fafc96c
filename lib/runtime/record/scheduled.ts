/**
 * The stage of a job sent for later (an envelope with `runat`, docs/contracts.md "Jobs sent for
 * later"): before the job runs, it must still be due to run. A record without `runat` never
 * reaches this module (no call, no await: the pipeline checks the attribute).
 *
 * - Early (its `runat` is still ahead: clock skew, or a hand-made envelope): it waits, visible
 *   again at its time (ChangeMessageVisibility, at most 12 hours: SQS's limit), no attempt spent.
 * - Otherwise one conditional UpdateItem of its state item (`startScheduledJob`):
 *   `started` → run it (the idempotency guard still absorbs a second delivery of the same
 *   generation); `cancelled` → not run, logged, `JobCancelled`, deleted from the queue (not a
 *   failure, never dead-lettered); `superseded` (rescheduled: another generation runs) → not run,
 *   logged, `JobSuperseded`, deleted; `missing` (no state item: it expired 14 days after its time,
 *   or was never written) → run, with a warning (losing a job is worse than running a late one).
 * - A worker whose guard keeps no state (`idempotency: false`, a custom guard) runs it with a
 *   warning: it cannot tell whether it was cancelled.
 */
import type { JobEnvelope } from '../../core/envelope.ts';
import type { AnyJob } from './deps.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { storeUnavailable } from './store-unavailable.ts';

/** SQS's longest visibility timeout, in seconds (ChangeMessageVisibility API): an early job waits at most this per receive. */
export const MAX_VISIBILITY_SECONDS = 43_200;

const CANCELLED: RecordOutcome = Object.freeze({ status: 'cancelled' });
const SUPERSEDED: RecordOutcome = Object.freeze({ status: 'superseded' });

/**
 * Whether the job sent for later may run now; undefined: run it. Otherwise the record's outcome.
 * @param envelope an envelope with `runat` and `schedulegeneration` (parseEnvelope checked both).
 */
export async function checkScheduled(
  run: RecordRun,
  job: AnyJob,
  envelope: JobEnvelope,
): Promise<RecordOutcome | undefined> {
  const { deps } = run;
  const runAt = envelope.runat as string;
  const generation = Number(envelope.schedulegeneration);
  const earlyMs = Date.parse(runAt) - deps.now();
  if (earlyMs > 0) {
    const delaySeconds = Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(earlyMs / 1000));
    run.logger.info('job sent for later arrived before its time: it waits', {
      outcome: 'retry',
      reason: 'not-due',
      runAt,
      delaySeconds,
    });
    return retry(delaySeconds, 'not-due');
  }
  const store = deps.scheduledJobs;
  if (store === undefined) {
    run.logger.warn(
      'job sent for later runs without its cancel check: the worker has no idempotency table (idempotency: false or a custom guard)',
      { runAt, scheduleGeneration: generation },
    );
    return undefined;
  }
  let start: Awaited<ReturnType<typeof store.startScheduledJob>>;
  try {
    start = await store.startScheduledJob({
      source: envelope.source,
      id: envelope.id,
      generation,
      messageId: run.record.messageId,
    });
  } catch (error) {
    return storeUnavailable(
      run,
      job,
      error,
      'could not read whether the job sent for later was cancelled; record will be retried',
      false,
    );
  }
  if (start === 'started') return undefined;
  if (start === 'missing') {
    run.logger.warn(
      'job sent for later has no state (expired 14 days after its time, or never written): it runs',
      {
        runAt,
        scheduleGeneration: generation,
      },
    );
    return undefined;
  }
  if (start === 'cancelled') {
    run.logger.info('job was cancelled before it ran: not run, message deleted', {
      outcome: 'cancelled',
      runAt,
      scheduleGeneration: generation,
    });
    deps.metrics.add(envelope.type, 'JobCancelled');
    return CANCELLED;
  }
  run.logger.info('job was rescheduled: this message of an earlier time is not run, message deleted', {
    outcome: 'superseded',
    runAt,
    scheduleGeneration: generation,
  });
  deps.metrics.add(envelope.type, 'JobSuperseded');
  return SUPERSEDED;
}
