/**
 * The pipeline of one SQS record, read top to bottom as its stages: parse the envelope, route by
 * `type`, validate `data`, identify the job (key, payload hash), check its FIFO group's park,
 * take the idempotency lease, run the job under its time limit, send its children, complete the
 * lease (run-job.ts); on failure classify, then retry with backoff or dead-letter with evidence
 * (failed.ts, dead-lettering.ts). One stage per file in this folder.
 *
 * It decides the record's outcome and does the record's own side effects (DLQ send, lease
 * writes); it never throws, and it does not touch visibility: the batch scheduler does, because
 * on FIFO queues a failure also holds back the rest of the group.
 *
 * This is the worker's hot path: the stages are plain functions called in sequence, with no
 * await where a stage answers synchronously (a synchronous schema) and no object made per record
 * beyond what each stage needs.
 */
import type { SQSRecord } from 'aws-lambda';
import { backoffDelaySeconds, DEFAULT_RETRY_POLICY } from '../../core/backoff.ts';
import { type JobEnvelope, parseEnvelope } from '../../core/envelope.ts';
import { classifyError } from '../../core/errors.ts';
import type { Lease } from '../idempotency/guard.ts';
import { identityTypeOf } from '../job.ts';
import type { JobTracer } from '../tracing.ts';
import { OrderedJobWithoutGroupError, UnknownJobTypeError } from '../worker-errors.ts';
import { deadLetter } from './dead-lettering.ts';
import type { AnyJob, RecordDeps } from './deps.ts';
import { failed } from './failed.ts';
import { identify, type RecordIdentity } from './identify.ts';
import { beginLease } from './lease.ts';
import { deadLetterMissingFeature } from './missing-feature.ts';
import { DEADLINE_RELEASE_SECONDS, type RecordOutcome, retry } from './outcome.ts';
import { RecordRun } from './record-run.ts';
import { runJob } from './run-job.ts';
import { invalidDataError } from './validate.ts';

export type { AnyJob, RecordDeps } from './deps.ts';
export { DEADLINE_RELEASE_SECONDS, type RecordOutcome, type RetryReason } from './outcome.ts';

/**
 * Processes one record. Never throws.
 *
 * Deadline rule: the record is started only while more than `deadlineMarginMs` remain in the
 * invocation; otherwise it is reported failed with a {@link DEADLINE_RELEASE_SECONDS} visibility
 * and the idempotency store is not asked, so no attempt is counted (without a store the attempt
 * is SQS's `ApproximateReceiveCount`, which the receive has already raised).
 */
export function processRecord(record: SQSRecord, deps: RecordDeps): Promise<RecordOutcome> {
  const run = new RecordRun(record, deps);
  // Not async itself: an async wrapper returning runRecord's promise costs extra microtask turns per record.
  return deps.jobTracer === undefined ? runRecord(run) : tracedRecord(run, deps.jobTracer);
}

/** {@link runRecord} with an X-Ray subsegment for the record (a sampled invocation). */
async function tracedRecord(run: RecordRun, jobTracer: JobTracer): Promise<RecordOutcome> {
  const { deps, record } = run;
  const startedAtMs = deps.now();
  const outcome = await runRecord(run);
  jobTracer.recordJob({
    jobType: run.jobType,
    key: run.key,
    outcome: outcome.status,
    retryReason: outcome.status === 'retry' ? outcome.reason : undefined,
    queue: deps.config.queueName,
    messageId: record.messageId,
    receiveCount: run.receiveCount,
    envelope: run.envelope,
    startedAtMs,
  });
  return outcome;
}

/** The deadline rule, then the stages; a throw out of them (a worker bug) is retried as `internal`. */
async function runRecord(run: RecordRun): Promise<RecordOutcome> {
  const { deps } = run;
  if (deps.remainingMs() <= deps.deadlineMarginMs) {
    run.logger.info('record not started: the Lambda deadline is near', {
      outcome: 'deferred',
      remainingMs: deps.remainingMs(),
      deadlineMarginMs: deps.deadlineMarginMs,
      visibilitySeconds: DEADLINE_RELEASE_SECONDS,
    });
    return retry(DEADLINE_RELEASE_SECONDS, 'deadline');
  }
  try {
    return await pipeline(run);
  } catch (error) {
    run.logger.error('unexpected error in the worker while processing a record', { outcome: 'retry', error });
    return retry(backoffDelaySeconds(run.receiveCount, DEFAULT_RETRY_POLICY, 0, deps.random), 'internal');
  }
}

