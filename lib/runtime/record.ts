/**
 * The pipeline of one SQS record: parse the envelope, route by `type`, validate `data`, take the
 * idempotency lease, run the job under its time limit, send its children, complete the lease;
 * on failure classify, then retry with backoff or dead-letter with evidence.
 *
 * It decides the record's outcome and does the record's own side effects (DLQ send, lease
 * writes); it never throws, and it does not touch visibility: the batch scheduler does, because
 * on FIFO queues a failure also holds back the rest of the group.
 */
import type { SQSRecord } from 'aws-lambda';
import { backoffDelaySeconds, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../core/backoff.ts';
import { type JobEnvelope, parseEnvelope } from '../core/envelope.ts';
import { classifyError } from '../core/errors.ts';
import type { JobLogger } from '../core/logger.ts';
import { payloadHash } from './canonical-json.ts';
import { ChildCollector, type ChildSender, childRecordKeys, sendChildren } from './children.ts';
import type { WorkerConfig } from './config.ts';
import { type DeadLetterEvidence, GROUP_PARKED_REASON, sendToDeadLetterQueue } from './dead-letter.ts';
import { type BatchParking, type JobIdentity, jobIdentityPks, parkingGroupOf } from './group-park.ts';
import { type StoredValueSubject, unfaithfulJsonReason } from './idempotency/faithful-json.ts';
import type { GroupPark, IdempotencyGuard, Lease } from './idempotency/guard.ts';
import { defaultJobKey, deriveIdempotencyKey, jobRecordKey } from './idempotency/keys.ts';
import type { EnqueueOptions, JobContext, JobDefinition, JobLineage, StepValue } from './job.ts';
import { lineageLogKeys, lineageOf, withLineage } from './lineage.ts';
import type { SqsSender } from './sqs-port.ts';
import {
  type BatchMetrics,
  type FailedJobMetadata,
  UNKNOWN_JOB_TYPE,
  type WorkerLogger,
  withKeys,
} from './telemetry.ts';
import type { RunLimit, RunLimitClock } from './timeout.ts';
import type { JobTracer } from './tracing.ts';
import {
  JobDataInvalidError,
  JobIdentityError,
  LeaseExpiredError,
  UnknownJobTypeError,
} from './worker-errors.ts';

/**
 * Visibility, in seconds, of a record not started because the Lambda deadline is near: short,
 * so it is picked up again at once by the next invocation.
 */
export const DEADLINE_RELEASE_SECONDS = 2;

// biome-ignore lint/suspicious/noExplicitAny: jobs of any data type share one worker; data is checked by each job's schema.
export type AnyJob = JobDefinition<any, any>;

/** Why a record is reported failed. */
export type RetryReason =
  /** The job failed transiently and has attempts left. */
  | 'transient'
  /** Another run holds the lease (a concurrent duplicate); no attempt spent. */
  | 'busy'
  /** Not started: the Lambda deadline is near; no attempt spent. */
  | 'deadline'
  /** The record was due for the DLQ but the DLQ send failed: it stays on the queue, never lost. */
  | 'dead-letter-failed'
  /** The idempotency store could not answer (throttling, network). */
  | 'guard-unavailable'
  /** FIFO: an earlier record of the same group was reported failed; this one was not run. */
  | 'group-blocked'
  /** FIFO, `park`: the record was due for the DLQ but its group's park could not be written. */
  | 'park-failed'
  /** FIFO, `park`: the blocking job completed but its group's park could not be cleared; its next delivery is absorbed and clears it. */
  | 'unpark-failed'
  /** A bug in the worker itself. */
  | 'internal';

/** What happened to one record. Only `retry` is reported in `batchItemFailures`. */
export type RecordOutcome =
  | { readonly status: 'completed' }
  | { readonly status: 'duplicate' }
  | { readonly status: 'dead-lettered' }
  | { readonly status: 'retry'; readonly delaySeconds: number; readonly reason: RetryReason };

/** Everything the pipeline needs; built per invocation by the worker. */
export interface RecordDeps {
  readonly jobs: ReadonlyMap<string, AnyJob>;
  /** Undefined when idempotency is off for the worker. */
  readonly guard: IdempotencyGuard | undefined;
  /** FIFO group parking of this invocation; undefined when no job of the worker parks (no reads). */
  readonly parking: BatchParking | undefined;
  readonly sqs: SqsSender;
  /** Sends children; called only when a run enqueued some. */
  readonly childSender: () => ChildSender;
  /** The `AWSTraceHeader` a record's children carry (chain-trace.ts); undefined: none set. */
  readonly childTraceHeaderOf?: ((record: SQSRecord) => string | undefined) | undefined;
  readonly config: WorkerConfig;
  readonly logger: WorkerLogger;
  readonly metrics: BatchMetrics;
  /** Epoch milliseconds. */
  readonly now: () => number;
  /** Uniform [0, 1), for backoff jitter. */
  readonly random: () => number;
  /** Milliseconds left in the invocation (`context.getRemainingTimeInMillis`). */
  readonly remainingMs: () => number;
  /** Milliseconds kept free before the Lambda deadline. */
  readonly deadlineMarginMs: number;
  /** The timer of the invocation's run limits (one for the batch; disposed by the worker at its end). */
  readonly runLimits: RunLimitClock;
  /**
   * Level of the per-record success line (`job completed`), or undefined for none: failures are
   * always logged, and the worker writes one summary line per batch (docs/contracts.md, "Logs").
   */
  readonly completedLogLevel: 'info' | 'debug' | undefined;
  /** X-Ray: records a subsegment per record; undefined when the invocation is not traced (tracing.ts). */
  readonly jobTracer?: JobTracer | undefined;
}

/**
 * Per-record state threaded through the stages. Its loggers are built on first use: a record
 * that completes logs nothing of its own by default, and building them for every record was a
 * good part of the worker's allocations per record (issue 10 profile).
 */
class RecordRun {
  readonly record: SQSRecord;
  readonly deps: RecordDeps;
  readonly receiveCount: number;
  jobType: string | undefined = undefined;
  /** The FIFO message group to park or check; undefined when parking does not apply. */
  readonly groupId: string | undefined;
  /** Who the job is (once the envelope is read): what a park names, what recognises a blocker. */
  identity: JobIdentity | undefined = undefined;
  /** Set when this record is the blocking job of its parked group, coming back (a redrive). */
  blocker: GroupPark | undefined = undefined;
  #envelope: JobEnvelope | undefined;
  /** For the trace: the job's key once known. */
  key: string | undefined = undefined;
  #attempt: number | undefined;
  #lineageLogger: WorkerLogger | undefined;
  #logger: WorkerLogger | undefined;

  constructor(record: SQSRecord, deps: RecordDeps) {
    this.record = record;
    this.deps = deps;
    this.receiveCount = readReceiveCount(record);
    this.groupId = deps.parking ? parkingGroupOf(record) : undefined;
  }

  /** The envelope, once read. */
  get envelope(): JobEnvelope | undefined {
    return this.#envelope;
  }

  /** The worker's logger with the envelope's lineage keys, once the envelope is read. */
  get lineageLogger(): WorkerLogger {
    if (this.#envelope === undefined) return this.deps.logger;
    this.#lineageLogger ??= withLineage(this.deps.logger, this.#envelope);
    return this.#lineageLogger;
  }

  /** The record's logger: `messageId`, then `jobType` and `jobId` once read, then `attempt` once known. */
  get logger(): WorkerLogger {
    if (this.#logger === undefined) {
      const envelope = this.#envelope;
      const keys: Record<string, unknown> = { messageId: this.record.messageId };
      if (envelope !== undefined) {
        keys.jobType = envelope.type;
        keys.jobId = envelope.id;
      }
      if (this.#attempt !== undefined) keys.attempt = this.#attempt;
      this.#logger = withKeys(this.lineageLogger, keys);
    }
    return this.#logger;
  }

  /** The envelope is read: its type and id (and lineage) go into the logs from now on. */
  readEnvelope(envelope: JobEnvelope): void {
    this.#envelope = envelope;
    this.jobType = envelope.type;
    this.#lineageLogger = undefined;
    this.#logger = undefined;
  }

  /** The attempt is known (the run starts): it goes into the logs from now on. */
  startAttempt(attempt: number): void {
    this.#attempt = attempt;
    this.#logger = undefined;
  }
}

const retry = (delaySeconds: number, reason: RetryReason): RecordOutcome => ({
  status: 'retry',
  delaySeconds,
  reason,
});

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

function readReceiveCount(record: SQSRecord): number {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isInteger(count) && count >= 1 ? count : 1;
}

async function pipeline(run: RecordRun): Promise<RecordOutcome> {
  const { deps, record } = run;
  let envelope: JobEnvelope;
  try {
    envelope = parseEnvelope(record.body);
  } catch (error) {
    return deadLetter(run, { error, reason: classifyError(error).reason, attempts: run.receiveCount });
  }
  run.readEnvelope(envelope);
  // Only a parking worker needs who the job is (what a park names, what recognises a blocker).
  if (deps.parking) {
    run.identity = {
      jobType: envelope.type,
      jobId: envelope.id,
      pks: jobIdentityPks(envelope.type, undefined, envelope.source, envelope.id),
    };
  }

  const job = deps.jobs.get(envelope.type);
  if (!job) {
    const error = new UnknownJobTypeError(envelope.type, [...deps.jobs.keys()]);
    return deadLetter(run, { error, reason: error.name, attempts: run.receiveCount });
  }

  let data: unknown;
  try {
    // Standard Schema validators may answer synchronously (zod does): no await then, one microtask turn less per record.
    const validated = job.schema['~standard'].validate(envelope.data);
    const result = validated instanceof Promise ? await validated : validated;
    if (result.issues) {
      const error = new JobDataInvalidError(job.type, result.issues.map(formatIssue));
      return deadLetter(run, { error, reason: error.name, attempts: run.receiveCount, job });
    }
    data = result.value;
  } catch (error) {
    // A validator that throws is a bug or an outage of its own, not bad data: classify it.
    return failed(run, job, error, undefined, undefined);
  }

  const jobTimeoutMs = job.timeoutSeconds * 1000;
  const lambdaBudgetMs = deps.remainingMs() - deps.deadlineMarginMs;
  const guarded = deps.guard !== undefined && job.idempotency?.enabled !== false;
  let identity: { readonly key: string; readonly payloadHash: string | undefined };
  try {
    // Before any store is asked: what fails here fails on every delivery (a JobIdentityError).
    identity = identify(job, envelope, data, guarded);
  } catch (error) {
    return failed(run, job, error, undefined, undefined);
  }
  const { key } = identity;
  run.key = key;
  if (run.identity) {
    run.identity = { ...run.identity, pks: jobIdentityPks(job.type, key, envelope.source, envelope.id) };
  }
  const parked = await checkParkedGroup(run, job);
  if (parked) return parked;

  let lease: Lease | undefined;
  if (identity.payloadHash !== undefined) {
    const begun = await beginLease(
      run,
      job,
      envelope,
      key,
      identity.payloadHash,
      jobTimeoutMs,
      lambdaBudgetMs,
    );
    if ('outcome' in begun) return begun.outcome;
    lease = begun.lease;
  }
  return runJob(run, job, envelope, data, key, lease, jobTimeoutMs, lambdaBudgetMs);
}

/**
 * The job's identity from its message: its idempotency key (the job's `idempotency.key(data)`,
 * default `source` + `id`), and the hash of its data when the idempotency guard will be asked
 * (`hashed`; the hash is made nowhere else). Pure functions of the message: whatever they throw
 * becomes a {@link JobIdentityError} (permanent), so it can never pass for a store outage.
 * @throws {JobIdentityError} when the key function throws or returns no non-empty string, or the data cannot be hashed.
 */
function identify(
  job: AnyJob,
  envelope: JobEnvelope,
  data: unknown,
  hashed: boolean,
): { readonly key: string; readonly payloadHash: string | undefined } {
  let key: unknown;
  try {
    key = job.idempotency?.key ? job.idempotency.key(data) : defaultJobKey(envelope.source, envelope.id);
  } catch (error) {
    throw new JobIdentityError(
      job.type,
      'key',
      `idempotency.key(data) threw ${describeThrown(error)}`,
      error,
    );
  }
  if (typeof key !== 'string' || key === '') {
    throw new JobIdentityError(
      job.type,
      'key',
      `idempotency.key(data) must return a non-empty string, got ${key === '' ? 'an empty string' : typeof key}`,
    );
  }
  if (!hashed) return { key, payloadHash: undefined };
  try {
    return { key, payloadHash: payloadHash(envelope.data) };
  } catch (error) {
    throw new JobIdentityError(
      job.type,
      'payload-hash',
      `hashing the data threw ${describeThrown(error)}`,
      error,
    );
  }
}

/** `Name: message` of a thrown value, for an error message; never throws. */
function describeThrown(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : `a non-error (${typeof error})`;
  } catch {
    return 'an error that cannot be described';
  }
}

function formatIssue(issue: {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}): string {
  const path = (issue.path ?? [])
    .map((segment) => String(typeof segment === 'object' ? segment.key : segment))
    .join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}

/** Asks the guard; returns the lease to run under, or the record's outcome when it must not run. */
async function beginLease(
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
      jobType: job.type,
      key,
      payloadHash: hash,
      // The run may take its budget, then children and completion need up to the margin again.
      leaseExpiresAtMs:
        deps.now() + Math.max(0, Math.min(jobTimeoutMs, lambdaBudgetMs)) + deps.deadlineMarginMs,
      onLeaseExpired: job.idempotency?.onLeaseExpired ?? 'rerun',
      messageId: run.record.messageId,
      ...(envelope.parentjob === undefined ? {} : { parentJob: envelope.parentjob }),
    });
  } catch (error) {
    // Only the store's own call is in this try: what the message decides (key, hash) was computed
    // before, so a failure here is the store's answer (throttling, network), not the message's.
    const classification = classifyError(error, deps.now());
    if (classification.kind === 'permanent') {
      return {
        outcome: await deadLetter(run, {
          error,
          reason: classification.reason,
          attempts: run.receiveCount,
          job,
        }),
      };
    }
    // The store could not answer: no attempt was counted, so do not dead-letter on its account;
    // the queue's maxReceiveCount (above maxAttempts) is the safety net for a long outage.
    const delaySeconds = backoffDelaySeconds(
      run.receiveCount,
      job.retry,
      classification.minDelayMs,
      deps.random,
    );
    run.logger.warn('idempotency store unavailable; record will be retried', {
      outcome: 'retry',
      reason: classification.reason,
      delaySeconds,
      error,
    });
    return { outcome: retry(delaySeconds, 'guard-unavailable') };
  }

  switch (begun.status) {
    case 'acquired':
      return { lease: begun.lease };
    case 'completed':
      deps.metrics.add(job.type, 'JobDuplicateAbsorbed');
      run.logger.info('duplicate delivery absorbed: the job already completed', {
        outcome: 'duplicate',
        resultStored: begun.resultStored,
      });
      return { outcome: (await unparkAfterCompletion(run, job)) ?? { status: 'duplicate' } };
    case 'dead-lettered':
      deps.metrics.add(job.type, 'JobDuplicateAbsorbed');
      run.logger.info('duplicate delivery absorbed: this message was already dead-lettered', {
        outcome: 'duplicate',
      });
      return { outcome: { status: 'duplicate' } };
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

/**
 * The context of one run (`ctx`). A class, not an object literal of closures: it is made for
 * every record, and its methods and getters live on the prototype. The AbortController (via the
 * run limit), the logger and the lineage are made only when the job reads them.
 */
class RunContext implements JobContext {
  readonly attempt: number;
  readonly jobId: string;
  readonly source: string;
  readonly partitionKey: string | undefined;
  /** The children enqueued so far; made on the first enqueue (most runs enqueue nothing). */
  children: ChildCollector | undefined;
  readonly #run: RecordRun;
  readonly #job: AnyJob;
  readonly #envelope: JobEnvelope;
  readonly #key: string;
  readonly #lease: Lease | undefined;
  readonly #limit: RunLimit;

  constructor(
    run: RecordRun,
    job: AnyJob,
    envelope: JobEnvelope,
    key: string,
    lease: Lease | undefined,
    limit: RunLimit,
    attempt: number,
    partitionKey: string | undefined,
  ) {
    this.#run = run;
    this.#job = job;
    this.#envelope = envelope;
    this.#key = key;
    this.#lease = lease;
    this.#limit = limit;
    this.attempt = attempt;
    this.jobId = envelope.id;
    this.source = envelope.source;
    this.partitionKey = partitionKey;
  }

  get signal(): AbortSignal {
    return this.#limit.signal;
  }

  get logger(): JobLogger {
    return this.#run.logger;
  }

  get lineage(): JobLineage {
    return lineageOf(this.#envelope);
  }

  enqueue<D>(child: JobDefinition<D>, childData: NoInfer<D>, options?: EnqueueOptions): void {
    this.children ??= new ChildCollector({
      source: this.#envelope.source,
      id: this.#envelope.id,
      partitionKey: this.partitionKey,
      lineage: this.#envelope,
      job: jobRecordKey(this.#job.type, this.#key),
      awsTraceHeader: this.#run.deps.childTraceHeaderOf?.(this.#run.record),
    });
    this.children.add(child, childData, options);
  }

  once<T>(stepName: string, fn: () => Promise<T & StepValue<T>>): Promise<T> {
    return this.#lease ? onceUnderLease(this.#run, this.#lease, stepName, fn) : fn();
  }

  idempotencyKey(stepName: string): string {
    return this.#lease
      ? this.#lease.idempotencyKey(stepName)
      : deriveIdempotencyKey(this.#job.type, this.#key, stepName);
  }
}

async function runJob(
  run: RecordRun,
  job: AnyJob,
  envelope: JobEnvelope,
  data: unknown,
  key: string,
  lease: Lease | undefined,
  jobTimeoutMs: number,
  lambdaBudgetMs: number,
): Promise<RecordOutcome> {
  const { deps } = run;
  const attempt = lease?.attempt ?? run.receiveCount;
  const partitionKey = envelope.partitionkey ?? run.record.attributes?.MessageGroupId;
  run.startAttempt(attempt);
  const limit = deps.runLimits.start(job.type, jobTimeoutMs, lambdaBudgetMs);
  const ctx = new RunContext(run, job, envelope, key, lease, limit, attempt, partitionKey);

  const startedAt = deps.now();
  let result: unknown;
  try {
    result = await limit.race(startRun(job, data, ctx));
  } catch (error) {
    // When the limit fired, its JobTimeoutError says more than the AbortError the job rethrew.
    const failure = limit.reason ?? error;
    return failed(run, job, failure, lease, deps.now() - startedAt);
  } finally {
    limit.dispose();
  }

  let sentChildren = 0;
  const children = ctx.children;
  let childLinks: string[] | undefined;
  if (children !== undefined && children.entries.length > 0) {
    try {
      const sender = deps.childSender();
      sentChildren = await sendChildren(sender, children.entries);
      // The parent's record links its children (the chain walk down), when their source is known.
      if (lease && sender.source !== undefined) childLinks = childRecordKeys(children.entries, sender.source);
    } catch (error) {
      return failed(run, job, error, lease, deps.now() - startedAt);
    }
  }
  const durationMs = deps.now() - startedAt;

  if (lease) {
    warnIfNotStored(run, result, { kind: 'result', jobType: job.type });
    try {
      const write = await (childLinks === undefined
        ? lease.complete(result)
        : lease.complete(result, childLinks));
      if (write === 'fenced') {
        deps.metrics.add(job.type, 'JobLeaseFenced');
        run.logger.warn(
          'lease was taken over by another run before completion; its run will complete the key',
        );
      }
    } catch (error) {
      // The work and its children are done: acknowledging risks a rare re-run on a duplicate
      // delivery, while retrying would re-run it for certain.
      run.logger.error('could not mark the job completed in the idempotency store', { error });
    }
  }
  deps.metrics.add(job.type, 'JobCompleted');
  deps.metrics.add(job.type, 'JobDuration', durationMs);
  if (deps.completedLogLevel !== undefined) {
    run.logger[deps.completedLogLevel]('job completed', {
      outcome: 'completed',
      durationMs,
      children: sentChildren,
    });
  }
  // Only the blocker of a parked group has anything to unpark: no await for the others.
  if (run.blocker === undefined) return COMPLETED;
  return (await unparkAfterCompletion(run, job)) ?? COMPLETED;
}

const COMPLETED: RecordOutcome = Object.freeze({ status: 'completed' });

/**
 * `ctx.once` under a lease: the step runs at most once per job key. A value the step function
 * returned in this run that would not read back the same from its JSON text (a `Date`, a `Map`,
 * `NaN`...) is not stored by the store (marker `not-json`): said here at WARN, on the run that
 * produced it, before any retry meets `StepValueNotStoredError`.
 */
async function onceUnderLease<T>(
  run: RecordRun,
  lease: Lease,
  stepName: string,
  fn: () => Promise<T>,
): Promise<T> {
  const value = await lease.once(stepName, fn);
  warnIfNotStored(run, value, { kind: 'step', stepName });
  return value;
}

/** What the store does instead of storing a value that would not read back the same. */
const NOT_STORED_CONSEQUENCE = {
  step: "the step's value is not stored (marker not-json): a retry of this job that reaches the step is dead-lettered with StepValueNotStoredError instead of running it again; return a JSON value from the step",
  result:
    'the result is not stored (marker not-json): a duplicate delivery is absorbed with resultStored false; return a JSON value from the job',
} as const;

/** Logs at WARN, with the sentence the store records, when `value` would not read back the same. */
function warnIfNotStored(run: RecordRun, value: unknown, subject: StoredValueSubject): void {
  const reason = unfaithfulJsonReason(value, subject);
  if (reason === undefined) return;
  run.logger.warn(reason, {
    notStored: subject.kind,
    ...(subject.kind === 'step' ? { stepName: subject.stepName } : {}),
    consequence: NOT_STORED_CONSEQUENCE[subject.kind],
  });
}

/**
 * FIFO, parking worker: what the park of the record's group means for it (read once per group
 * and batch). Not parked, or parked behind this very job (a redrive of the blocker): undefined,
 * run it. Parked behind another job: dead-lettered as `GroupParked` without running. The store
 * unreadable: retried like any store outage, without spending an attempt.
 */
async function checkParkedGroup(run: RecordRun, job: AnyJob): Promise<RecordOutcome | undefined> {
  const { deps, groupId } = run;
  if (!deps.parking || groupId === undefined || !run.identity) return undefined;
  let check: Awaited<ReturnType<BatchParking['check']>>;
  try {
    check = await deps.parking.check(groupId, run.identity.pks);
  } catch (error) {
    const classification = classifyError(error, deps.now());
    if (classification.kind === 'permanent') {
      return deadLetter(run, {
        error,
        reason: classification.reason,
        attempts: run.receiveCount,
        job,
        noPark: true,
      });
    }
    const delaySeconds = backoffDelaySeconds(
      run.receiveCount,
      job.retry,
      classification.minDelayMs,
      deps.random,
    );
    run.logger.warn('could not read whether the message group is parked; record will be retried', {
      outcome: 'retry',
      reason: classification.reason,
      delaySeconds,
      error,
    });
    return retry(delaySeconds, 'guard-unavailable');
  }
  if (check.kind === 'free') return undefined;
  if (check.kind === 'blocker') {
    run.blocker = check.park;
    run.logger.info('the blocking job of a parked message group runs again', { messageGroupId: groupId });
    return undefined;
  }
  const error = deps.parking.parkedError(groupId, check.park);
  return deadLetter(run, { error, reason: GROUP_PARKED_REASON, attempts: 0, job, noPark: true });
}

/**
 * After the blocking job of a parked group completed (or was found completed): clears the park,
 * so the group's later records run. When that write fails the record is reported failed: its
 * next delivery is absorbed as a duplicate (the key is completed) and clears the park then; the
 * group's later records wait behind it meanwhile, as on any FIFO retry.
 */
async function unparkAfterCompletion(run: RecordRun, job: AnyJob): Promise<RecordOutcome | undefined> {
  const { deps, groupId, blocker } = run;
  if (!deps.parking || groupId === undefined || !blocker) return undefined;
  try {
    const outcome = await deps.parking.unpark(groupId, blocker.blockerPk);
    run.logger.info('the blocking job completed; its message group is no longer parked', {
      messageGroupId: groupId,
      unpark: outcome,
    });
    return undefined;
  } catch (error) {
    const delaySeconds = backoffDelaySeconds(run.receiveCount, job.retry, 0, deps.random);
    run.logger.error(
      'the blocking job completed but its message group could not be unparked; record will be retried',
      {
        outcome: 'retry',
        reason: 'unpark-failed',
        messageGroupId: groupId,
        delaySeconds,
        error,
      },
    );
    return retry(delaySeconds, 'unpark-failed');
  }
}

/** Starts a job's run; a synchronous throw inside `run` becomes a rejection. */
function startRun(job: AnyJob, data: unknown, ctx: JobContext): Promise<unknown> {
  try {
    return Promise.resolve(job.run(data, ctx));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A run (or a stage after routing) failed: retry with backoff, or dead-letter. */
async function failed(
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

/** Lists a failed record with its lineage in the EMF metadata of its job type (`failedJobs`). */
function noteFailure(run: RecordRun, jobType: string, outcome: 'retry' | 'dead-lettered'): void {
  const failure = failureOf(run, outcome);
  if (failure !== undefined) run.deps.metrics.addFailure(jobType, failure);
}

/** A failed record and its lineage as `failedJobs` lists it; undefined before the envelope is read. */
function failureOf(run: RecordRun, outcome: 'retry' | 'dead-lettered'): FailedJobMetadata | undefined {
  const { envelope } = run;
  if (envelope === undefined) return undefined;
  return { jobId: envelope.id, outcome, ...lineageLogKeys(envelope) };
}

async function failLease(
  run: RecordRun,
  lease: Lease,
  error: unknown,
  kind: 'transient' | 'permanent',
): Promise<void> {
  try {
    const write = await lease.fail(error, kind);
    if (write === 'fenced') {
      run.deps.metrics.add(run.jobType ?? UNKNOWN_JOB_TYPE, 'JobLeaseFenced');
      run.logger.warn('lease was taken over by another run before it was released', { kind });
    }
  } catch (leaseError) {
    // The lease expires on its own; the record's outcome does not depend on this write.
    run.logger.error('could not record the failure in the idempotency store', { kind, error: leaseError });
  }
}

interface DeadLetterInput {
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
async function deadLetter(run: RecordRun, input: DeadLetterInput): Promise<RecordOutcome> {
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
  const parkFailed = input.noPark ? undefined : await parkGroup(run, input, policy);
  if (parkFailed) return parkFailed;
  try {
    await sendToDeadLetterQueue({ sqs: deps.sqs, dlqUrl: deps.config.dlqUrl, record, evidence });
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
  if (input.lease) await failLease(run, input.lease, input.error, 'permanent');
  await unparkUnderContinue(run, input);
  run.logger.error('job dead-lettered', {
    outcome: 'dead-lettered',
    reason: input.reason,
    attempts: input.attempts,
    error: input.error,
  });
  return { status: 'dead-lettered' };
}

/**
 * FIFO, parking worker, before the DLQ send: parks the record's group when its job's policy is
 * `park` (group-park.ts decides). A park that cannot be written must not let the group go on, so
 * the record is then not dead-lettered but reported failed (its lease released as after a failed
 * DLQ send): it comes back and is dead-lettered, parking its group, once the store answers.
 */
async function parkGroup(
  run: RecordRun,
  input: DeadLetterInput,
  policy: RetryPolicy,
): Promise<RecordOutcome | undefined> {
  const { deps, groupId } = run;
  if (!deps.parking || groupId === undefined) return undefined;
  try {
    const parked = await deps.parking.parkOnDeadLetter(
      groupId,
      input.job,
      run.identity,
      run.record.messageId,
      input.reason,
    );
    if (parked) {
      run.logger.warn('message group parked: its later messages are dead-lettered until this job completes', {
        messageGroupId: groupId,
        park: parked.status,
        blockerJobType: parked.park.blockerJobType,
        blockerJobId: parked.park.blockerJobId,
        parkCount: parked.park.parkCount,
      });
    }
    return undefined;
  } catch (error) {
    if (input.lease && !input.keepLeaseOnSendFailure)
      await failLease(run, input.lease, input.error, 'transient');
    const delaySeconds = backoffDelaySeconds(input.attempts, policy, 0, deps.random);
    run.logger.error('could not park the message group; the record stays on the queue', {
      outcome: 'retry',
      reason: 'park-failed',
      messageGroupId: groupId,
      delaySeconds,
      error,
      jobError: input.error,
    });
    return retry(delaySeconds, 'park-failed');
  }
}

/**
 * The blocker of a parked group dead-lettered again after its job's policy became `continue`:
 * its park goes, so the group goes on as that policy says. Best effort: a failure is logged, and
 * the park stays until its TTL or an operator deletes it.
 */
async function unparkUnderContinue(run: RecordRun, input: DeadLetterInput): Promise<void> {
  const { deps, groupId, blocker } = run;
  if (!deps.parking || groupId === undefined || !blocker || deps.parking.policyOf(input.job) !== 'continue')
    return;
  try {
    await deps.parking.unpark(groupId, blocker.blockerPk);
  } catch (error) {
    run.logger.error('could not unpark the message group of a job whose policy is now continue', {
      messageGroupId: groupId,
      error,
    });
  }
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
