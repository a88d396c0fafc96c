/**
 * `runJob`: one job's `run` called the way the worker calls it, with a context made for a test,
 * and what it did handed back: its result or thrown error (classified as the worker would), the
 * children it enqueued (with the ids the worker would send them under), the `once` steps it ran or
 * skipped, its log lines. No queue, no Lambda, no store: for unit tests of a job's own logic. To
 * run a whole worker, call its handler with `jobRecord` / `sqsEvent` and a
 * `MemoryIdempotencyStore`.
 *
 * The parts the worker uses are the same code here: schema validation and its error
 * (`JobDataInvalidError`), the job's identity (idempotency key and data hash, `ctx.idempotencyKey`:
 * `JobIdentityError`), the concurrency key (`ConcurrencyKeyError`), the sends after the run
 * (children and batches checked and sent by the worker's sender into nowhere, worker-sends.ts), the time
 * limit (`ctx.signal`, `JobTimeoutError`), children (`ChildCollector`: derived ids, lineage,
 * partition key), classification (`classifyError`) and the retry-or-dead-letter rule.
 */
import { randomUUID } from 'node:crypto';
import { createEnvelope, type EnvelopeLineage, type JobEnvelope } from '../core/envelope.ts';
import { classifyError, type ErrorClassification } from '../core/errors.ts';
import type { JobLogger } from '../core/logger.ts';
import type { BatchContext } from '../runtime/batches/context.ts';
import { type JobBatchSpec, requestBatch } from '../runtime/batches/start.ts';
import { ChildCollector, type ChildEntry, type ParentIdentity } from '../runtime/children.ts';
import { unfaithfulJsonReason } from '../runtime/idempotency/faithful-json.ts';
import { deriveIdempotencyKey, jobRecordKey } from '../runtime/idempotency/keys.ts';
import {
  type EnqueueOptions,
  identityTypeOf,
  type JobContext,
  type JobDefinition,
  type JobLineage,
  type RateLimitOptions,
  type RateLimitPermit,
  type StepValue,
} from '../runtime/job.ts';
import { concurrencyKeyOf } from '../runtime/limits/concurrency.ts';
import type { RateLimitDefinition } from '../runtime/limits/rate-limit.ts';
import { takeRateLimit } from '../runtime/limits/take.ts';
import { lineageOf } from '../runtime/lineage.ts';
import { identify } from '../runtime/record/identify.ts';
import { invalidDataError } from '../runtime/record/validate.ts';
import { type RunLimit, startRunLimit } from '../runtime/timeout.ts';
import { type LoggedLine, type RecordedLogLevel, recordingJobLogger } from './log-recorder.ts';
import { checkRunJobOptions } from './run-job-options.ts';
import { workerSends } from './worker-sends.ts';

export type { LoggedLine, RecordedLogLevel } from './log-recorder.ts';

/** Options of {@link runJob}. */
export interface RunJobOptions {
  /** The envelope `id` (`ctx.jobId`). @default a random UUID */
  readonly jobId?: string;
  /** The envelope `source` (`ctx.source`). @default `/tests` */
  readonly source?: string;
  /** The partition key (FIFO `MessageGroupId`, `ctx.partitionKey`); children inherit it. */
  readonly partitionKey?: string;
  /** `ctx.attempt`, 1-based: decides with `retry.maxAttempts` whether a failure is retried. @default 1 */
  readonly attempt?: number;
  /** Where the job comes from (`ctx.lineage`): as a child of `parentJobId`, in a chain started by `rootJobId`. */
  readonly lineage?: {
    readonly parentJobId?: string;
    readonly rootJobId?: string;
    readonly correlationId?: string;
    /** The parent's job reference `<type>#<key>`. */
    readonly parentJob?: string;
    /** W3C `traceparent`. */
    readonly traceparent?: string;
    readonly tracestate?: string;
  };
  /** The job's own time limit, in milliseconds: `ctx.signal` aborts then. @default the job's `timeoutSeconds` */
  readonly timeoutMs?: number;
  /**
   * Time left in the Lambda invocation less the worker's margin, in milliseconds: `ctx.signal`
   * aborts then when it comes before `timeoutMs`. @default no Lambda deadline
   */
  readonly remainingMs?: number;
  /**
   * `once` steps an earlier run of this job completed, name → value: `ctx.once` returns the value
   * without running the step (as a retry of a half-done job does). @default none
   */
  readonly completedSteps?: Readonly<Record<string, unknown>>;
  /**
   * For a batch's completion job: what `ctx.batch` gives it (id, counts, `children()`), e.g. made
   * with the outcomes a test wants it to see. @default undefined (not a completion job)
   */
  readonly batch?: BatchContext;
  /**
   * Logical queue name → queue URL, as the worker has them (`JOBS_QUEUE_URL_<NAME>`): children
   * and batches are then checked against these queues as the worker checks them (a queue missing,
   * a FIFO queue's job without a partition key). @default a test URL per queue named, FIFO when a
   * job on it says `ordered: true`
   */
  readonly queueUrls?: Readonly<Record<string, string>>;
  /**
   * The log level of the worker `ctx.logger`'s lines are recorded as (`logs`): a line below it is
   * not recorded, nor its reserved-key warnings, as the worker writes neither (`INFO` is the
   * worker's default, `POWERTOOLS_LOG_LEVEL`). @default `DEBUG`: every line recorded
   */
  readonly logLevel?: RecordedLogLevel;
}