/**
 * The record came from a FIFO queue's message group: it has a `MessageGroupId` and, when the
 * source queue is named, a `.fifo` one (a standard queue may carry a `MessageGroupId` for fair
 * queuing, without any order).
 */
function fromFifoGroup(record: SQSRecord): boolean {
  if (!record.attributes?.MessageGroupId) return false;
  return !record.eventSourceARN || record.eventSourceARN.endsWith('.fifo');
}

/** The stages in order; each returns early with the record's outcome when the record stops there. */
async function pipeline(run: RecordRun): Promise<RecordOutcome> {
  const { deps, record } = run;

  // 1. Parse: a body that is no envelope fails on every delivery, unless a job takes raw messages (raw.ts).
  let envelope: JobEnvelope;
  let rawMessage = false;
  try {
    envelope = parseEnvelope(record.body);
    // A valid CloudEvent naming none of this worker's jobs is a foreign event: the raw job's
    // (raw-messages.ts, isOwnEnvelope); without a raw job it is an unknown type (step 2).
    if (deps.rawJob !== undefined && !deps.jobs.has(envelope.type)) {
      throw new UnknownJobTypeError(envelope.type, [...deps.jobs.keys()]);
    }
  } catch (error) {
    const raw = deps.rawJob === undefined ? undefined : readRaw(run, deps.rawJob);
    if (raw === undefined) {
      return deadLetter(run, { error, reason: classifyError(error).reason, attempts: run.receiveCount });
    }
    if ('failure' in raw) return raw.failure;
    envelope = raw.envelope;
    rawMessage = true;
  }
  run.readEnvelope(envelope);
  const { features } = deps;
  // A batch's watchdog is the worker's own message, not a job (batches/watchdog.ts).
  if (envelope.batchwatch !== undefined) {
    return features.batches
      ? features.batches.watchBatch(run, envelope)
      : deadLetterMissingFeature(run, 'batches', 'a batch watchdog message (batchwatch)', undefined);
  }
  // Only a parking worker needs who the job is (what a park names, what recognises a blocker).
  const parking = deps.parking ? features.groupParking : undefined;
  if (parking) {
    run.identity = {
      jobType: envelope.type,
      jobId: envelope.id,
      pks: parking.jobIdentityPks(envelope.type, undefined, envelope.source, envelope.id),
    };
  }

  // 2. Route by `type`.
  const job = deps.jobs.get(envelope.type);
  if (!job) {
    const error = new UnknownJobTypeError(envelope.type, [...deps.jobs.keys()]);
    return deadLetter(run, { error, reason: error.name, attempts: run.receiveCount });
  }
  // 2b. A job that needs order per key runs only from a FIFO message group (job.ts, `ordered`).
  if (job.ordered === true && !fromFifoGroup(record)) {
    const error = new OrderedJobWithoutGroupError(job.type, record.eventSourceARN);
    return deadLetter(run, { error, reason: error.name, attempts: run.receiveCount, job });
  }

  // 2c. A batch child or completion job is counted in its batch: never run without batches.
  if (
    features.batches === undefined &&
    (envelope.batchid !== undefined || envelope.completesbatch !== undefined)
  ) {
    const what =
      envelope.batchid !== undefined ? 'a batch child (batchid)' : 'a batch completion job (completesbatch)';
    return deadLetterMissingFeature(run, 'batches', `job ${job.type}: ${what}`, job);
  }

  // 2d. A job sent for later (`runat`): not early, not cancelled, not superseded (scheduled.ts);
  // never run without that check (it may have been cancelled).
  if (envelope.runat !== undefined) {
    if (features.scheduledJobs === undefined) {
      return deadLetterMissingFeature(
        run,
        'scheduledJobs',
        `job ${job.type}: a job sent for later (runat), whose cancel check`,
        job,
      );
    }
    const stopped = await features.scheduledJobs.checkScheduled(run, job, envelope);
    if (stopped) return stopped;
  }

  // 3. Validate `data` against the job's schema (validate.ts).
  let data: unknown;
  try {
    // Standard Schema validators may answer synchronously (zod does): no await then, one microtask turn less per record.
    const validated = job.schema['~standard'].validate(envelope.data);
    const result = validated instanceof Promise ? await validated : validated;
    if (result.issues) {
      const error = invalidDataError(job.type, result.issues);
      return deadLetter(run, { error, reason: error.name, attempts: run.receiveCount, job });
    }
    data = result.value;
  } catch (error) {
    // A validator that throws is a bug or an outage of its own, not bad data: classify it.
    return failed(run, job, error, undefined, undefined);
  }

  // 4. Identify: key and payload hash (identify.ts).
  const jobTimeoutMs = job.timeoutSeconds * 1000;
  const lambdaBudgetMs = deps.remainingMs() - deps.deadlineMarginMs;
  const guarded = deps.guard !== undefined && job.idempotency?.enabled !== false;
  let identity: RecordIdentity;
  try {
    // Before any store is asked: what fails here fails on every delivery (a JobIdentityError).
    identity = identify(job, envelope, data, guarded, rawMessage);
  } catch (error) {
    return failed(run, job, error, undefined, undefined);
  }
  const { key } = identity;
  run.key = key;
  if (run.identity && parking) {
    run.identity = {
      ...run.identity,
      pks: parking.jobIdentityPks(identityTypeOf(job), key, envelope.source, envelope.id),
    };
  }

  // 5. FIFO, parking worker: is the group parked behind another job? (parked-group.ts)
  if (parking) {
    const parked = await parking.checkParkedGroup(run, job);
    if (parked) return parked;
  }

  // 6. Per-key concurrency: a slot, or wait without spending an attempt (concurrency-slot.ts).
  // Before the lease, so a wait never counts as an attempt; the slot ends when the lease would.
  // Jobs without a limit skip the stage without an await (the hot path).
  if (job.concurrency === undefined) {
    return leaseAndRun(run, job, envelope, data, identity, jobTimeoutMs, lambdaBudgetMs);
  }
  // createWorker refuses a job with limits and no limits feature; a hand-built deps gets this.
  const limits = features.limits;
  if (limits === undefined) {
    return deadLetterMissingFeature(run, 'limits', `job ${job.type}: a concurrency limit`, job);
  }
  const slotted = await limits.takeSlot(
    run,
    job,
    data,
    deps.now() + Math.max(0, Math.min(jobTimeoutMs, lambdaBudgetMs)) + deps.deadlineMarginMs,
  );
  if ('outcome' in slotted) return slotted.outcome;
  try {
    return await leaseAndRun(run, job, envelope, data, identity, jobTimeoutMs, lambdaBudgetMs);
  } finally {
    await limits.releaseSlot(run, slotted.slot);
  }
}

