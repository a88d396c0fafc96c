/**
 * The dead-letter stage: sends a record that will not succeed to the DLQ with its evidence
 * (dead-letter.ts writes it), parks its FIFO group first when its job's policy is `park`, then
 * ends its lease as permanent. A send or park that fails leaves the record on the queue: never lost.
 */
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { backoffDelaySeconds, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../core/backoff.ts';
import { type DeadLetterEvidence, sendToDeadLetterQueue } from '../dead-letter.ts';
import type { BatchesFeature } from '../features/feature.ts';
import { PayloadMismatchError } from '../idempotency/errors.ts';
import type { Lease } from '../idempotency/guard.ts';
import { UNKNOWN_JOB_TYPE } from '../telemetry.ts';
import type { AnyJob } from './deps.ts';
import { failureOf } from './failed-jobs.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { failLease } from './release-lease.ts';

/** Why and how a record is dead-lettered. */
export interface DeadLetterInput {
  readonly error: unknown;
  readonly reason: string;
  readonly attempts: number;
  /** Undefined before routing (bad JSON, unknown type). */
  readonly job?: AnyJob;
  readonly lease?: Lease | undefined;
  /**
   * Leave the lease untouched when the DLQ send fails (lease-expired: the next delivery must find
   * it expired again, not released, or the `dead-letter` policy would turn into a re-run).
   */
  readonly keepLeaseOnSendFailure?: boolean;
  /** Never park the group for this one (a `GroupParked` record, or the group record is unreadable). */
  readonly noPark?: boolean;
}

/**
 * Sends the record to the DLQ with evidence, then ends the lease as permanent. When the send
 * fails the record is reported failed (never lost) and comes back after a backoff; its lease is
 * then released as transient, not permanent: the store starts a new attempt cycle after a
 * permanent end (that is how a redrive runs again), which would hand a job whose attempts are
 * used up a whole new retry budget. Released, the next delivery counts on from here and goes
 * straight back to the DLQ if it fails again.
 */
export async function deadLetter(run: RecordRun, input: DeadLetterInput): Promise<RecordOutcome> {
  const { deps, record } = run;
  const nowMs = deps.now();
  const policy: RetryPolicy = input.job?.retry ?? DEFAULT_RETRY_POLICY;
  const evidence: DeadLetterEvidence = {
    jobType: run.jobType,
    error: input.error,
    reason: input.reason,
    attempts: input.attempts,
    firstFailureAtMs: firstFailureAt(run, input.lease, input.attempts, nowMs),
    lastFailureAtMs: nowMs,
    handlerVersion: deps.config.handlerVersion,
    sourceMessageId: record.messageId,
  };
  // FIFO, parking worker: the group parked before the send (record/parked-group.ts).
  const parking = deps.parking ? deps.features.groupParking : undefined;
  const parkFailed =
    input.noPark || !parking ? undefined : await parking.parkOnDeadLetter(run, input, policy);
  if (parkFailed) return parkFailed;
  const batchChild = isBatchChild(run, input);
  // Without a lease, nothing in the store says this message was dead-lettered: its redelivery
  // would be dead-lettered again. So its count comes first (idempotent: its outcome item is
  // written only if absent), and nothing after the DLQ send may leave it on the queue.
  let countedFirst: { readonly done: boolean } | undefined;
  if (batchChild && !input.lease) {
    const counted = await batchesOf(run).countBeforeSend(run, input);
    if ('status' in counted) return counted;
    countedFirst = counted;
  }
  try {
    await sendToDeadLetterQueue({
      sqs: deps.sqs,
      dlqUrl: deps.config.dlqUrl,
      record,
      evidence,
      carried: carriedAttributes(record, deps.features.rawMessages?.identityAttributeOf(deps.rawJob?.raw)),
    });
  } catch (sendError) {
    if (input.lease && !input.keepLeaseOnSendFailure)
      await failLease(run, input.lease, input.error, 'transient');
    const delaySeconds = backoffDelaySeconds(input.attempts, policy, 0, deps.random);
    run.logger.error('dead-letter send failed; the record stays on the queue', {
      outcome: 'retry',
      reason: 'dead-letter-failed',
      delaySeconds,
      error: sendError,
      jobError: input.error,
    });
    return retry(delaySeconds, 'dead-letter-failed');
  }
  // Counted the moment the send succeeded, before any other await: the worker writes this count
  // at once (BatchMetrics.deadLettered), so a crash later in the invocation cannot lose it. Only
  // routed types become a JobType dimension: a type from an unrouted body is producer input, and
  // each distinct value would be a new CloudWatch metric.
  deps.metrics.deadLettered(input.job?.type ?? UNKNOWN_JOB_TYPE, failureOf(run, 'dead-lettered'));
  if (countedFirst !== undefined) {
    if (countedFirst.done) {
      await batchesOf(run).sendCompletionOrHandOff(
        run,
        run.envelope?.batchid as string,
        run.envelope?.type as string,
        true,
      );
    }
  } else if (batchChild) {
    const pending = await batchesOf(run).countInBatch(run, input, nowMs);
    if (pending) return pending;
  } else if (input.lease) {
    // Dated `nowMs`, taken before the DLQ send: a copy of this job sent before it is absorbed,
    // a redrive (sent after the DLQ copy exists) runs (idempotency/decide.ts, isCopyOfDeadLetter).
    await failLease(run, input.lease, input.error, 'permanent', nowMs);
  }
  if (parking) await parking.unparkUnderContinue(run, input);
  run.logger.error('job dead-lettered', {
    outcome: 'dead-lettered',
    reason: input.reason,
    attempts: input.attempts,
    error: input.error,
  });
  return { status: 'dead-lettered' };
}

/** The batches feature of a record that {@link isBatchChild} found counted (so the feature is there). */
function batchesOf(run: RecordRun): BatchesFeature {
  return run.deps.features.batches as BatchesFeature;
}

/**
 * Whether the record is a batch child whose dead letter counts in its batch. Not a message that
 * only carries a child's id with other data (PayloadMismatchError): the child with that id counts
 * itself, and counting this one could count it failed before it ran.
 */
function isBatchChild(run: RecordRun, input: DeadLetterInput): boolean {
  // Without batches a batch child is dead-lettered uncounted (missing-feature.ts): its redrive counts it.
  if (run.envelope?.batchid === undefined || input.job === undefined || !run.deps.features.batches)
    return false;
  return !(input.error instanceof PayloadMismatchError);
}

/**
 * First failure time for the evidence: the store's record when there is one; otherwise this
 * failure on a first attempt, and SQS's `ApproximateFirstReceiveTimestamp` on later ones (the
 * first run started then and failed, or the message would not be here again).
 */
function firstFailureAt(run: RecordRun, lease: Lease | undefined, attempts: number, nowMs: number): number {
  if (lease?.firstFailureAtMs !== undefined) return lease.firstFailureAtMs;
  if (!lease && attempts > 1) {
    const firstReceive = Number(run.record.attributes?.ApproximateFirstReceiveTimestamp);
    if (Number.isFinite(firstReceive) && firstReceive > 0) return firstReceive;
  }
  return nowMs;
}

/**
 * The original attribute a raw job's identity is read from, in the SDK's shape, to go to the DLQ
 * with the body: without it a redriven message would have no identity. Empty when there is none.
 */
function carriedAttributes(
  record: SQSRecord,
  name: string | undefined,
): Record<string, MessageAttributeValue> | undefined {
  const attribute = name === undefined ? undefined : record.messageAttributes?.[name];
  if (name === undefined || attribute?.stringValue === undefined || attribute.stringValue === '')
    return undefined;
  return { [name]: { DataType: attribute.dataType, StringValue: attribute.stringValue } };
}
