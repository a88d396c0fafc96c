/**
 * `createWorker`: the Lambda handler of an SQS event source mapping, wrapped in Middy.
 *
 * Per record: parse envelope → route by `type` → validate `data` → idempotency lease →
 * `run(data, ctx)` under a time limit → send enqueued children → complete. On failure: transient
 * → reported in `batchItemFailures` with ChangeMessageVisibility set to the backoff; permanent or
 * attempts used up → original body to the DLQ with evidence, then acknowledged.
 *
 * The response follows "Handling errors for an SQS event source in Lambda"
 * (services-sqs-errorhandling): exactly `{ batchItemFailures: [{ itemIdentifier }] }` with ids of
 * the current event; the mapping must have `FunctionResponseTypes: [ReportBatchItemFailures]`.
 *
 * Why one file: it is `createWorker`, whose option checks, the setup fixed for the handler's life
 * and the per-invocation wiring of the record pipeline (lib/runtime/record/) read as one story.
 */

// Types only: the default logger is the worker's own (default-logger.ts), and a given Logger is
// driven through its methods, so no worker bundle holds the Powertools Logger (issue 21).
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSClient } from '@aws-sdk/client-sqs';
import middy, { type MiddlewareObj } from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { isFifoQueueUrl } from '../core/queue-urls.ts';
import { shownValue } from '../core/shown-value.ts';
import { runBatch } from './batch.ts';
import type { BatchLedger } from './batches/ledger.ts';
import type { ChainTraceHeaders } from './chain-trace.ts';
import type { ChildSender } from './children.ts';
import { queueLimitProblems, readWorkerConfig, type WorkerConfig } from './config.ts';
import { createDefaultIdempotencyGuard } from './default-guard.ts';
import { DefaultLogger, LOG_LEVEL_THRESHOLD } from './default-logger.ts';
import { ALL_FEATURES } from './features/all.ts';
import {
  type FeatureSet,
  featureSetOf,
  MissingFeatureError,
  missingFeatureProblems,
  storeForFeatures,
  type WorkerFeature,
} from './features/feature.ts';
import {
  type GroupParkStore,
  type IdempotencyGuard,
  isGroupParkStore,
  isScheduledJobStore,
} from './idempotency/guard.ts';
import { type DeadLetterPolicy, deadLetterPolicyProblem } from './job.ts';
import type { LimitStorePort } from './limits/store.ts';
import { defaultLoggerContext, loggerProblem, powertoolsLoggerContext } from './logger-context.ts';
import { type AnyJob, processRecord, type RecordDeps, type RecordOutcome } from './record/index.ts';
import { loadSqsModule, preloadSqsModule } from './sqs-module.ts';
import type { SqsSender } from './sqs-port.ts';
import {
  BatchMetrics,
  DirectEmf,
  fromPowertools,
  publishBatchFailed,
  UNKNOWN_QUEUE,
  type WorkerLogger,
} from './telemetry.ts';
import { RunLimitClock } from './timeout.ts';
import { invocationTraceHeader, JobTracing } from './tracing.ts';
import { changeVisibility } from './visibility.ts';
import { WorkerConfigError } from './worker-errors.ts';