/** A batch `run` started (`ctx.startBatch`): the worker starts it only if `run` succeeds. */
export interface StartedBatch {
  /** The id the worker would give it (derived from this job's identity and the call's position). */
  readonly batchId: string;
  /** The spec as given: children, completion job, policy, open limit. */
  readonly spec: JobBatchSpec;
}

/** A child job `run` enqueued (`ctx.enqueue`): sent by the worker only if `run` succeeds. */
export interface EnqueuedChild {
  /** The child's job type. */
  readonly type: string;
  /** The child's logical queue (its job's `queue`). */
  readonly queue: string;
  /** The child's data in its JSON form, as its worker will see it. */
  readonly data: unknown;
  /** The child's envelope `id`, derived from the parent's identity: the same on every re-run. */
  readonly id: string;
  /** Its partition key (FIFO `MessageGroupId`): the one given to `enqueue`, else the parent's. */
  readonly partitionKey: string | undefined;
  readonly delaySeconds: number | undefined;
  /** Its envelope's `causationid` (this job's id) and `rootid`. */
  readonly parentJobId: string | undefined;
  readonly rootJobId: string | undefined;
}

/** A `ctx.once` step of the run. */
export interface RecordedStep {
  readonly name: string;
  /** The value the step returned (or the completed value it was given). */
  readonly value: unknown;
  /** `false` when the step was in `completedSteps` and did not run. */
  readonly ran: boolean;
  /**
   * Set when the value is not a JSON value that reads back the same (a `Date`, a `Map`...): the
   * worker's store would not keep it, and a retry reaching this step would be dead-lettered
   * (`StepValueNotStoredError`). The sentence names the kind and the path.
   */
  readonly notStoredReason?: string;
}

/** What every outcome of {@link runJob} tells. */
/** A token the job took with `ctx.rateLimit` (always granted in a test: no buckets are kept). */
export interface TakenRateLimit {
  readonly name: string;
  /** The bucket key it gave, if any. */
  readonly key: string | undefined;
  /** Whether the job reported the call throttled (`permit.throttled()`). */
  readonly throttled: boolean;
}

interface RunReport {
  /**
   * The job's idempotency key (its `idempotency.key(data)`, else `<source>\n<id>`); empty when the
   * run failed before it was known (invalid data, a key function that threw).
   */
  readonly key: string;
  readonly attempt: number;
  /** Children enqueued, in order (on a failure the worker sends none of them). */
  readonly children: readonly EnqueuedChild[];
  /** `once` steps, in the order they were reached. */
  readonly steps: readonly RecordedStep[];
  /** Rate-limit tokens taken, in order; the same checks as the worker (declared in `rateLimits`). */
  readonly rateLimits: readonly TakenRateLimit[];
  /** Batches started (checked as the worker checks them: a refused spec fails the run, permanent). */
  readonly batches: readonly StartedBatch[];
  readonly logs: readonly LoggedLine[];
  /** How long `run` took, in milliseconds. */
  readonly durationMs: number;
}

/** The job's `run` returned: the worker would send the children and complete the job. */
export interface CompletedRun<Result> extends RunReport {
  readonly status: 'completed';
  readonly result: Result;
}

/**
 * The job failed: its data did not match its schema, its identity could not be made, or `run`
 * threw (or ran into its time limit: a `JobTimeoutError`).
 */
