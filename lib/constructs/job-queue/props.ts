/**
 * Properties and alarms of {@link JobQueue}. The AWS pages cited in brackets are listed in
 * ./defaults.ts and in the rule modules (./rules/*.ts) that check each property.
 */
import type { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { RecurringJob } from './recurring-jobs.ts';

/**
 * The parts of a job definition (what `defineJob` from `sqs-jobs` returns) that `JobQueue`
 * reads. Typed structurally, so the constructs do not import the Lambda runtime: pass the
 * definitions themselves, e.g. `jobs: [capturePayment, refundPayment]`.
 */
export interface JobDefinitionLike {
  /** The job type (envelope `type`), e.g. `payments.capture`. */
  readonly type: string;
  /** Logical queue the job is sent to; when present it must be this queue's `name`. */
  readonly queue?: string;
  /** Retry policy: `maxAttempts` = total runs allowed, the first included. */
  readonly retry: { readonly maxAttempts: number };
  /** Soft time limit of one run, in seconds. */
  readonly timeoutSeconds: number;
  /** What a dead letter does to the rest of its FIFO group: `'continue'` (default) or `'park'`. */
  readonly onDeadLetter?: string;
  /** The job needs order per key (`defineJob({ ordered: true })`): refused on a standard queue. */
  readonly ordered?: boolean;
  /** Per-key concurrency limit (`defineJob({ concurrency })`): a run over it waits by re-sending its message. */
  readonly concurrency?: unknown;
  /** Rate limits the job takes (`defineJob({ rateLimits })`): a long wait re-sends its message. */
  readonly rateLimits?: readonly unknown[];
}

/** Properties of a {@link JobQueue}. Durations are CDK `Duration`s; plain numbers carry their unit in the name. */
export interface JobQueueProps {
  /**
   * Logical queue name, e.g. `booking`: the `Queue` metric dimension, `JOBS_QUEUE_NAME`, the
   * suffix of other workers' `JOBS_QUEUE_URL_<NAME>` and part of `POWERTOOLS_SERVICE_NAME`.
   * Lowercase letters, digits and `-`, starting with a letter, at most 40 characters (so the
   * variable name maps back to it). Unique among the JobQueues of a stack (alarms, metrics and
   * dashboard widgets are keyed by it).
   */
  readonly name: string;

  /**
   * FIFO queue (ordered per `MessageGroupId`, e.g. per user) or standard queue (parallel).
   * The dead-letter queue is of the same kind; a FIFO DLQ gets its own `.fifo` name.
   * @default false
   */
  readonly fifo?: boolean;

  /**
   * Path of the worker's entry file (`.ts`, `.js`, `.mjs`, `.cjs`, `.mts`, `.cts`, `.tsx`, `.jsx`).
   * A relative path is resolved against `projectRoot` when that is given, else against the
   * current working directory (where `cdk` runs, normally the CDK app's directory). The file
   * must exist, lie inside the directory bundling runs from (see `projectRoot`) and export
   * `handler`.
   */
  readonly entry: string;

  /**
   * Name of the handler `entry` exports. Checked against the entry's source text: a name the
   * file certainly does not export is refused (a file with `export *` or CommonJS exports is
   * given the benefit of the doubt).
   * @default 'handler'
   */
  readonly handler?: string;

  /**
   * The job definitions this worker runs (the `jobs` given to `createWorker` in `entry`).
   * `maxAttempts` and `jobTimeoutSeconds` default to the highest `retry.maxAttempts` and
   * `timeoutSeconds` among them, so the numbers are written once, in the job definitions.
   * Refused when empty, when a job's `queue` is not `name`, or when a type appears twice.
   * @default - none: `maxAttempts` and `jobTimeoutSeconds` must be given
   */
  readonly jobs?: readonly JobDefinitionLike[];

  /**
   * The worker's queue-wide `onDeadLetter`, as given to `createWorker` in `entry` (FIFO queues:
   * what a dead letter does to the rest of its message group; a job's own `onDeadLetter` wins).
   * Declared here because the entry's options are not visible at synth: with `'park'`, as with a
   * job of `jobs` that parks, the worker's role may delete the park record
   * (`dynamodb:DeleteItem` on the idempotency table) to unpark a group once its blocking job
   * completes. Without it, on a FIFO queue whose `jobs` are given and none parks, the role has no
   * DeleteItem, and a worker built with `createWorker({ onDeadLetter: 'park' })` refuses to run
   * (it is told by `JOBS_GROUP_PARKING=false`: a configuration error naming this prop). Refused with `idempotencyTable: false` (the park lives in the table); a warning on a
   * standard queue (no groups to park).
   * @default - not declared: the worker parks only if a job of `jobs` says `'park'`, or, without
   *   `jobs`, may park (DeleteItem is granted on a FIFO queue)
   */
  readonly onDeadLetter?: 'continue' | 'park';

  /**
   * The highest `retry.maxAttempts` among the jobs this worker runs, a whole number ≥ 1. The
   * worker counts attempts itself; the queue's `maxReceiveCount` must sit above it as a safety
   * net. With `jobs`, it may be given to raise it, never below what the jobs need (refused).
   * @default - the highest `retry.maxAttempts` of `jobs`; required without `jobs`
   */
  readonly maxAttempts?: number;

  /**
   * The highest `timeoutSeconds` (soft time limit) among the jobs this worker runs, in seconds,
   * above 0 and below the function timeout. With `jobs`, never below what they need (refused).
   * @default - the highest `timeoutSeconds` of `jobs`; required without `jobs`
   */
  readonly jobTimeoutSeconds?: number;

  /**
   * Receives after which SQS moves a message to the DLQ (redrive policy). Must be above
   * `maxAttempts`, at most 1,000; below 5 a warning is added, because throttled deliveries
   * raise the receive count without running [services-sqs-scaling].
   * @default maxAttempts + 5
   */
  readonly maxReceiveCount?: number;

  /**
   * Lambda function timeout (at most 15 minutes). Must be above `jobTimeoutSeconds`.
   * @default the larger of 30 seconds and 3 × jobTimeoutSeconds (capped at 15 minutes)
   */
  readonly functionTimeout?: Duration;

  /**
   * Lambda memory size in MB (also scales CPU): a whole number from 128 to 10,240, refused at
   * synth otherwise [configuration-memory].
   * @default 512
   */
  readonly memorySizeMb?: number;

  /**
   * Records per invocation. FIFO: 1–10. Standard: 1–10,000, above 10 only with a
   * `maxBatchingWindow` of at least 1 second [services-sqs-parameters].
   *
   * On a standard queue the worker runs every record of a batch at once, so raising `batchSize`
   * raises the records in flight per invocation with it, up to 500 (`createWorker`'s
   * `maxConcurrency` default, lib/runtime/batch.ts: half of Lambda's 1,024 file descriptors);
   * nothing is passed to the function for it, since Lambda never delivers more records than
   * `batchSize`. `createWorker({ maxConcurrency })` holds it lower. On a FIFO queue a group runs
   * one record at a time, in order, whatever the batch size.
   * @default 10
   */
  readonly batchSize?: number;

  /**
   * How long Lambda gathers records before invoking, at most 5 minutes. Standard queues only:
   * FIFO event source mappings do not support a batching window [services-sqs-parameters].
   * @default - no batching window (invoke as soon as records are available)
   */
  readonly maxBatchingWindow?: Duration;

  /**
   * Most concurrent invocations the event source mapping makes (`ScalingConfig.MaximumConcurrency`),
   * 2–1000, and not above `reservedConcurrency` when that is set: above it the surplus
   * invocations are throttled [services-sqs-scaling].
   * @default - no limit: Lambda scales up to 1,000 concurrent batches (standard) or the number of active message groups (FIFO)
   */
  readonly maxConcurrency?: number;

  /**
   * Reserved concurrency of the worker function (also its ceiling). At least 1.
   * @default - none: the function uses the account's unreserved concurrency
   */
  readonly reservedConcurrency?: number;

  /**
   * The queue's visibility timeout, at most 12 hours; at least 6 × the function timeout plus the
   * batching window, so a throttled batch can be retried before the message reappears
   * [services-sqs-configure].
   * @default 6 × functionTimeout + maxBatchingWindow
   */
  readonly visibilityTimeout?: Duration;

  /**
   * `MaximumMessageSize` of the queue and its DLQ, a whole number of bytes, 1,024–1,048,576. Set explicitly:
   * some tools still default it to 256 KiB [quotas-messages].
   * @default 1,048,576 (1 MiB)
   */
  readonly maxMessageSizeBytes?: number;

  /**
   * How long the main queue keeps a message (60 seconds – 14 days). The DLQ keeps messages
   * 14 days, the maximum. On a standard queue it must stay below the DLQ's retention (refused
   * otherwise): a message the redrive policy moves keeps its first enqueue time, so it would
   * expire in the DLQ on arrival [setting-up-dead-letter-queue-retention].
   * @default 4 days
   */
  readonly retentionPeriod?: Duration;

  /**
   * FIFO only. `messageGroup` (with `fifoThroughputLimit: perMessageGroupId`) enables
   * high-throughput FIFO [high-throughput-fifo].
   * @default - SQS default (`queue`)
   */
  readonly deduplicationScope?: sqs.DeduplicationScope;

  /**
   * FIFO only. `perMessageGroupId` requires `deduplicationScope: messageGroup` [high-throughput-fifo].
   * @default - SQS default (`perQueue`)
   */
  readonly fifoThroughputLimit?: sqs.FifoThroughputLimit;

  /**
   * An existing dead-letter queue to use. It must be of the same kind as this queue (a FIFO
   * queue's DLQ must be FIFO [sqs-dead-letter-queues]); the worker gets permission to send to it.
   * A standard queue's DLQ must keep messages longer than `retentionPeriod`: read from an
   * `sqs.Queue` of the same app (the SQS default of 4 days when it sets none) and refused when
   * not longer; an imported queue cannot be read, which is a warning
   * (`sqs-jobs:deadLetterRetentionUnknown`) [setting-up-dead-letter-queue-retention].
   * @default - a new encrypted DLQ of the same kind, 14 days retention
   */
  readonly deadLetterQueue?: sqs.IQueue;

  /**
   * Alarm when the oldest message of the main queue is older than this: whole seconds, at least 1
   * second (at 0 the alarm fires whenever the queue holds a message) and below `retentionPeriod`
   * (no message gets older); refused at synth otherwise [sqs-available-cloudwatch-metrics].
   * @default 15 minutes
   */
  readonly ageOfOldestMessageAlarmThreshold?: Duration;

  /**
   * SNS topic the eight alarms notify (on ALARM and on return to OK). `false` creates the alarms
   * without actions on purpose (e.g. a composite alarm elsewhere watches them). Left out, the
   * alarms also have no actions and synth shows the warning `sqs-jobs:noAlarmTopic`.
   * @default - no actions, with a synth warning
   */
  readonly alarmTopic?: sns.ITopic | false;

  /**
   * The idempotency table (see `IdempotencyTable`): its name goes into `JOBS_IDEMPOTENCY_TABLE`
   * and the worker may read and write its items. Required: a worker built with
   * `createWorker` uses this table by default and, without it, reports every record failed
   * (nothing runs). `false` says the worker runs without this table on purpose: its entry calls
   * `createWorker({ idempotency: false })` (every delivery runs, duplicates included) or passes
   * its own guard; `JOBS_IDEMPOTENCY_TABLE` is then unset.
   */
  readonly idempotencyTable: dynamodb.ITable | false;

  /**
   * Queues this worker's jobs enqueue to, by logical name: each sets
   * `JOBS_QUEUE_URL_<NAME>` (name upper-cased, `-` → `_`) and grants send. More can be added
   * with `JobQueue.addEnqueueTarget` (e.g. the queue itself, for job chaining).
   * @default - none
   */
  readonly enqueueTargets?: Readonly<Record<string, sqs.IQueue>>;

  /**
   * Lambda's recursive loop detection for the worker (`RecursiveLoop` of AWS::Lambda::Function).
   * With `TERMINATE` (AWS's default), Lambda stops a chain Lambda → SQS → the same Lambda after
   * about 16 invocations: a job that re-enqueues itself (polling, pagination, a long chain on its
   * own queue) silently stops there; the message is not run. `ALLOW` lets such chains run on;
   * then bound them yourself (a hop count or deadline in the job data). Left out, the property is
   * not set (AWS applies Terminate) and `addEnqueueTarget` with this queue itself adds the
   * warning `sqs-jobs:selfEnqueueRecursiveLoop`; setting it, to either value, says the choice
   * was made [invocation-recursion].
   * @default - not set: Lambda's default, Terminate
   */
  readonly recursiveLoop?: lambda.RecursiveLoop;

  /**
   * Stack traces mapped to the TypeScript sources (`NODE_OPTIONS=--enable-source-maps`). Off by
   * default: measured on the sample's worker (`npm run bench`, source-map figures), the flag adds
   * about 50 ms to every cold start (the 3.8 MB map is read at load) and about 100 ms to the first
   * error stack of an instance, which can eat a small deadline margin. The map ships in the code
   * package either way (`index.mjs.map`), so mapped stacks are one setting away: this prop, or
   * `NODE_OPTIONS=--enable-source-maps` set on the function without a new deployment of code.
   * Error names (DLQ evidence) are kept by the bundle whatever this says.
   * @default false
   */
  readonly sourceMaps?: boolean;

  /**
   * AWS X-Ray tracing of the worker (`TracingConfig.Mode` of AWS::Lambda::Function).
   * `Tracing.ACTIVE` (the default): Lambda samples invocations (X-Ray's default rule: the first
   * request each second and 5 % of the rest) and continues the traces of sampled upstream
   * requests; in each sampled invocation the worker records one subsegment per job (annotations
   * `jobType`, `jobKey`, `outcome`, searchable; the envelope's id and lineage as metadata). The
   * role gets `xray:PutTraceSegments` and `xray:PutTelemetryRecords` in a policy of its own
   * (these actions take no resource ARN, so the resource is `*`; its cdk-nag finding
   * `AwsSolutions-IAM5[Resource::*]` is acknowledged on that policy only).
   * `Tracing.PASS_THROUGH`: traced only when the upstream request was sampled (same policy).
   * `Tracing.DISABLED`: no `TracingConfig` and no X-Ray policy; the worker records nothing.
   * Recursive loop detection (`recursiveLoop`) does not depend on it: Lambda counts the hops in
   * the trace header in every mode [invocation-recursion].
   * @default lambda.Tracing.ACTIVE
   */
  readonly tracing?: lambda.Tracing;

  /**
   * Jobs this queue runs on a schedule (cron or rate, in a time zone), each an EventBridge
   * Scheduler schedule in the queue's schedule group that sends the job's envelope to the queue
   * (`id` = `<name>@<scheduled time>`, so a firing delivered twice runs once). Checked at synth:
   * the expression and time zone, the job type against `jobs`, the data (JSON), `partitionKey`
   * (required on FIFO), the retry policy's bounds. More can be added with
   * `JobQueue.addRecurringJob`. Giving any creates the queue's scheduling resources
   * (`JobQueue.scheduleGroupName`). See {@link RecurringJob} and docs/deploy.md, "Recurring jobs".
   * @default - none
   */
  readonly recurringJobs?: readonly RecurringJob[];

  /**
   * Extra environment variables of the worker. They cannot override the variables the construct
   * sets (docs/contracts.md, "Worker environment": `JOBS_QUEUE_URL`, `JOBS_QUEUE_URL_<NAME>`,
   * `POWERTOOLS_SERVICE_NAME`, ...; `NODE_OPTIONS` with `sourceMaps: true`): naming one is refused
   * at synth, each with the prop that sets it (`handlerVersion`, `enqueueTargets`, `name`, ...).
   * @default - none
   */
  readonly environment?: Readonly<Record<string, string>>;

  /**
   * `JOBS_HANDLER_VERSION`, written into DLQ evidence.
   * @default - the hash of the bundled code asset: it changes whenever the deployed code changes,
   *   and not with the directory the cloud assembly is written to (source-map paths are relative
   *   to the project)
   */
  readonly handlerVersion?: string;

  /**
   * Retention of the worker's log group.
   * @default one month
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * Directory of the project the worker belongs to (its package.json and tsconfig.json): a
   * relative `entry` is resolved against it, and the lock file is looked for from it upwards.
   * Bundling (NodejsFunction's `projectRoot`) runs from the nearest directory holding both this
   * and the lock file: this directory, or in a monorepo the repository root; the entry must lie
   * under that. A relative `projectRoot` is resolved against the current working directory.
   * @default - the directory of `depsLockFilePath` (found walking up from the entry)
   */
  readonly projectRoot?: string;

  /**
   * The lock file of the dependencies (package-lock.json, yarn.lock, pnpm-lock.yaml, bun.lock
   * or bun.lockb). In a monorepo it may sit above `projectRoot` (at the repository root).
   * @default - the nearest lock file found walking up from `projectRoot` when given, else from the entry's directory; refused when none is found or one directory holds several
   */
  readonly depsLockFilePath?: string;
}

/** The eight alarms of a {@link JobQueue}. */
export interface JobQueueAlarms {
  /**
   * DLQ `ApproximateNumberOfMessagesVisible` ≥ 1: a job gave up and needs a human. Notifies when
   * the DLQ stops being empty, not again for later arrivals while it stays in ALARM.
   */
  readonly deadLetterQueueDepth: cloudwatch.Alarm;
  /**
   * `DIFF(visible + in flight)` of the DLQ per minute > 0: messages arrived in the DLQ this minute,
   * moved by the worker or by the redrive policy. Goes back to OK after a minute without arrivals,
   * so each new arrival (after a quiet minute) notifies again, even while the DLQ is not empty.
   */
  readonly deadLetterQueueArrivals: cloudwatch.Alarm;
  /** Main queue `ApproximateAgeOfOldestMessage` above the threshold: the worker is not keeping up or is stuck. */
  readonly ageOfOldestMessage: cloudwatch.Alarm;
  /** Function `Errors` ≥ 1 in 5 minutes: the handler crashed or timed out (a whole batch failed). */
  readonly functionErrors: cloudwatch.Alarm;
  /** Function `Throttles` ≥ 1 in 5 minutes: invocations were refused for lack of concurrency. */
  readonly functionThrottles: cloudwatch.Alarm;
  /** `SqsJobs/JobDeadLettered` (Queue = name) ≥ 1: the worker sent a job to the DLQ. */
  readonly jobsDeadLettered: cloudwatch.Alarm;
  /**
   * `SqsJobs/BatchFailed` (Queue = name) ≥ 1 in a minute: the worker failed a whole batch outside
   * any record (configuration error, bug) and reported every record failed, which Lambda's
   * `Errors` does not count.
   */
  readonly batchesFailed: cloudwatch.Alarm;
  /**
   * `SqsJobs/BatchOverdue` (Queue = name) ≥ 1 in five minutes: a batch of jobs whose completion job
   * runs on this queue was still open past its `openLimitSeconds` when its watchdog checked it (a
   * child dead-lettered and waiting for its redrive, a child lost or stuck); the worker's WARN log
   * `batch overdue` names the children not counted (docs/architecture.md, "Batches").
   */
  readonly batchesOverdue: cloudwatch.Alarm;
}