/** Default time kept free before the Lambda deadline, in milliseconds. */
export const DEFAULT_DEADLINE_MARGIN_MS = 3_000;

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  /** The jobs this worker runs, routed by their `type`. Two jobs with the same type are an error. */
  readonly jobs: readonly AnyJob[];
  /** Logical queue name, the `Queue` metric dimension. @default env `JOBS_QUEUE_NAME` */
  readonly queueName?: string;
  /** URL of the consumed queue (ChangeMessageVisibility). @default env `JOBS_QUEUE_URL` */
  readonly queueUrl?: string;
  /** URL of the queue's dead-letter queue. @default env `JOBS_DLQ_URL` */
  readonly dlqUrl?: string;
  /**
   * Written into DLQ evidence (`HandlerVersion`).
   * @default env `JOBS_HANDLER_VERSION`, else `AWS_LAMBDA_FUNCTION_VERSION`, else `"unknown"`
   */
  readonly handlerVersion?: string;
  /**
   * Records in flight at once on a standard queue (message groups at once on a FIFO queue, where
   * a group still runs one record at a time, in order). Integer >= 1; set it to hold a standard
   * batch below its full width (a partner that takes few calls at once, a job that needs much
   * memory). @default standard: every record of the batch, so it follows the event source's
   * `batchSize`, up to 500 (`MAX_DEFAULT_STANDARD_CONCURRENCY`, lib/runtime/batch.ts: half of
   * Lambda's 1,024 file descriptors, one socket per waiting job); FIFO: 10 groups (a FIFO batch
   * has at most 10 records)
   */
  readonly maxConcurrency?: number;
  /**
   * The idempotency guard, or `false` to run without one (every delivery runs; attempts are then
   * SQS's `ApproximateReceiveCount`). A job can still opt out with `idempotency.enabled: false`.
   * @default the DynamoDB store on env `JOBS_IDEMPOTENCY_TABLE` (see default-guard.ts)
   */
  readonly idempotency?: IdempotencyGuard | false;
  /**
   * FIFO queues: what a message group does after one of its jobs was dead-lettered, for jobs that
   * do not set their own `onDeadLetter` (docs/architecture.md, decision guide). `continue`: the
   * group's later messages run. `park`: they are dead-lettered as `GroupParked` until the blocking
   * job is redriven and completes. Parking (here or in any job) needs the idempotency table: with
   * `idempotency: false`, or a guard that does not implement `GroupParkStore`, createWorker throws.
   * On a standard queue it has no effect. @default 'continue'
   */
  readonly onDeadLetter?: DeadLetterPolicy;
  /**
   * Where per-key concurrency slots and rate-limit buckets are kept (jobs with `concurrency` or
   * `rateLimits`): a `LimitStore`, or `MemoryLimitStore` of sqs-jobs/testing in a unit test; or
   * `false` for none (such jobs then make the worker refuse to run).
   * @default a `LimitStore` on env `JOBS_IDEMPOTENCY_TABLE`, made only when a job has limits
   */
  readonly limits?: LimitStorePort | false;
  /** SQS client for DLQ sends and visibility changes. @default `new SQSClient({})` (honours `AWS_ENDPOINT_URL`) */
  readonly sqs?: SqsSender;
  /**
   * Sends the children enqueued by `ctx.enqueue`.
   * @default `JobClient`'s send path (`JobSender`, lib/client/job-sender.ts: its checks, batching and
   *   retries) on `queueUrls`, with `source` as the children's envelope source
   */
  readonly childSender?: ChildSender;
  /** Logical queue name → URL for children. @default env `JOBS_QUEUE_URL_<NAME>` (`queueUrlsFromEnv`) */
  readonly queueUrls?: Readonly<Record<string, string>>;
  /** Envelope `source` of the children this worker sends. @default `"/sqs-jobs/<queueName>"` */
  readonly source?: string;
  /** Uniform random numbers in [0, 1) for backoff jitter. @default Math.random */
  readonly random?: () => number;
  /** Clock, epoch milliseconds. @default Date.now */
  readonly now?: () => number;
  /**
   * Milliseconds kept free before the Lambda deadline, in milliseconds: a record is started only
   * while more than this remains, and a running job's `ctx.signal` fires at the deadline minus
   * this, leaving time to dead-letter or release it. >= 0. @default 3000
   */
  readonly deadlineMarginMs?: number;
  /**
   * Log a line for every completed record (`job completed` at INFO, with the job's identity).
   * Otherwise a completed record is logged only at DEBUG (the Powertools log level,
   * `POWERTOOLS_LOG_LEVEL=DEBUG`, or its debug sampling), and every batch writes one summary
   * line at INFO; failures, retries and dead letters are always logged one by one
   * (docs/contracts.md, "Logs"). @default env `JOBS_LOG_EACH_RECORD` is `true`, else false
   */
  readonly logEachRecord?: boolean;
  /**
   * Powertools Logger, given each invocation's Lambda context (as its `injectLambdaContext` with
   * `resetKeys`): keys from `appendKeys` are reset after each invocation (give module-level keys
   * as `persistentKeys`), and records of a batch share it (in a job, pass keys per call on
   * `ctx.logger`, never `appendKeys`; docs/contracts.md, "Logs"). @default the worker's own logger, writing what a Powertools Logger with service
   * `POWERTOOLS_SERVICE_NAME` or `sqs-jobs-<queue>` writes, byte for byte, honouring the same
   * environment (lib/runtime/default-logger.ts), without the Powertools Logger in the bundle
   */
  readonly logger?: Logger;
  /**
   * Powertools Metrics. The worker sets `Queue` as its default dimension; give it no other
   * default dimension (such as `service`) to keep the dimension sets exactly `[Queue]` and
   * `[Queue, JobType]`. @default namespace `POWERTOOLS_METRICS_NAMESPACE` or `SqsJobs`, no default
   *   dimensions; the job metrics of a batch are then written by the worker's own EMF writer
   *   (`DirectEmf`: the same blobs, honouring `POWERTOOLS_METRICS_DISABLED` and `POWERTOOLS_DEV`
   *   as Powertools does), a given Metrics gets every value through `addMetric`
   */
  readonly metrics?: Metrics;
  /** Environment to read. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Options of {@link createLeanWorker} (`createWorker` of `sqs-jobs/worker`): those of
 * {@link createWorker} and the features the worker uses.
 */
