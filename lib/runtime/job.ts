/**
 * Job definitions: what a job type is, what its `run` receives, and how it is retried.
 * Business logic lives in `run`; it never sees Middy or the runtime's AWS clients.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type RetryPolicy, resolveRetryPolicy } from '../core/backoff.ts';
import { JobError } from '../core/errors.ts';
import { keyFunctionProblem } from '../core/key-function.ts';
import type { JobLogger } from '../core/logger.ts';
import { shownValue } from '../core/shown-value.ts';
import type { BatchContext } from './batches/context.ts';
import type { JobBatchSpec } from './batches/start.ts';
import { type ConcurrencyOptions, concurrencyProblems } from './limits/concurrency.ts';
import { isRateLimit, type RateLimitDefinition, rateLimitConflicts } from './limits/rate-limit.ts';
import { type RawMessageOptions, rawOptionsProblems } from './raw-messages.ts';

/** Options of {@link JobContext.enqueue}. */
export interface EnqueueOptions {
  /**
   * Partition key of the child, sent as its `MessageGroupId`: on a FIFO queue its order key, on a
   * standard queue its fair-queue tenant. @default the parent's partition key
   */
  readonly partitionKey?: string;
  /** Delay before the child is visible, 0–900 s (standard queues only). @default 0 */
  readonly delaySeconds?: number;
}

/**
 * The compile-time side of the rule for `ctx.once` step values: `T` itself when it is a JSON value
 * type (strings, numbers, booleans, `null`, `undefined`, arrays and objects of these), `never`
 * where it holds what JSON would change (a `Date` or anything else with `toJSON()`, a `Map`, a
 * `Set`, a function, a bigint, a symbol). `once` takes `() => Promise<T & StepValue<T>>` so that
 * `ctx.once('x', async () => new Date())` does not compile. Types cannot tell `NaN` from a number,
 * nor a class instance from a plain object of the same shape: the runtime check catches those
 * (faithful-json.ts). `unknown` and `any` pass (checked at run time only).
 */
export type StepValue<T> = unknown extends T
  ? T
  : // biome-ignore lint/suspicious/noConfusingVoidType: a step that returns nothing is typed Promise<void>.
    T extends string | number | boolean | null | undefined | void
    ? T
    : T extends
          | bigint
          | symbol
          | ((...args: never[]) => unknown)
          | { toJSON(...args: never[]): unknown }
          | ReadonlyMap<unknown, unknown>
          | ReadonlySet<unknown>
          | WeakMap<object, unknown>
          | WeakSet<object>
          | Promise<unknown>
      ? never
      : { [K in keyof T]: StepValue<T[K]> };

/**
 * Where a job comes from: its chain (the job that enqueued it, the chain's first job), the flow's
 * correlation id and its trace (docs/contracts.md, "Lineage and trace context").
 */
export interface JobLineage {
  /** The envelope `id` of the job that enqueued this one (`causationid`); undefined for a chain's root. */
  readonly parentJobId: string | undefined;
  /** The envelope `id` of the chain's first job (`rootid`): this job's own id for a root. */
  readonly rootJobId: string;
  /** The flow's correlation id (`correlationid`), when the producer gave one; children keep it. */
  readonly correlationId: string | undefined;
  /** The parent's job reference `<type>#<key>` (`parentjob`, its idempotency record key); children only. */
  readonly parentJob: string | undefined;
  /** The W3C trace id (32 hex digits) of the envelope's `traceparent`, when it has one. */
  readonly traceId: string | undefined;
  /** The envelope's W3C `traceparent` as received (children get the same trace id and a span id of their own). */
  readonly traceparent: string | undefined;
  /** The envelope's W3C `tracestate`, passed on to children. */
  readonly tracestate: string | undefined;
}

/** Options of {@link JobContext.rateLimit}. */
export interface RateLimitOptions {
  /** The bucket's key within the limit (a tenant, an account): one bucket per key. @default one bucket for the whole limit */
  readonly key?: string;
}

/** A token taken from a rate limit ({@link JobContext.rateLimit}). */
export interface RateLimitPermit {
  /**
   * Reports that the call this token paid for was answered with throttling or overload (HTTP 429
   * or 503, a timeout): an adaptive limit lowers its rate for every instance (multiplicative
   * decrease, at most once per `decreaseIntervalMs`) and recovers it gradually afterwards.
   * Nothing for a fixed limit. @throws `LimitStoreError` (transient) when DynamoDB fails.
   */
  throttled(): Promise<void>;
}