/** Takes the idempotency lease (lease.ts), then runs, sends children, completes (run-job.ts). */
async function leaseAndRun(
  run: RecordRun,
  job: AnyJob,
  envelope: JobEnvelope,
  data: unknown,
  identity: RecordIdentity,
  jobTimeoutMs: number,
  lambdaBudgetMs: number,
): Promise<RecordOutcome> {
  // 7. Take the idempotency lease (lease.ts).
  let lease: Lease | undefined;
  if (identity.payloadHash !== undefined) {
    const begun = await beginLease(
      run,
      job,
      envelope,
      identity.key,
      identity.payloadHash,
      jobTimeoutMs,
      lambdaBudgetMs,
    );
    if ('outcome' in begun) return begun.outcome;
    lease = begun.lease;
  }

  // 8. Run, send children, complete (run-job.ts); a failure goes to failed.ts.
  return runJob(run, job, envelope, data, identity.key, lease, jobTimeoutMs, lambdaBudgetMs);
}

/**
 * A body that is not an envelope, read as the raw job's message: its envelope, or its dead letter
 * when the message cannot be read (the job's type goes into the evidence); undefined when the body
 * is an envelope of this worker after all (raw-messages.ts, isOwnEnvelope), whose own error stands.
 */
function readRaw(
  run: RecordRun,
  job: AnyJob,
): { envelope: JobEnvelope } | { failure: Promise<RecordOutcome> } | undefined {
  const feature = run.deps.features.rawMessages;
  // createWorker refuses a raw job without the feature; a hand-built deps reads no raw message.
  if (feature === undefined) return undefined;
  try {
    const envelope = feature.rawEnvelopeOf(run.record, job, run.deps.jobs);
    return envelope === undefined ? undefined : { envelope };
  } catch (error) {
    run.jobType = job.type;
    return {
      failure: deadLetter(run, {
        error,
        reason: classifyError(error).reason,
        attempts: run.receiveCount,
        job,
      }),
    };
  }
}