export interface LeanWorkerOptions extends WorkerOptions {
  /**
   * The optional features this worker uses, each imported from `sqs-jobs/worker` (`children`,
   * `batches`, `limits`, `groupParking`, `scheduledJobs`, `rawMessages`); only these are bundled.
   * What the jobs declare without its feature makes createWorker throw a WorkerConfigError naming
   * the import; a message that needs a missing one is dead-lettered at once as `MissingFeature`.
   * The `limits` option is read (and checked) only with the `limits` feature.
   * @default [] (no optional feature)
   */
  readonly features?: readonly WorkerFeature[];
}

/** The handler returned by {@link createWorker}. */
export type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** Everything fixed for the life of the handler; nothing here changes between invocations. */
interface WorkerSetup {
  readonly config: WorkerConfig;
  readonly guard: IdempotencyGuard | undefined;
  /** Where parked groups are kept; undefined when no job of the worker parks (nothing is read). */
  readonly parkStore: GroupParkStore | undefined;
  /** Concurrency slots and rate buckets; undefined when no job has limits. */
  readonly limits: LimitStorePort | undefined;
  readonly childSender: () => ChildSender;
  /** Where batches are kept: the DynamoDB store's table; undefined without one. */
  readonly batchLedger: BatchLedger | undefined;
}

/**
 * Builds the SQS batch handler.
 *
 * @example
 * ```ts
 * // workers/billing.ts: the entry of the billing JobQueue's function
 * import { createWorker, defineJob } from 'sqs-jobs';
 * import { z } from 'zod';
 *
 * const issueInvoice = defineJob({
 *   type: 'billing.issue-invoice',
 *   queue: 'billing',
 *   schema: z.object({ orderId: z.string() }),
 *   async run({ orderId }) {
 *     return { invoiceId: `invoice-${orderId}` };
 *   },
 * });
 *
 * export const handler = createWorker({ jobs: [issueInvoice] });
 * ```
 *
 * @returns a Middy-wrapped `(event: SQSEvent, context: Context) => Promise<SQSBatchResponse>`.
 * @throws {WorkerConfigError} at once for mistakes in code: no options, `jobs` not made by
 *   `defineJob`, duplicate job types (former types included), more than one job with `raw`, a bad `maxConcurrency`, `deadlineMarginMs` or
 *   `onDeadLetter`, parking without an idempotency store that keeps parked groups, a `limits` that
 *   is not a limit store (no `slots.acquire`, `buckets.take`, `buckets.throttled`), a `logger`
 *   that is not a Powertools Logger (`console`: the methods it lacks named). Mistakes in the environment (a missing queue URL,
 *   no idempotency table) do not throw here: they are logged on every invocation and every
 *   record of the event is reported failed, so nothing is deleted by accident (`BatchFailed`,
 *   whose JobQueue alarm fires). The same for a job the queue was not built for: a
 *   `retry.maxAttempts` above `JOBS_MAX_ATTEMPTS` (SQS would dead-letter it at the queue's
 *   `maxReceiveCount`, without evidence) or a `timeoutSeconds` above `JOBS_JOB_TIMEOUT_SECONDS`
 *   (the Lambda timeout would stop every run); the message names the job and the fix (add it to
 *   the JobQueue's `jobs`). Unset variables (older stacks, tests, other deployers) check nothing.
 */