export interface FailedRun extends RunReport {
  readonly status: 'failed';
  readonly error: unknown;
  /** As the worker classifies it: `permanent` (dead-lettered now) or `transient`, and its reason. */
  readonly classification: ErrorClassification;
  /**
   * What the worker would do: `retry` (transient, attempts left under `retry.maxAttempts`) or
   * `dead-letter` (permanent, or the last attempt).
   */
  readonly next: 'retry' | 'dead-letter';
  /** Whether `run` was called (false for invalid data or an identity that could not be made). */
  readonly ran: boolean;
}

/** Outcome of {@link runJob}. */
export type JobRunOutcome<Result> = CompletedRun<Result> | FailedRun;

/**
 * Runs one job with a test context and reports what it did. Never throws for anything the job
 * does: a thrown error is in the outcome, classified. `data` goes through the job's schema first,
 * as on the worker (the job gets the schema's output); to see how invalid data is refused, pass it
 * cast (`{ orderId: 42 } as never`): the outcome is a permanent `JobDataInvalidError`, not run.
 *
 * The job runs as the full worker of `sqs-jobs` runs it, every feature available (`ctx.enqueue`,
 * `ctx.startBatch`, limits...): a feature missing from a lean worker of `sqs-jobs/worker` shows
 * only through that worker (`createWorker` refusing the jobs, or a `MissingFeature` dead letter):
 * test it by invoking its handler on a `MemorySqs`.
 *
 * `logs` holds `ctx.logger`'s lines as a worker at `logLevel` writes them, through the worker's
 * own `ctx.logger` (the same code): one {@link LoggedLine} per line written, in order, with
 * `level`, `message` and `extra`, the line's own keys as they read back from the worker's JSON
 * line (an Error under `error` as `{ name, location, message, stack, cause }`, a string under
 * `extra`; undefined when the line has none). The record's keys the worker adds (`jobId`,
 * `messageId`, lineage, Lambda context) are not in it; a job's key of one of their names is
 * dropped after a `warn` line `The key "jobId" is a reserved key and will be dropped.`; keys that
 * cannot be read or written give `{ logFailed: 'RangeError: why' }`. A log call never fails the
 * run, here as in the worker.
 *
 * @example
 * ```ts
 * import { defineJob, PermanentError } from 'sqs-jobs';
 * import { runJob } from 'sqs-jobs/testing';
 * import { z } from 'zod';
 *
 * const issueInvoice = defineJob({
 *   type: 'billing.issue-invoice',
 *   queue: 'billing',
 *   schema: z.object({ orderId: z.string() }),
 *   async run({ orderId }, ctx) {
 *     if (orderId === '') throw new PermanentError('no order id');
 *     const invoiceId = await ctx.once('create', async () => `invoice-${orderId}`);
 *     ctx.enqueue(issueInvoice, { orderId: `${orderId}-copy` });
 *     return { invoiceId };
 *   },
 * });
 *
 * const done = await runJob(issueInvoice, { orderId: 'o-1' }, { partitionKey: 'user-7' });
 * // done.status === 'completed', done.result.invoiceId === 'invoice-o-1'
 * // done.children[0]?.partitionKey === 'user-7'; done.steps[0]?.ran === true
 * const refused = await runJob(issueInvoice, { orderId: '' });
 * // refused.status === 'failed', refused.classification.kind === 'permanent', refused.next === 'dead-letter'
 * ```
 * @throws {JobError} only for bad options: an unknown key (`jobid`: did you mean jobId?), an
 *   `attempt` that is not an integer ≥ 1, a `timeoutMs` ≤ 0, an invalid `jobId`, `source`,
 *   `partitionKey` or lineage field, `completedSteps` that is not an object of step name → value,
 *   a `batch` that is not a `BatchContext` (`id`, integer counts ≥ 0, a `children` function), a
 *   `logLevel` other than `DEBUG`, `INFO`, `WARN`, `ERROR`.
 */
