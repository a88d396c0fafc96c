/**
 * The lease stage: asks the idempotency guard whether this job may run. Acquired: the lease to
 * run under. Otherwise the record's outcome: a duplicate absorbed, a concurrent run waited out,
 * an expired lease dead-lettered (`onLeaseExpired: 'dead-letter'`), or a store outage retried
 * without spending an attempt.
 */
import type { JobEnvelope } from '../../core/envelope.ts';
import type { IdempotencyGuard, Lease } from '../idempotency/guard.ts';
import { identityTypeOf } from '../job.ts';
import { LeaseExpiredError } from '../worker-errors.ts';
import { deadLetter } from './dead-lettering.ts';
import type { AnyJob } from './deps.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { storeUnavailable } from './store-unavailable.ts';

/**
 * A duplicate of a batch child: what an earlier run left undone is finished now
 * (batches/dead-letters.ts); undefined when the record is no batch child.
 */
function batchPending(
  run: RecordRun,
  job: AnyJob,
  envelope: JobEnvelope,
  status: 'completed' | 'dead-lettered',
): Promise<RecordOutcome | undefined> | undefined {
  // Without batches a batch child never reaches its lease (index.ts).
  const batches = run.deps.features.batches;
  if (envelope.batchid === undefined || batches === undefined) return undefined;
  return batches.afterDuplicateDelivery(run, job, envelope, status);
}

/**
 * The message's `SentTimestamp` (epoch ms, SQS's clock) as the request's `sentAtMs`; nothing when
 * the record has none (a hand-made event): the guard then takes a message of a dead-lettered job
 * for a redrive and runs it.
 */
function sentAtOf(run: RecordRun): { readonly sentAtMs?: number } {
  const sentAtMs = Number(run.record.attributes?.SentTimestamp);
  return Number.isFinite(sentAtMs) && sentAtMs > 0 ? { sentAtMs } : {};
}

/**
 * Asks the guard; returns the lease to run under, or the record's outcome when it must not run.
 * @param hash the data's payload hash (identify.ts).
 * @param jobTimeoutMs the job's own time limit, in milliseconds.
 * @param lambdaBudgetMs the milliseconds left in the invocation, less the deadline margin.
 */
export async function beginLease(
  run: RecordRun,
  job: AnyJob,
  envelope: JobEnvelope,
  key: string,
  hash: string,
  jobTimeoutMs: number,
  lambdaBudgetMs: number,
): Promise<{ lease: Lease } | { outcome: RecordOutcome }> {
  const { deps } = run;
  const guard = deps.guard as IdempotencyGuard;
  let begun: Awaited<ReturnType<IdempotencyGuard['begin']>>;
  try {
    begun = await guard.begin({
      // The identity type: a renamed job keeps the records of its oldest name (job.ts, formerTypes).
      jobType: identityTypeOf(job),
      key,
      payloadHash: hash,
      // The run may take its budget, then children and completion need up to the margin again.
      leaseExpiresAtMs:
        deps.now() + Math.max(0, Math.min(jobTimeoutMs, lambdaBudgetMs)) + deps.deadlineMarginMs,
      onLeaseExpired: job.idempotency?.onLeaseExpired ?? 'rerun',
      messageId: run.record.messageId,
      ...sentAtOf(run),
      ...(envelope.parentjob === undefined ? {} : { parentJob: envelope.parentjob }),
    });
  } catch (error) {
    // Only the store's own call is in this try: what the message decides (key, hash) was computed
    // before, so a failure here is the store's answer (throttling, network), not the message's.
    return {
      outcome: await storeUnavailable(
        run,
        job,
        error,
        'idempotency store unavailable; record will be retried',
        false,
      ),
    };
  }

  switch (begun.status) {
    case 'acquired':
      return { lease: begun.lease };
    case 'completed': {
      deps.metrics.add(job.type, 'JobDuplicateAbsorbed');
      run.logger.info('duplicate delivery absorbed: the job already completed', {
        outcome: 'duplicate',
        resultStored: begun.resultStored,
      });
      const pending = await batchPending(run, job, envelope, 'completed');
      if (pending) return { outcome: pending };
      const parking = deps.features.groupParking;
      return {
        outcome: (parking ? await parking.unparkAfterCompletion(run, job) : undefined) ?? {
          status: 'duplicate',
        },
      };
    }
    case 'dead-lettered': {
      deps.metrics.add(job.type, 'JobDuplicateAbsorbed');
      if (begun.copyOf === undefined) {
        run.logger.info('duplicate delivery absorbed: this message was already dead-lettered', {
          outcome: 'duplicate',
        });
      } else {
        // Another message of the same job, sent before it was dead-lettered (a producer that sent
        // again after a lost response): a second DLQ copy would show one job twice to a DLQ alarm
        // and to a redrive. A redrive was sent after the dead-lettering, so it is not this.
        run.logger.info('duplicate delivery absorbed: a copy of a job already dead-lettered', {
          outcome: 'duplicate',
          reason: 'copy-of-dead-letter',
          deadLetteredMessageId: begun.copyOf,
        });
      }
      return {
        outcome: (await batchPending(run, job, envelope, 'dead-lettered')) ?? { status: 'duplicate' },
      };
    }
    case 'busy': {
      const delaySeconds = Math.ceil(begun.retryAfterMs / 1000);
      run.logger.info('another run holds the lease; record will be retried', {
        outcome: 'retry',
        reason: 'busy',
        delaySeconds,
      });
      return { outcome: retry(delaySeconds, 'busy') };
    }
    case 'lease-expired': {
      const error = new LeaseExpiredError(
        `an earlier run (attempt ${begun.previousAttempt}) of ${job.type} took the lease and did not complete ` +
          `before it expired; the job's idempotency policy is onLeaseExpired: 'dead-letter' (rather never than ` +
          'twice), so it is not run again. Check whether its side effects happened, then redrive or delete it.',
        { context: { key, previousAttempt: begun.previousAttempt } },
      );
      return {
        outcome: await deadLetter(run, {
          error,
          reason: error.name,
          attempts: begun.previousAttempt,
          job,
          lease: begun.lease,
          keepLeaseOnSendFailure: true,
        }),
      };
    }
  }
}