export function createWorker(options: WorkerOptions): WorkerHandler {
  return buildWorker(options, ALL_FEATURES);
}

/**
 * `createWorker` of `sqs-jobs/worker`: the same worker as {@link createWorker}, with only the
 * features given in `options.features`, so a bundle carries only their code.
 *
 * @example
 * ```ts
 * // workers/billing.ts: a worker whose jobs enqueue children, bundled without the other features
 * import { children, createWorker, defineJob } from 'sqs-jobs/worker';
 * import { z } from 'zod';
 *
 * const sendReceipt = defineJob({
 *   type: 'billing.send-receipt',
 *   queue: 'billing',
 *   schema: z.object({ orderId: z.string() }),
 *   async run() {},
 * });
 * const issueInvoice = defineJob({
 *   type: 'billing.issue-invoice',
 *   queue: 'billing',
 *   schema: z.object({ orderId: z.string() }),
 *   async run({ orderId }, ctx) {
 *     ctx.enqueue(sendReceipt, { orderId });
 *   },
 * });
 *
 * export const handler = createWorker({ jobs: [issueInvoice, sendReceipt], features: [children] });
 * ```
 * @throws {WorkerConfigError} as {@link createWorker} does, and when `features` is not a list of
 *   the feature objects of `sqs-jobs/worker`, or a job needs one it lacks (`concurrency` or
 *   `rateLimits`: `limits`; `raw`: `rawMessages`; `onDeadLetter: 'park'`: `groupParking`).
 */
export function createLeanWorker(options: LeanWorkerOptions): WorkerHandler {
  return buildWorker(options, options?.features ?? []);
}

