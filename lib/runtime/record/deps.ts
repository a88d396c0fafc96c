/** What the record pipeline is given: the worker's per-invocation dependencies and its jobs. */
import type { SQSRecord } from 'aws-lambda';
import type { BatchLedger } from '../batches/ledger.ts';
import type { ChildSender } from '../children.ts';
import type { WorkerConfig } from '../config.ts';
import type { FeatureSet } from '../features/feature.ts';
import type { BatchParking } from '../group-park.ts';
import type { IdempotencyGuard, ScheduledJobStore } from '../idempotency/guard.ts';
import type { JobDefinition } from '../job.ts';
import type { LimitStorePort } from '../limits/store.ts';
import type { SqsSender } from '../sqs-port.ts';
import type { BatchMetrics, WorkerLogger } from '../telemetry.ts';
import type { RunLimitClock } from '../timeout.ts';
import type { JobTracer } from '../tracing.ts';

// biome-ignore lint/suspicious/noExplicitAny: jobs of any data type share one worker; data is checked by each job's schema.
export type AnyJob = JobDefinition<any, any>;

/** Everything the pipeline needs; built per invocation by the worker. */
export interface RecordDeps {
  readonly jobs: ReadonlyMap<string, AnyJob>;
  /**
   * The worker's optional features (lib/runtime/features/): the pipeline reaches batches, limits,
   * parking, jobs sent for later, raw messages and children only through these.
   */
  readonly features: FeatureSet;
  /** The job that accepts bodies that are not envelopes (`defineJob({ raw })`), if any. */
  readonly rawJob?: AnyJob | undefined;
  /** Undefined when idempotency is off for the worker. */
  readonly guard: IdempotencyGuard | undefined;
  /**
   * Where the state of jobs sent for later is kept (the guard, when it keeps it); undefined: a job
   * sent for later runs unchecked, with a warning (lib/runtime/record/scheduled.ts).
   */
  readonly scheduledJobs?: ScheduledJobStore | undefined;
  /**
   * Batches (lib/runtime/batches/): where they are kept, the idempotency store's table; undefined
   * when the worker's guard has none (idempotency off, or a guard without transactions).
   */
  readonly batchLedger?: BatchLedger | undefined;
  /** FIFO group parking of this invocation; undefined when no job of the worker parks (no reads). */
  readonly parking: BatchParking | undefined;
  /** Concurrency slots and rate buckets; undefined when the worker has no table for them. */
  readonly limits?: LimitStorePort | undefined;
  /**
   * Concurrency keys (`<name>\u0000<key>`) found full during this invocation: the batch's later
   * records of such a key wait without asking DynamoDB again (made per invocation; undefined: no memo).
   */
  readonly fullConcurrencyKeys?: Set<string> | undefined;
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