/** What `run` gets besides its data. */
export interface JobContext {
  /** Aborted when the job's `timeoutSeconds` or the Lambda deadline is reached: pass it to I/O. */
  readonly signal: AbortSignal;
  /** 1-based attempt number of this run (counted by the worker, not by SQS receives). */
  readonly attempt: number;
  /** The envelope `id`. */
  readonly jobId: string;
  /** The envelope `source`. */
  readonly source: string;
  /** The envelope `partitionkey` (else the record's `MessageGroupId`: FIFO order key or fair-queue tenant), if any. */
  readonly partitionKey: string | undefined;
  /**
   * Logger with the job's type, id and attempt attached, and its lineage (`parentJobId`, `rootJobId`, `correlationId`, `traceId`),
   * which the job cannot override; takes an object of keys, an Error or a string, as Powertools Logger does ({@link JobLogger}).
   */
  readonly logger: JobLogger;
  /** Where the job comes from: its parent, its chain's root, the correlation id, the trace. */
  readonly lineage: JobLineage;
  /**
   * Queues a follow-up job. Nothing is sent unless `run` succeeds; the child's id derives from
   * this job's identity, so a re-run never creates a second child.
   */
  enqueue<D>(job: JobDefinition<D>, data: NoInfer<D>, options?: EnqueueOptions): void;
  /**
   * Runs a side-effect step at most once per job: on a retry of a half-done job, a step that
   * completed returns its stored value instead of running again. `stepName` must be unique
   * within the job. Without an idempotency store it simply runs `fn`.
   *
   * The value must be a JSON value: plain objects, arrays, strings, finite numbers, booleans,
   * `null` (or `undefined`), because a retry gets it back from its stored JSON text, not the
   * object itself (docs/contracts.md, "Idempotency table", steps). Return ids and ISO strings:
   * `{ chargeId }`, `date.toISOString()`, `[...map]`. A value JSON would change (a `Date` or any
   * object with `toJSON()`, a `Map`, a `Set`, a class instance, `NaN`, `±Infinity`, `undefined` or
   * a hole in an array, a bigint, a function, a cycle) is never handed to a retry changed: the step
   * is recorded as done but its value is not stored (marker `not-json`), this run logs a WARN
   * naming the step, the kind and the path (`step 'charge' returned a Map at value.items: ...`),
   * and a retry that reaches the step throws the permanent `StepValueNotStoredError` (the job is
   * dead-lettered with that evidence; the side effect is not repeated). The same holds for a value
   * over the store's `maxResultBytes`. The type {@link StepValue} refuses what types can tell
   * (`Date`, `Map`, `Set`, functions, bigints) at compile time.
   * @throws whatever `fn` throws (nothing is recorded), `StepValueNotStoredError` (permanent),
   *   `IdempotencyStoreError` (transient).
   */
  once<T>(stepName: string, fn: () => Promise<T & StepValue<T>>): Promise<T>;
  /** A stable key for an external API's `Idempotency-Key` header, per job and step. */
  idempotencyKey(stepName: string): string;
  /**
   * Takes one token of a shared rate limit (declared with `defineRateLimit` and listed in the
   * job's `rateLimits`) before calling what it protects. When the bucket is empty: a short wait
   * (at most a tenth of the run's remaining time, and `ctx.signal` aborts it) happens here;
   * a longer one ends the run without spending an attempt (a `LimitWait` is thrown: let it
   * through), and the job runs again after the wait, from the start (`ctx.once` steps done are
   * kept). Costs one conditional PutItem per token when this instance wrote the bucket last
   * (docs/cost.md).
   * @throws `RateLimitUsageError` (permanent) when the limit is not in the job's `rateLimits`, or
   *   the worker has no limit store (no idempotency table); `LimitWait` (see above);
   *   `LimitStoreError` (transient) when DynamoDB fails.
   */
  rateLimit(limit: RateLimitDefinition, options?: RateLimitOptions): Promise<RateLimitPermit>;
  /**
   * Starts a batch (fan-out and fan-in, docs/architecture.md "Batches"): `children` are sent, and
   * `completion` (the completion job) runs once, exactly once, after every child is counted (completed,
   * or dead-lettered under `onChildDeadLettered: 'complete-with-failures'`, the default). Like
   * {@link enqueue}, nothing is sent unless `run` succeeds; the batch id derives from this job's
   * identity, so a re-run starts no second batch and sends no second child. Needs the worker's
   * idempotency table (the batch is counted there, in DynamoDB transactions).
   * @returns the batch id.
   * Each child's and the completion job's `data` is type-checked against its own job (or build
   * entries with `batchChild` / `batchCompletion`).
   * @throws `ChildRejectedError` (permanent: this job is dead-lettered) when the spec is invalid
   *   (every problem named, an entry option other than `partitionKey` / `delaySeconds` among them)
   *   or the worker keeps no batches (idempotency off, or a store other than the DynamoDB one, such
   *   as the test kit's `MemoryIdempotencyStore`: test the job with `runJob` instead).
   */
  startBatch<const Children extends readonly unknown[], CompletionData>(
    spec: JobBatchSpec<Children, CompletionData>,
  ): { readonly batchId: string };
  /**
   * The batch this job completes, when it is a batch's completion job (`completion`): its id, counts,
   * and each child's outcome (`children()`: results, dead letters and why). Undefined otherwise.
   */
  readonly batch: BatchContext | undefined;
}