export async function runJob<Data, Result>(
  job: JobDefinition<Data, Result>,
  data: NoInfer<Data>,
  options: RunJobOptions = {},
): Promise<JobRunOutcome<Result>> {
  checkRunJobOptions(options);
  const envelope = createEnvelope({
    type: job.type,
    source: options.source ?? '/tests',
    id: options.jobId ?? randomUUID(),
    data,
    ...(options.partitionKey === undefined ? {} : { partitionKey: options.partitionKey }),
    lineage: envelopeLineage(options.lineage),
  });
  const attempt = options.attempt ?? 1;
  const logs: LoggedLine[] = [];
  const steps: RecordedStep[] = [];
  const rateLimits: { name: string; key: string | undefined; throttled: boolean }[] = [];
  const batches: StartedBatch[] = [];
  const failure = (
    error: unknown,
    key: string,
    ran: boolean,
    children: readonly EnqueuedChild[],
    durationMs: number,
  ): FailedRun => {
    const classification = classifyError(error);
    const next =
      classification.kind === 'permanent' || attempt >= job.retry.maxAttempts ? 'dead-letter' : 'retry';
    return {
      status: 'failed',
      error,
      classification,
      next,
      ran,
      key,
      attempt,
      children,
      steps,
      rateLimits,
      batches,
      logs,
      durationMs,
    };
  };

  let validated: Awaited<ReturnType<(typeof job.schema)['~standard']['validate']>>;
  try {
    validated = await job.schema['~standard'].validate(data);
  } catch (error) {
    // A validator that throws is classified, as on the worker (not bad data: its own failure).
    return failure(error, '', false, [], 0);
  }
  if (validated.issues) {
    return failure(invalidDataError(job.type, validated.issues), '', false, [], 0);
  }
  const value = validated.value;
  let key: string;
  try {
    // As the worker with idempotency on: the key and the data's hash, then the concurrency key.
    key = identify(job, envelope, value, true).key;
    if (job.concurrency !== undefined) concurrencyKeyOf(job.type, job.concurrency, value);
  } catch (error) {
    return failure(error, '', false, [], 0);
  }

  const limit = startRunLimit(
    job.type,
    options.timeoutMs ?? job.timeoutSeconds * 1000,
    options.remainingMs ?? Number.POSITIVE_INFINITY,
  );
  const ctx = new TestJobContext(
    job,
    envelope,
    key,
    attempt,
    limit,
    options.completedSteps ?? {},
    steps,
    logs,
    rateLimits,
    batches,
    options.batch,
    options.logLevel ?? 'DEBUG',
  );
  const startedAt = Date.now();
  try {
    const result = (await limit.race(Promise.resolve().then(() => job.run(value as Data, ctx)))) as Result;
    // The worker sends the children and starts the batches after `run`; what it would refuse
    // fails the run as there.
    try {
      await workerSends(ctx.parent, ctx.childEntries(), batches, options.queueUrls);
    } catch (error) {
      return failure(error, key, true, ctx.enqueued(), Date.now() - startedAt);
    }
    return {
      status: 'completed',
      result,
      key,
      attempt,
      children: ctx.enqueued(),
      steps,
      rateLimits,
      batches,
      logs,
      durationMs: Date.now() - startedAt,
    };
  } catch (error) {
    // When the limit fired, its JobTimeoutError says more than the AbortError the job rethrew.
    return failure(limit.reason ?? error, key, true, ctx.enqueued(), Date.now() - startedAt);
  } finally {
    limit.dispose();
  }
}

/** The envelope attributes of the lineage option. */
function envelopeLineage(lineage: RunJobOptions['lineage']): EnvelopeLineage {
  if (lineage === undefined) return {};
  const attributes: { -readonly [K in keyof EnvelopeLineage]: EnvelopeLineage[K] } = {};
  if (lineage.parentJobId !== undefined) attributes.causationid = lineage.parentJobId;
  if (lineage.rootJobId !== undefined) attributes.rootid = lineage.rootJobId;
  if (lineage.correlationId !== undefined) attributes.correlationid = lineage.correlationId;
  if (lineage.parentJob !== undefined) attributes.parentjob = lineage.parentJob;
  if (lineage.traceparent !== undefined) attributes.traceparent = lineage.traceparent;
  if (lineage.tracestate !== undefined) attributes.tracestate = lineage.tracestate;
  return attributes;
}

