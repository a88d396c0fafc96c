/**
 * The stage of a job sent for later (an envelope with `runat`, docs/contracts.md "Jobs sent for
 * later"): before the job runs, it must still be due to run. A record without `runat` never
 * reaches this module (no call, no await: the pipeline checks the attribute).
 *
 * - Early (its `runat` is still ahead: clock skew, or a hand-made envelope): it waits, visible
 *   again at its time (ChangeMessageVisibility, at most 12 hours: SQS's limit), no attempt spent.
 *   More than 15 minutes early (no `JobClient` message is) and without a state item: a hand-made
 *   `runat` that would burn receives until the redrive took it with no reason: dead-lettered at
 *   once with `ScheduledStateMissing` as evidence.
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
import { deadLetter } from './dead-lettering.ts';
import type { AnyJob } from './deps.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { storeUnavailable } from './store-unavailable.ts';

/**
 * How early a message may arrive before its `runat` and simply wait: 15 minutes. `JobClient`'s
 * messages arrive at their time (a schedule) or after their `DelaySeconds` (at most 900 s, SQS
 * SendMessage API); earlier than this is a hand-made `runat`, checked against its state item.
 */
export const FAR_EARLY_MS = 15 * 60_000;

/** A message with `runat` far ahead and no state item: not sent for later by `JobClient`; dead-lettered with this as evidence. */
export class ScheduledStateMissingError extends Error {
  override readonly name = 'ScheduledStateMissing';
}

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
  const store = deps.scheduledJobs;
  if (earlyMs > FAR_EARLY_MS && store?.scheduledJobExists !== undefined) {
    // No message of JobClient arrives this early: a hand-made runat. Without a state item it
    // would wait receive after receive until maxReceiveCount took it to the DLQ with no reason.
    let exists: boolean;
    try {
      exists = await store.scheduledJobExists(envelope.source, envelope.id);
    } catch (error) {
      return storeUnavailable(
        run,
        job,
        error,
        'could not read the state of a job sent for later that arrived long before its time; record will be retried',
        false,
      );
    }
    if (!exists) {
      const error = new ScheduledStateMissingError(
        `job ${envelope.id} of source ${envelope.source} has runat ${runAt} (${Math.round(earlyMs / 60_000)} minutes ahead) but no state item: it was not sent for later by JobClient (runat and schedulegeneration are JobClient's, docs/contracts.md); send it with jobClient.send(job, data, { runAt })`,
      );
      run.logger.error('job sent for later has no state and is far from due: dead-lettered', {
        runAt,
        scheduleGeneration: generation,
        reason: error.name,
      });
      return deadLetter(run, { error, reason: error.name, attempts: run.receiveCount, job });
    }
  }
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