/** What a job does when it finds its own earlier run's lease expired without completion. */
export type LeaseExpiredPolicy = 'rerun' | 'dead-letter';

/** Idempotency settings of a job. */
export interface JobIdempotencyOptions<Data> {
  /** `false` opts the job out of the idempotency store. @default true */
  readonly enabled?: boolean;
  /** Derives the key from the data. @default the envelope's `source` + `id` */
  readonly key?: (data: Data) => string;
  /**
   * `rerun` (rather twice than never) runs again after an expired lease; `dead-letter`
   * (rather never than twice) sends it to the DLQ for a person to decide.
   * @default 'rerun'
   */
  readonly onLeaseExpired?: LeaseExpiredPolicy;
}

/**
 * What a FIFO message group does after one of its jobs was dead-lettered (docs/architecture.md,
 * decision guide). `continue`: the group's later messages run (the dead letter is handled).
 * `park`: they are held, dead-lettered as `GroupParked` naming this job, until this job is
 * redriven and completes; then the group runs again in order. No effect on standard queues.
 */
export type DeadLetterPolicy = 'continue' | 'park';

/** Input of {@link defineJob}. */
export interface JobSpec<Data, Result> {
  /** The envelope `type` that routes to this job, e.g. `"booking.reserve-inventory"`. */
  readonly type: string;
  /** Logical queue the job is sent to (resolved to a URL by the client or worker). */
  readonly queue: string;
  /** Any Standard Schema validator (zod, valibot, arktype) of the job's data. */
  readonly schema: StandardSchemaV1<unknown, Data>;
  /** Retry policy; missing fields take {@link DEFAULT_RETRY_POLICY}. */
  readonly retry?: Partial<RetryPolicy>;
  /** Soft time limit of one run in seconds; must stay below the Lambda timeout. @default 30 */
  readonly timeoutSeconds?: number;
  readonly idempotency?: JobIdempotencyOptions<Data>;
  /**
   * FIFO queues: what the job's message group does once this job is dead-lettered
   * ({@link DeadLetterPolicy}). `park` needs the worker's idempotency table (the park is kept
   * there). @default the worker's `onDeadLetter`, which defaults to `'continue'`
   */
  readonly onDeadLetter?: DeadLetterPolicy;
  /**
   * Also accept messages that are not sqs-jobs envelopes (existing producers: a plain JSON body, an
   * SNS subscription, an EventBridge rule), routed to this job: `from` says what the body is,
   * `id` where the job's identity (its job id and default idempotency key) is read, and so which
   * duplicates are absorbed (`RawJobIdentity`). Envelopes of this job's `type` still run as
   * before, so producers can move to `JobClient` one at a time. At most one job of a worker sets
   * it. A raw message that is not the shape `from` names, or has no identity, or fails `schema`,
   * is dead-lettered on its first delivery with evidence naming what was wrong; the DLQ and a
   * redrive keep its original body (docs/migrate-from-powertools.md). @default envelopes only
   */
  readonly raw?: RawMessageOptions;
  /**
   * The job needs order per key: its messages must come from a FIFO queue, grouped by their
   * partition key (`MessageGroupId`), where SQS delivers one group's messages one at a time in the
   * order they were sent ("Amazon SQS FIFO queue key terms",
   * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html).
   * Said here, it is checked where order would be lost: `JobQueue` refuses the job on a standard
   * queue at synth (pass it in the queue's `jobs`), `JobClient` (and `ctx.enqueue`) refuses to send
   * it to a standard queue's URL, and the worker dead-letters a message of it
   * that arrives without a FIFO message group (`OrderedJobWithoutGroupError`, permanent, never
   * retried). @default false
   */
  readonly ordered?: boolean;
  /**
   * The types this job had before it was renamed, oldest first, e.g. `['send-invoice']` for a job
   * now typed `billing.send-invoice`. Messages of a former type (sent before the rename, still
   * queued or redriven from the DLQ) route to this job, and the job keeps its identity: records,
   * `ctx.idempotencyKey` values and child ids are made with its identity type, the oldest name
   * (`formerTypes[0]`, see {@link identityTypeOf}), so a job that ran under its old name is not
   * run again under the new one (docs/contracts.md, "A job's identity"). Append each rename's old
   * name at the end; never drop or reorder entries. @default none
   */
  readonly formerTypes?: readonly string[];
  /**
   * At most `limit` runs at once per key (`key(data)`: tenant, account, partner), across every
   * Lambda instance; a record over it waits without spending an attempt (docs/architecture.md,
   * "Flow control"). Needs the worker's idempotency table (the slots are kept there).
   * @default no limit
   */
  readonly concurrency?: ConcurrencyOptions<Data>;
  /**
   * The shared rate limits `run` takes with `ctx.rateLimit` (made by `defineRateLimit`). Listing
   * them lets JobQueue grant what a wait needs and the worker check each call. @default none
   */
  readonly rateLimits?: readonly RateLimitDefinition[];
  /** The work. Throw {@link PermanentError} for failures a retry cannot fix. */
  run(data: Data, ctx: JobContext): Promise<Result>;
}