/** The worker of {@link createWorker} and {@link createLeanWorker}, with `features`. */
function buildWorker(options: WorkerOptions, featureList: readonly WorkerFeature[]): WorkerHandler {
  const { features, jobs } = indexJobs(options, featureList);
  // The job that takes bodies that are not envelopes (`defineJob({ raw })`); indexJobs allows one.
  const rawJob = [...jobs.values()].find((job) => job.raw !== undefined);
  // Undefined: the batch's full width (standard) or every group (FIFO), decided per batch (batch.ts).
  const maxConcurrency = options.maxConcurrency;
  const deadlineMarginMs = options.deadlineMarginMs ?? DEFAULT_DEADLINE_MARGIN_MS;
  const defaultDeadLetterPolicy: DeadLetterPolicy = options.onDeadLetter ?? 'continue';
  const parks = parkingJobs(jobs, defaultDeadLetterPolicy);
  const env = options.env ?? process.env;
  // Without a given Logger, the worker's own: what Powertools' Logger wrote, byte for byte.
  const defaultLogger =
    options.logger === undefined ? new DefaultLogger(defaultServiceName(options, env)) : undefined;
  const levelLogger = options.logger ?? (defaultLogger as DefaultLogger);
  const logger = fromPowertools(levelLogger);
  // Without a given Metrics, the worker's own EMF writer (the same blobs as Powertools, a fraction
  // of the CPU, and the Powertools Metrics package neither loaded nor built); a given one is used as is.
  const metrics = options.metrics ?? new DirectEmf(env);
  // Built at its first call: a batch whose records all complete sends nothing to SQS.
  const sqs = options.sqs ?? lazySqsClient();
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const logEachRecord = options.logEachRecord ?? env.JOBS_LOG_EACH_RECORD?.trim().toLowerCase() === 'true';
  const setup = resolveSetup(options, jobs, env, sqs, logger, parks, features);
  // X-Ray: a subsegment per job of a sampled invocation; the tracer is loaded on the first one.
  const tracing = new JobTracing({
    env,
    onLoadError: (error) => logger.warn('X-Ray tracing is off: the tracer could not be loaded', { error }),
  });
  // The Queue dimension of BatchFailed: known even when the rest of the configuration is not.
  const queueName = setup.ok
    ? setup.value.config.queueName
    : (nonEmpty(options.queueName) ?? nonEmpty(env.JOBS_QUEUE_NAME) ?? UNKNOWN_QUEUE);

  const handleBatch = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    if (!setup.ok) throw setup.error;
    const { config } = setup.value;
    const records = event.Records;
    const startedAt = now();
    // Dead letters are written the moment they are sent; the rest at the end of the invocation.
    const batchMetrics = new BatchMetrics({ target: metrics, queueName: config.queueName });
    const runLimits = new RunLimitClock();
    // Reporting a failure needs the SQS module: loaded in the background ahead of the moment the
    // run limits fire (the deadline minus the margin), so a failure there can still be answered.
    const cancelPreload = preloadSqsModule(
      (context.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY) - deadlineMarginMs,
    );
    const traced = tracing.forInvocation();
    let chains: ChainTraceHeaders | undefined;
    const deps: RecordDeps = {
      jobTracer: traced && (await traced),
      jobs,
      features,
      rawJob,
      guard: setup.value.guard,
      scheduledJobs: isScheduledJobStore(setup.value.guard) ? setup.value.guard : undefined,
      limits: setup.value.limits,
      fullConcurrencyKeys: setup.value.limits ? new Set() : undefined,
      batchLedger: setup.value.batchLedger,
      parking:
        setup.value.parkStore && features.groupParking
          ? features.groupParking.parkingFor(setup.value.parkStore, config.queueName, defaultDeadLetterPolicy)
          : undefined,
      sqs,
      childSender: setup.value.childSender,
      // Each child continues its own parent record's chain, not the batch's (chain-trace.ts).
      // Children are sent only with the children feature, which brings that code.
      childTraceHeaderOf: (record) => {
        chains ??= features.children?.chainTraceHeaders(() => invocationTraceHeader(env), records);
        return chains?.childHeaderOf(record);
      },
      config,
      logger,
      metrics: batchMetrics,
      now,
      random,
      remainingMs: () => context.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY,
      deadlineMarginMs,
      runLimits,
      // Read per invocation: the level may change (debug sampling, setLogLevel).
      completedLogLevel: logEachRecord
        ? 'info'
        : levelLogger.level <= (LOG_LEVEL_THRESHOLD.DEBUG as number)
          ? 'debug'
          : undefined,
    };
    try {
      const outcomes = await runBatch(records, {
        maxConcurrency,
        process: (record) => processRecord(record, deps),
        onRetry: async (record, outcome) => {
          await changeVisibility(sqs, config.queueUrl, record.receiptHandle, outcome.delaySeconds, logger);
        },
      });
      const batchItemFailures = records
        .filter((_record, index) => outcomes[index]?.status === 'retry')
        .map((record) => ({ itemIdentifier: record.messageId }));
      const summary = { outcome: 'batch', ...countOutcomes(outcomes), durationMs: now() - startedAt };
      if (defaultLogger) logSummary(defaultLogger, summary);
      else logger.info('batch processed', summary);
      return { batchItemFailures };
    } finally {
      cancelPreload();
      runLimits.dispose();
      try {
        batchMetrics.flush(metrics, config.queueName);
      } catch (error) {
        logger.warn('could not publish metrics', { error });
      }
    }
  };

  return middy(handleBatch)
    .use(defaultLogger ? defaultLoggerContext(defaultLogger) : powertoolsLoggerContext(levelLogger as Logger))
    .use(failWholeBatchOnError(logger, metrics, queueName));
}