/** The `ctx` of {@link runJob}: the worker's rules for children, keys and the signal; steps and logs recorded. */
class TestJobContext implements JobContext {
  readonly attempt: number;
  readonly jobId: string;
  readonly source: string;
  readonly partitionKey: string | undefined;
  readonly logger: JobLogger;
  readonly #job: {
    readonly type: string;
    readonly formerTypes?: readonly string[];
    readonly rateLimits?: readonly RateLimitDefinition[];
  };
  readonly #rateLimits: { name: string; key: string | undefined; throttled: boolean }[];
  readonly #batches: StartedBatch[];
  readonly #parent: ParentIdentity;
  readonly batch: BatchContext | undefined;
  readonly #envelope: JobEnvelope;
  readonly #key: string;
  readonly #limit: RunLimit;
  readonly #completedSteps: Readonly<Record<string, unknown>>;
  readonly #steps: RecordedStep[];
  readonly #children: ChildCollector;

  constructor(
    // biome-ignore lint/suspicious/noExplicitAny: any job's context; its data type is the job's business.
    job: JobDefinition<any, unknown>,
    envelope: JobEnvelope,
    key: string,
    attempt: number,
    limit: RunLimit,
    completedSteps: Readonly<Record<string, unknown>>,
    steps: RecordedStep[],
    logs: LoggedLine[],
    rateLimits: { name: string; key: string | undefined; throttled: boolean }[],
    batches: StartedBatch[],
    batch: BatchContext | undefined,
    logLevel: RecordedLogLevel,
  ) {
    this.#job = job;
    this.#rateLimits = rateLimits;
    this.#batches = batches;
    this.batch = batch;
    this.#envelope = envelope;
    this.#key = key;
    this.#limit = limit;
    this.#completedSteps = completedSteps;
    this.#steps = steps;
    this.attempt = attempt;
    this.jobId = envelope.id;
    this.source = envelope.source;
    this.partitionKey = envelope.partitionkey;
    // The worker's own ctx.logger over a recorder (log-recorder.ts): the same lines, the same guard.
    this.logger = recordingJobLogger(logs, logLevel);
    this.#parent = {
      source: envelope.source,
      id: envelope.id,
      partitionKey: envelope.partitionkey,
      lineage: envelope,
      job: jobRecordKey(identityTypeOf(job), key),
    };
    this.#children = new ChildCollector(this.#parent);
  }

  startBatch(spec: JobBatchSpec): { readonly batchId: string } {
    // The worker's own check and id; any table name: the kit keeps no batches, it records them.
    const request = requestBatch(this.#parent, this.#batches.length, spec, 'test-kit');
    this.#batches.push(request);
    return { batchId: request.batchId };
  }

  get signal(): AbortSignal {
    return this.#limit.signal;
  }

  get lineage(): JobLineage {
    return lineageOf(this.#envelope);
  }

  async rateLimit(limit: RateLimitDefinition, options?: RateLimitOptions): Promise<RateLimitPermit> {
    const taken = { name: limit?.name, key: options?.key, throttled: false };
    // The worker's own take, with buckets that always grant: the same RateLimitUsageError checks.
    const permit = await takeRateLimit(
      {
        jobType: this.#job.type,
        declared: this.#job.rateLimits,
        buckets: {
          take: async () => ({ granted: true }),
          throttled: async () => {
            taken.throttled = true;
          },
        },
        remainingMs: () => Number.POSITIVE_INFINITY,
        signal: this.signal,
        onWaited: () => {},
      },
      limit,
      options,
    );
    this.#rateLimits.push(taken);
    return permit;
  }

  enqueue<D>(child: JobDefinition<D>, childData: NoInfer<D>, options?: EnqueueOptions): void {
    this.#children.add(child, childData, options);
  }

  async once<T>(stepName: string, fn: () => Promise<T & StepValue<T>>): Promise<T> {
    if (Object.hasOwn(this.#completedSteps, stepName)) {
      const value = this.#completedSteps[stepName] as T;
      this.#steps.push({ name: stepName, value, ran: false });
      return value;
    }
    const value = await fn();
    const notStoredReason = unfaithfulJsonReason(value, { kind: 'step', stepName });
    this.#steps.push({
      name: stepName,
      value,
      ran: true,
      ...(notStoredReason === undefined ? {} : { notStoredReason }),
    });
    return value;
  }

  idempotencyKey(stepName: string): string {
    return deriveIdempotencyKey(identityTypeOf(this.#job), this.#key, stepName);
  }

  /** The parent identity the children and batches derive from. */
  get parent(): ParentIdentity {
    return this.#parent;
  }

  /** The children enqueued so far, as the worker sends them. */
  childEntries(): readonly ChildEntry[] {
    return this.#children.entries;
  }

  /** The children enqueued so far, as the worker would send them. */
  enqueued(): EnqueuedChild[] {
    return this.#children.entries.map((entry) => ({
      type: entry.job.type,
      queue: entry.job.queue,
      data: entry.data,
      id: entry.options?.id ?? '',
      partitionKey: entry.options?.partitionKey,
      delaySeconds: entry.options?.delaySeconds,
      parentJobId: entry.options?.parent?.id,
      rootJobId: entry.options?.parent?.rootId,
    }));
  }
}