/** A validated, defaulted job definition. */
export interface JobDefinition<Data = unknown, Result = unknown> extends JobSpec<Data, Result> {
  readonly retry: RetryPolicy;
  readonly timeoutSeconds: number;
}

const SPEC_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'queue',
  'schema',
  'retry',
  'timeoutSeconds',
  'idempotency',
  'onDeadLetter',
  'raw',
  'ordered',
  'formerTypes',
  'concurrency',
  'rateLimits',
  'run',
]);
const LEASE_EXPIRED_POLICIES: readonly LeaseExpiredPolicy[] = ['rerun', 'dead-letter'];
/** The values of {@link DeadLetterPolicy}. */
export const DEAD_LETTER_POLICIES: readonly DeadLetterPolicy[] = ['continue', 'park'];

/** What is wrong with an `onDeadLetter` value (`what` names the option); undefined when fine or absent. */
export function deadLetterPolicyProblem(value: unknown, what: string): string | undefined {
  if (value === undefined || DEAD_LETTER_POLICIES.includes(value as DeadLetterPolicy)) return undefined;
  return `${what} must be 'continue' or 'park', got ${shownValue(value)}`;
}

/** What is wrong with a job's idempotency options; empty when they are fine or absent. */
function idempotencyProblems(options: unknown): string[] {
  if (options === undefined) return [];
  if (typeof options !== 'object' || options === null) {
    return [`idempotency must be an object { enabled?, key?, onLeaseExpired? }, got ${shownValue(options)}`];
  }
  const { enabled, key, onLeaseExpired, ...rest } = options as Record<string, unknown>;
  const problems = Object.keys(rest).map(
    (field) => `unknown field idempotency.${field} (known: enabled, key, onLeaseExpired)`,
  );
  if (enabled !== undefined && typeof enabled !== 'boolean') {
    problems.push(`idempotency.enabled must be a boolean, got ${shownValue(enabled)}`);
  }
  const keyProblem = key === undefined ? undefined : keyFunctionProblem(key, 'idempotency.key');
  if (keyProblem !== undefined) problems.push(keyProblem);
  if (
    onLeaseExpired !== undefined &&
    !LEASE_EXPIRED_POLICIES.includes(onLeaseExpired as LeaseExpiredPolicy)
  ) {
    problems.push(
      `idempotency.onLeaseExpired must be 'rerun' or 'dead-letter', got ${shownValue(onLeaseExpired)}`,
    );
  }
  return problems;
}

/** What is wrong with a job's `formerTypes`; empty when they are fine or absent. */
function formerTypesProblems(formerTypes: unknown, type: unknown): string[] {
  if (formerTypes === undefined) return [];
  if (!Array.isArray(formerTypes))
    return [`formerTypes must be an array of the job's earlier types, oldest first`];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [index, former] of formerTypes.entries()) {
    if (typeof former !== 'string' || former.length === 0) {
      problems.push(`formerTypes[${index}] must be a non-empty string`);
    } else if (former === type) {
      problems.push(
        `formerTypes[${index}] is the job's own type ${JSON.stringify(type)}: list only earlier types`,
      );
    } else if (seen.has(former)) {
      problems.push(`formerTypes[${index}] ${JSON.stringify(former)} is listed twice`);
    }
    if (typeof former === 'string') seen.add(former);
  }
  return problems;
}