/** The default logger's service: `POWERTOOLS_SERVICE_NAME`, else `sqs-jobs-<queue>`. */
function defaultServiceName(
  options: WorkerOptions,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return (
    process.env.POWERTOOLS_SERVICE_NAME ?? `sqs-jobs-${options.queueName ?? env.JOBS_QUEUE_NAME ?? 'worker'}`
  );
}

/** The batch summary through the default logger's one-string line; never throws (as `fromPowertools`). */
function logSummary(
  logger: DefaultLogger,
  summary: ReturnType<typeof countOutcomes> & { outcome: string; durationMs: number },
): void {
  try {
    logger.summary('batch processed', summary);
  } catch {
    // A record's outcome never depends on a log line.
  }
}

/** The summary of one batch: records, then how many ended each way. */
function countOutcomes(outcomes: readonly RecordOutcome[]): {
  records: number;
  completed: number;
  duplicates: number;
  deadLettered: number;
  retried: number;
  cancelled?: number;
  superseded?: number;
} {
  const counts = { records: outcomes.length, completed: 0, duplicates: 0, deadLettered: 0, retried: 0 };
  // Jobs sent for later that were cancelled or rescheduled: counted only when there are some.
  let cancelled = 0;
  let superseded = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'completed') counts.completed += 1;
    else if (outcome.status === 'duplicate') counts.duplicates += 1;
    else if (outcome.status === 'dead-lettered') counts.deadLettered += 1;
    else if (outcome.status === 'cancelled') cancelled += 1;
    else if (outcome.status === 'superseded') superseded += 1;
    else counts.retried += 1;
  }
  if (cancelled + superseded > 0) return { ...counts, cancelled, superseded };
  return counts;
}

/**
 * The default SQS client, loaded and constructed at its first `send` (region and credentials
 * resolved then), not while the module initialises: the happy path of a batch never calls SQS.
 */