/**
 * The type a job's identity is made with: its oldest name (`formerTypes[0]`), else its `type`.
 * Idempotency records (`<identityType>#<key>`), `ctx.idempotencyKey` and child ids use it, so a
 * rename changes none of them (docs/contracts.md, "A job's identity").
 */
export function identityTypeOf(job: {
  readonly type: string;
  readonly formerTypes?: readonly string[];
}): string {
  return job.formerTypes?.[0] ?? job.type;
}

/** Default soft time limit of a job run, in seconds. */
export const DEFAULT_JOB_TIMEOUT_SECONDS = 30;

/**
 * Defines a job type.
 *
 * @example
 * ```ts
 * import { defineJob, PermanentError } from 'sqs-jobs';
 * import { z } from 'zod';
 *
 * export const issueInvoice = defineJob({
 *   type: 'billing.issue-invoice', // the envelope's `type`; unique within a worker
 *   queue: 'billing', // logical queue name (the JobQueue's `name`)
 *   schema: z.object({ orderId: z.string() }),
 *   retry: { maxAttempts: 5, baseDelaySeconds: 2 },
 *   timeoutSeconds: 10, // aborts ctx.signal
 *   async run({ orderId }, ctx) {
 *     if (orderId === '') throw new PermanentError('no order id'); // to the DLQ at once
 *     const invoiceId = await ctx.once('create', async () => `invoice-${orderId}`); // a retry skips it
 *     return { invoiceId };
 *   },
 * });
 * ```
 *
 * @throws {JobError} when the spec is not an object, has an unknown field, or `type`, `queue`,
 *   `schema`, `run`, `timeoutSeconds`, `retry`, `idempotency`, `onDeadLetter`, `raw`, `ordered`,
 *   `formerTypes`, `concurrency` or `rateLimits` is invalid (all problems in one message).
 */
export function defineJob<Data, Result = void>(spec: JobSpec<Data, Result>): JobDefinition<Data, Result> {
  if (typeof spec !== 'object' || spec === null) {
    throw new JobError(
      `defineJob needs a job spec { type, queue, schema, run, ... }, got ${shownValue(spec)}`,
    );
  }
  const problems: string[] = [];
  for (const field of Object.keys(spec)) {
    if (!SPEC_FIELDS.has(field))
      problems.push(`unknown field ${field} (known: ${[...SPEC_FIELDS].join(', ')})`);
  }
  problems.push(...idempotencyProblems(spec.idempotency));
  problems.push(...rawOptionsProblems(spec.raw));
  problems.push(...concurrencyProblems(spec.concurrency));
  if (
    spec.rateLimits !== undefined &&
    (!Array.isArray(spec.rateLimits) || !spec.rateLimits.every(isRateLimit))
  ) {
    problems.push('rateLimits must be an array of rate limits made by defineRateLimit');
  } else if (spec.rateLimits !== undefined) {
    problems.push(...rateLimitConflicts(spec.rateLimits));
  }
  const onDeadLetter = deadLetterPolicyProblem(spec.onDeadLetter, 'onDeadLetter');
  if (onDeadLetter !== undefined) problems.push(onDeadLetter);
  if (typeof spec.type !== 'string' || spec.type.length === 0)
    problems.push('type must be a non-empty string');
  problems.push(...formerTypesProblems(spec.formerTypes, spec.type));
  if (spec.ordered !== undefined && typeof spec.ordered !== 'boolean') {
    problems.push(`ordered must be a boolean, got ${shownValue(spec.ordered)}`);
  }
  if (typeof spec.queue !== 'string' || spec.queue.length === 0)
    problems.push('queue must be a non-empty string');
  const timeoutSeconds = spec.timeoutSeconds ?? DEFAULT_JOB_TIMEOUT_SECONDS;
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0 || timeoutSeconds > 900) {
    problems.push(
      `timeoutSeconds must be > 0 and <= 900 (the Lambda maximum), got ${shownValue(timeoutSeconds)}`,
    );
  }
  if (typeof spec.schema?.['~standard']?.validate !== 'function') {
    problems.push('schema must be a Standard Schema validator (zod, valibot, ...)');
  }
  if (typeof spec.run !== 'function') problems.push('run must be a function (data, ctx) => Promise<result>');
  let retry: RetryPolicy | undefined;
  try {
    retry = resolveRetryPolicy(spec.retry, spec.type);
  } catch (err) {
    problems.push((err as Error).message);
  }
  if (problems.length > 0 || !retry) {
    throw new JobError(`invalid job definition ${JSON.stringify(spec.type)}: ${problems.join('; ')}`);
  }
  return Object.freeze({ ...spec, retry, timeoutSeconds });
}