function lazySqsClient(): SqsSender {
  let client: Promise<SQSClient> | undefined;
  return {
    send: async (command) => {
      client ??= loadSqsModule().then(({ SQSClient }) => new SQSClient({}));
      return (await client).send(command as never);
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/**
 * Turns any error outside a record (bad configuration, a bug, Middy's early timeout just before
 * the Lambda deadline) into every record of the event reported failed, so nothing is deleted by
 * accident. It is logged at ERROR and counted as `BatchFailed` (dimension `Queue`, docs/contracts.md
 * "Metrics"): being a response, it does not count in Lambda's `Errors` metric, so the JobQueue
 * alarm on `BatchFailed` is what notices a worker that fails this way (before the age of the
 * oldest message, or DLQ depth after `maxReceiveCount`, would). When the event has no record ids
 * to name, the error is rethrown instead: an empty list would mean "all succeeded".
 */
function failWholeBatchOnError(
  logger: WorkerLogger,
  metrics: Metrics | DirectEmf,
  queueName: string,
): MiddlewareObj<SQSEvent, SQSBatchResponse> {
  return {
    onError: (request) => {
      const records = Array.isArray(request.event?.Records) ? request.event.Records : [];
      logger.error('batch failed outside any record; every record is reported failed', {
        outcome: 'batch-failed',
        records: records.length,
        error: request.error,
      });
      try {
        publishBatchFailed(metrics, queueName);
      } catch (error) {
        logger.warn('could not publish metrics', { error });
      }
      if (records.length === 0) return;
      request.response = {
        batchItemFailures: records.map((record) => ({ itemIdentifier: record.messageId })),
      };
    },
  };
}

function isDefinedJob(job: unknown): job is AnyJob {
  const j = job as Partial<AnyJob> | null | undefined;
  return (
    typeof j === 'object' &&
    j !== null &&
    typeof j.type === 'string' &&
    typeof j.run === 'function' &&
    typeof j.schema?.['~standard']?.validate === 'function' &&
    typeof j.retry?.maxAttempts === 'number' &&
    typeof j.timeoutSeconds === 'number'
  );
}

function indexJobs(
  options: WorkerOptions,
  featureList: readonly WorkerFeature[],
): { jobs: ReadonlyMap<string, AnyJob>; features: FeatureSet } {
  if (typeof options !== 'object' || options === null) {
    throw new WorkerConfigError([`createWorker needs options { jobs: [...] }, got ${shownValue(options)}`]);
  }
  const { set: features, problems } = featureSetOf(featureList);
  const jobs = new Map<string, AnyJob>();
  if (options.jobs !== undefined && !Array.isArray(options.jobs))
    problems.push('jobs must be an array of defineJob(...) results');
  for (const [index, job] of (Array.isArray(options.jobs) ? options.jobs : []).entries()) {
    // Hand-built objects skip defineJob's checks and defaults (retry policy, time limit).
    if (!isDefinedJob(job)) {
      problems.push(`jobs[${index}] is not a job made by defineJob(...)`);
      continue;
    }
    // A renamed job also takes the messages of its former types (job.ts, `formerTypes`).
    for (const type of [job.type, ...(job.formerTypes ?? [])]) {
      const other = jobs.get(type);
      if (other === undefined) jobs.set(type, job);
      else if (other.type === type && job.type === type)
        problems.push(`two jobs have the type ${JSON.stringify(type)}`);
      else {
        problems.push(
          `two jobs take the type ${JSON.stringify(type)} (${JSON.stringify(other.type)} and ${JSON.stringify(job.type)}, as a type or a former type)`,
        );
      }
    }
  }
  const rawJobs = [...jobs.values()].filter((job) => job.raw !== undefined).map((job) => job.type);
  if (rawJobs.length > 1) {
    problems.push(
      `only one job of a worker can accept raw messages (a body that is not an envelope names no job type), got raw on ${rawJobs.join(', ')}`,
    );
  }
  if (jobs.size === 0) problems.push('jobs must list at least one job');
  // Rate limits and a limit store are the limits feature's; without it, jobs with limits are refused below.
  const limits = features.limits;
  if (limits) {
    problems.push(
      ...limits.rateLimitConflicts([...new Set(jobs.values())].flatMap((job) => job.rateLimits ?? [])),
    );
  }
  const maxConcurrency = options.maxConcurrency;
  if (maxConcurrency !== undefined && (!Number.isInteger(maxConcurrency) || maxConcurrency < 1)) {
    problems.push(`maxConcurrency must be an integer >= 1, got ${shownValue(maxConcurrency)}`);
  }
  const margin = options.deadlineMarginMs;
  if (margin !== undefined && (!Number.isFinite(margin) || margin < 0)) {
    problems.push(`deadlineMarginMs must be a number >= 0, got ${shownValue(margin)}`);
  }
  const policyProblem = deadLetterPolicyProblem(options.onDeadLetter, 'onDeadLetter');
  if (policyProblem !== undefined) problems.push(policyProblem);
  const parks = parkingJobs(jobs, options.onDeadLetter ?? 'continue');
  // Parking is the groupParking feature's; a worker that parks without it is refused below.
  if (features.groupParking)
    problems.push(...features.groupParking.parkingProblems(options.idempotency, parks));
  if (limits) problems.push(...limits.limitStoreProblems(options.limits));
  const badLogger = loggerProblem(options.logger);
  if (badLogger !== undefined) problems.push(badLogger);
  problems.push(...missingFeatureProblems(jobs.values(), parks, features));
  if (problems.length > 0) throw new WorkerConfigError(problems);
  return { jobs, features };
}

/** What parks, for messages: the worker's `onDeadLetter` when it is `park`, else the jobs that set it; empty when nothing does. */
function parkingJobs(jobs: ReadonlyMap<string, AnyJob>, defaultPolicy: DeadLetterPolicy | string): string[] {
  if (defaultPolicy === 'park') return ['onDeadLetter'];
  return [...new Set(jobs.values())]
    .filter((job) => job.onDeadLetter === 'park')
    .map((job) => `job ${job.type}`);
}

type SetupResult = { ok: true; value: WorkerSetup } | { ok: false; error: WorkerConfigError };

/**
 * Reads the environment and builds the guard once; problems are kept and raised per invocation.
 * The jobs are checked against what the queue was built for (`JOBS_MAX_ATTEMPTS`,
 * `JOBS_JOB_TIMEOUT_SECONDS`, set by JobQueue; nothing is checked when they are unset).
 */
function resolveSetup(
  options: WorkerOptions,
  jobs: ReadonlyMap<string, AnyJob>,
  env: Readonly<Record<string, string | undefined>>,
  sqs: SqsSender,
  logger: WorkerLogger,
  parks: readonly string[],
  features: FeatureSet,
): SetupResult {
  const read = readWorkerConfig(options, env);
  if (!read.ok) return { ok: false, error: new WorkerConfigError(read.problems) };
  const { config } = read;
  const limits = [
    ...queueLimitProblems(new Set(jobs.values()), config.queueLimits, config.queueName),
    ...(features.groupParking?.queueProblems(
      parks,
      config.queueLimits,
      config.queueName,
      isFifoQueueUrl(config.queueUrl),
    ) ?? []),
  ];
  if (limits.length > 0) return { ok: false, error: new WorkerConfigError(limits) };
  let guard: IdempotencyGuard | undefined;
  try {
    guard =
      options.idempotency === false
        ? undefined
        : (options.idempotency ??
          createDefaultIdempotencyGuard(config.idempotencyTable, storeForFeatures(features)));
  } catch (error) {
    if (error instanceof WorkerConfigError) return { ok: false, error };
    throw error;
  }
  // Checked by createWorker: a parking worker's guard keeps parked groups.
  const parkStore = parks.length > 0 && features.groupParking && isGroupParkStore(guard) ? guard : undefined;
  if (parkStore && !isFifoQueueUrl(config.queueUrl)) {
    logger.warn("onDeadLetter: 'park' has no effect on a standard queue (no order to keep)", { parks });
  }
  const limited = [...jobs.values()].filter(
    (job) => job.concurrency !== undefined || (job.rateLimits?.length ?? 0) > 0,
  );
  let limitStore: LimitStorePort | undefined;
  // createWorker refused limited jobs without the limits feature.
  if (limited.length > 0 && options.limits !== false && features.limits) {
    limitStore =
      options.limits ??
      (config.idempotencyTable === undefined
        ? undefined
        : features.limits.createLimitStore(config.idempotencyTable, options.now));
  }
  if (limited.length > 0 && limitStore === undefined) {
    return {
      ok: false,
      error: new WorkerConfigError([
        `jobs ${limited.map((job) => job.type).join(', ')} declare concurrency or rate limits, kept in the idempotency table: set JOBS_IDEMPOTENCY_TABLE (JobQueue does) or pass a LimitStore as the worker's limits`,
      ]),
    };
  }
  let childSender = options.childSender;
  const getChildSender = (): ChildSender => {
    // Built on first use: most jobs never enqueue, and a worker without child queues is fine.
    if (childSender !== undefined) return childSender;
    // ctx.enqueue and ctx.startBatch throw without the feature before anything is sent.
    if (!features.children) throw new MissingFeatureError('children', 'sending children', false);
    childSender = features.children.createChildSender({
      source: options.source ?? `/sqs-jobs/${config.queueName}`,
      queueUrls: options.queueUrls,
      env,
      sqs,
      logger,
    });
    return childSender;
  };
  const batchLedger = features.batches?.ledgerOf(guard);
  return {
    ok: true,
    value: { config, guard, parkStore, limits: limitStore, childSender: getChildSender, batchLedger },
  };
}
