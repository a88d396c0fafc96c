/**
 * `JobQueue`: one SQS queue (FIFO or standard), its dead-letter queue, the Lambda worker that
 * consumes it, and the alarms that say when it stops. Settings are checked when the construct
 * is created; every unsafe setting is reported in one {@link JobsConfigError}.
 *
 * AWS pages the rules come from (named in the docs below by their last path segment):
 * - services-sqs-configure: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 * - services-sqs-parameters: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html
 * - services-sqs-scaling: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 * - services-sqs-errorhandling: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 * - sqs-dead-letter-queues: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 * - high-throughput-fifo: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/high-throughput-fifo.html
 * - quotas-messages: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 */
import * as path from 'node:path';
import { Annotations, Duration, Names, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { JobsConfigError } from './errors.ts';

/** CloudWatch namespace of the worker's metrics (docs/contracts.md, "Metrics"). */
export const JOBS_METRICS_NAMESPACE = 'SqsJobs';

/** Defaults of {@link JobQueueProps}, defined once. */
export const JOB_QUEUE_DEFAULTS = {
  /** Records per batch: the Lambda default and the FIFO maximum [services-sqs-parameters]. */
  batchSize: 10,
  /** 1 MiB, the SQS maximum since August 2025 [quotas-messages]. */
  maxMessageSizeBytes: 1_048_576,
  /** Spare receives above `maxAttempts` for throttled deliveries, released records and crashes. */
  maxReceiveCountMargin: 5,
  /** Below this, throttled deliveries can reach the DLQ without running [services-sqs-scaling]. */
  minSafeMaxReceiveCount: 5,
  /** The function timeout is at least this, and at least 3 job time limits. */
  minFunctionTimeoutSeconds: 30,
  functionTimeoutJobMultiple: 3,
  /** Visibility timeout = 6 × function timeout + batching window [services-sqs-configure]. */
  visibilityTimeoutMultiple: 6,
  ageOfOldestMessageAlarmThreshold: Duration.minutes(15),
  memorySizeMb: 512,
  logRetention: logs.RetentionDays.ONE_MONTH,
  /** The SQS default retention for the main queue, the maximum for the DLQ [quotas-messages]. */
  retentionPeriod: Duration.days(4),
  deadLetterRetentionPeriod: Duration.days(14),
} as const;

/**
 * What a worker may do on the idempotency table: single-item reads and conditional writes
 * (lease, completion, release, step records). No Scan, Query or batch operations.
 */
export const IDEMPOTENCY_TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/** AWS limits the validation checks against. */
const LIMITS = {
  fifoMaxBatchSize: 10,
  standardMaxBatchSize: 10_000,
  standardMaxBatchSizeWithoutWindow: 10,
  maxBatchingWindowSeconds: 300,
  minMaxConcurrency: 2,
  maxMaxConcurrency: 1000,
  maxVisibilityTimeoutSeconds: 43_200,
  maxFunctionTimeoutSeconds: 900,
  minMessageSizeBytes: 1024,
  maxMessageSizeBytes: 1_048_576,
  maxMaxReceiveCount: 1000,
} as const;

/** Properties of a {@link JobQueue}. Durations are CDK `Duration`s; plain numbers carry their unit in the name. */
export interface JobQueueProps {
  /**
   * Logical queue name, e.g. `booking`: the `Queue` metric dimension, `JOBS_QUEUE_NAME`, the
   * suffix of other workers' `JOBS_QUEUE_URL_<NAME>` and part of `POWERTOOLS_SERVICE_NAME`.
   * Lowercase letters, digits and `-`, starting with a letter, at most 40 characters (so the
   * variable name maps back to it).
   */
  readonly name: string;

  /**
   * FIFO queue (ordered per `MessageGroupId`, e.g. per user) or standard queue (parallel).
   * The dead-letter queue is of the same kind; a FIFO DLQ gets its own `.fifo` name.
   * @default false
   */
  readonly fifo?: boolean;

  /** Path of the worker's entry file (TypeScript), absolute or relative to `projectRoot`. */
  readonly entry: string;

  /**
   * Name of the exported handler in `entry`.
   * @default 'handler'
   */
  readonly handler?: string;

  /**
   * The highest `retry.maxAttempts` among the jobs this worker runs. The worker counts attempts
   * itself; the queue's `maxReceiveCount` must sit above it as a safety net.
   */
  readonly maxAttempts: number;

  /**
   * The highest `timeoutSeconds` (soft time limit) among the jobs this worker runs, in seconds.
   * Must be below the function timeout.
   */
  readonly jobTimeoutSeconds: number;

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
   * Lambda memory size in MiB (also scales CPU).
   * @default 512
   */
  readonly memorySizeMb?: number;

  /**
   * Records per invocation. FIFO: 1–10. Standard: 1–10,000, above 10 only with a
   * `maxBatchingWindow` of at least 1 second [services-sqs-parameters].
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
   * `MaximumMessageSize` of the queue and its DLQ, in bytes, 1,024–1,048,576. Set explicitly:
   * some tools still default it to 256 KiB [quotas-messages].
   * @default 1,048,576 (1 MiB)
   */
  readonly maxMessageSizeBytes?: number;

  /**
   * How long the main queue keeps a message (60 seconds – 14 days). The DLQ keeps messages
   * 14 days, the maximum.
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
   * @default - a new encrypted DLQ of the same kind, 14 days retention
   */
  readonly deadLetterQueue?: sqs.IQueue;

  /**
   * Alarm when the oldest message of the main queue is older than this.
   * @default 15 minutes
   */
  readonly ageOfOldestMessageAlarmThreshold?: Duration;

  /**
   * SNS topic the alarms notify (on ALARM and on return to OK).
   * @default - alarms are created without actions
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * The idempotency table (see `IdempotencyTable`): its name goes into `JOBS_IDEMPOTENCY_TABLE`
   * and the worker may read and write its items.
   * @default - none: `JOBS_IDEMPOTENCY_TABLE` is unset and the worker refuses to start unless idempotency is switched off in code
   */
  readonly idempotencyTable?: dynamodb.ITable;

  /**
   * Queues this worker's jobs enqueue to, by logical name: each sets
   * `JOBS_QUEUE_URL_<NAME>` (name upper-cased, `-` → `_`) and grants send. More can be added
   * with {@link JobQueue.addEnqueueTarget} (e.g. the queue itself, for job chaining).
   * @default - none
   */
  readonly enqueueTargets?: Readonly<Record<string, sqs.IQueue>>;

  /**
   * Extra environment variables of the worker. They cannot override the `JOBS_*` and
   * `POWERTOOLS_*` variables set by the construct.
   * @default - none
   */
  readonly environment?: Readonly<Record<string, string>>;

  /**
   * `JOBS_HANDLER_VERSION`, written into DLQ evidence.
   * @default - the hash of the bundled code asset (changes whenever the deployed code changes)
   */
  readonly handlerVersion?: string;

  /**
   * Retention of the worker's log group.
   * @default one month
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * Directory with the project's package.json and tsconfig.json; `entry` may be relative to it.
   * @default - the directory of the nearest lock file above the current working directory
   */
  readonly projectRoot?: string;

  /**
   * The project's lock file (package-lock.json).
   * @default - `projectRoot`/package-lock.json when `projectRoot` is given, else found by walking up from the working directory
   */
  readonly depsLockFilePath?: string;
}

/** The five alarms of a {@link JobQueue}. */
export interface JobQueueAlarms {
  /** DLQ `ApproximateNumberOfMessagesVisible` ≥ 1: a job gave up and needs a human. */
  readonly deadLetterQueueDepth: cloudwatch.Alarm;
  /** Main queue `ApproximateAgeOfOldestMessage` above the threshold: the worker is not keeping up or is stuck. */
  readonly ageOfOldestMessage: cloudwatch.Alarm;
  /** Function `Errors` ≥ 1 in 5 minutes: the handler crashed or timed out (a whole batch failed). */
  readonly functionErrors: cloudwatch.Alarm;
  /** Function `Throttles` ≥ 1 in 5 minutes: invocations were refused for lack of concurrency. */
  readonly functionThrottles: cloudwatch.Alarm;
  /** `SqsJobs/JobDeadLettered` (Queue = name) ≥ 1: the worker sent a job to the DLQ. */
  readonly jobsDeadLettered: cloudwatch.Alarm;
}

interface ResolvedSettings {
  readonly fifo: boolean;
  readonly maxReceiveCount: number;
  readonly functionTimeout: Duration;
  readonly batchSize: number;
  readonly visibilityTimeout: Duration;
  readonly maxMessageSizeBytes: number;
}

/** Seconds of a duration, or undefined when it is an unresolved token (not checkable at synth). */
function secondsOf(d: Duration | undefined): number | undefined {
  if (d === undefined || d.isUnresolved()) return undefined;
  return d.toSeconds({ integral: false });
}

function isKnownNumber(n: number | undefined): n is number {
  return n !== undefined && !Token.isUnresolved(n);
}

/**
 * Logical queue names: lowercase letters, digits and `-`, starting with a letter, at most 40
 * characters, so `JOBS_QUEUE_URL_<NAME>` maps back to the name (JobClient lower-cases `<NAME>`
 * and turns `_` into `-`).
 */
const NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/;

/** `JOBS_QUEUE_URL_<NAME>` for a logical queue name (docs/contracts.md). */
export function enqueueUrlVariable(queueName: string): string {
  return `JOBS_QUEUE_URL_${queueName.toUpperCase().replaceAll('-', '_')}`;
}

/** Applies the defaults of {@link JobQueueProps} (see {@link JOB_QUEUE_DEFAULTS}). */
function resolveSettings(props: JobQueueProps): ResolvedSettings {
  const fifo = props.fifo ?? false;
  const maxReceiveCount =
    props.maxReceiveCount ?? props.maxAttempts + JOB_QUEUE_DEFAULTS.maxReceiveCountMargin;
  const functionTimeout =
    props.functionTimeout ??
    Duration.seconds(
      Math.min(
        LIMITS.maxFunctionTimeoutSeconds,
        Math.max(
          JOB_QUEUE_DEFAULTS.minFunctionTimeoutSeconds,
          Math.ceil(props.jobTimeoutSeconds * JOB_QUEUE_DEFAULTS.functionTimeoutJobMultiple),
        ),
      ),
    );
  const visibilityTimeout =
    props.visibilityTimeout ??
    (functionTimeout.isUnresolved() || props.maxBatchingWindow?.isUnresolved()
      ? functionTimeout // unresolved tokens: let CloudFormation/Lambda judge; checked at deploy
      : Duration.seconds(
          Math.ceil(
            JOB_QUEUE_DEFAULTS.visibilityTimeoutMultiple * functionTimeout.toSeconds({ integral: false }) +
              (secondsOf(props.maxBatchingWindow) ?? 0),
          ),
        ));
  return {
    fifo,
    maxReceiveCount,
    functionTimeout,
    batchSize: props.batchSize ?? JOB_QUEUE_DEFAULTS.batchSize,
    visibilityTimeout,
    maxMessageSizeBytes: props.maxMessageSizeBytes ?? JOB_QUEUE_DEFAULTS.maxMessageSizeBytes,
  };
}

/**
 * Every unsafe or impossible setting, each starting with the setting's name. Empty when all is well.
 * Values given as unresolved tokens are not checked.
 */
function findProblems(props: JobQueueProps, s: ResolvedSettings): string[] {
  const problems: string[] = [];
  const kind = s.fifo ? 'FIFO' : 'standard';

  if (!NAME_PATTERN.test(props.name)) {
    problems.push(
      `name: '${props.name}' must start with a lowercase letter and contain only lowercase letters, digits and '-' (at most 40 characters)`,
    );
  }
  if (!Number.isInteger(props.maxAttempts) || props.maxAttempts < 1) {
    problems.push(`maxAttempts: ${props.maxAttempts} must be a whole number of at least 1`);
  }
  if (!(props.jobTimeoutSeconds > 0)) {
    problems.push(`jobTimeoutSeconds: ${props.jobTimeoutSeconds} must be above 0`);
  }

  // Dead-letter queue kind [sqs-dead-letter-queues].
  const dlq = props.deadLetterQueue;
  if (dlq !== undefined && dlq.fifo !== s.fifo) {
    problems.push(
      `deadLetterQueue: a ${kind} queue needs a ${kind} dead-letter queue, but the given one is ${dlq.fifo ? 'FIFO' : 'standard'} [sqs-dead-letter-queues]`,
    );
  }

  // Redrive policy above the worker's own attempts.
  if (isKnownNumber(s.maxReceiveCount)) {
    if (!Number.isInteger(s.maxReceiveCount) || s.maxReceiveCount <= props.maxAttempts) {
      problems.push(
        `maxReceiveCount: ${s.maxReceiveCount} must be a whole number above maxAttempts (${props.maxAttempts}), or SQS dead-letters messages before the worker has used its attempts`,
      );
    } else if (s.maxReceiveCount > LIMITS.maxMaxReceiveCount) {
      problems.push(
        `maxReceiveCount: ${s.maxReceiveCount} is above ${LIMITS.maxMaxReceiveCount}, the SQS maximum [sqs-dead-letter-queues]`,
      );
    }
  }

  // Function timeout and the job time limit.
  const fnTimeout = secondsOf(s.functionTimeout);
  if (fnTimeout !== undefined) {
    if (fnTimeout > LIMITS.maxFunctionTimeoutSeconds) {
      problems.push(
        `functionTimeout: ${fnTimeout} s is above ${LIMITS.maxFunctionTimeoutSeconds} s, the Lambda maximum`,
      );
    }
    if (props.jobTimeoutSeconds >= fnTimeout) {
      problems.push(
        `jobTimeoutSeconds: ${props.jobTimeoutSeconds} s must be below functionTimeout (${fnTimeout} s), or a job that runs into its time limit is killed with the whole batch instead of being aborted and retried`,
      );
    }
  }

  // Batch size and batching window [services-sqs-parameters].
  const window = secondsOf(props.maxBatchingWindow);
  if (isKnownNumber(s.batchSize)) {
    if (!Number.isInteger(s.batchSize) || s.batchSize < 1) {
      problems.push(`batchSize: ${s.batchSize} must be a whole number of at least 1`);
    } else if (s.fifo && s.batchSize > LIMITS.fifoMaxBatchSize) {
      problems.push(
        `batchSize: ${s.batchSize} is above ${LIMITS.fifoMaxBatchSize}, the maximum for a FIFO queue [services-sqs-parameters]`,
      );
    } else if (!s.fifo && s.batchSize > LIMITS.standardMaxBatchSize) {
      problems.push(
        `batchSize: ${s.batchSize} is above ${LIMITS.standardMaxBatchSize}, the maximum for a standard queue [services-sqs-parameters]`,
      );
    } else if (
      !s.fifo &&
      s.batchSize > LIMITS.standardMaxBatchSizeWithoutWindow &&
      (props.maxBatchingWindow === undefined || (window !== undefined && window < 1))
    ) {
      problems.push(
        `batchSize: ${s.batchSize} is above ${LIMITS.standardMaxBatchSizeWithoutWindow}, which needs a maxBatchingWindow of at least 1 second [services-sqs-parameters]`,
      );
    }
  }
  if (props.maxBatchingWindow !== undefined && s.fifo) {
    problems.push(
      'maxBatchingWindow: FIFO queues do not support a batching window [services-sqs-parameters]',
    );
  } else if (window !== undefined && window > LIMITS.maxBatchingWindowSeconds) {
    problems.push(
      `maxBatchingWindow: ${window} s is above ${LIMITS.maxBatchingWindowSeconds} s, the Lambda maximum [services-sqs-parameters]`,
    );
  }

  // Concurrency [services-sqs-scaling].
  if (
    isKnownNumber(props.reservedConcurrency) &&
    (!Number.isInteger(props.reservedConcurrency) || props.reservedConcurrency < 1)
  ) {
    problems.push(
      `reservedConcurrency: ${props.reservedConcurrency} must be a whole number of at least 1 (0 stops the worker)`,
    );
  }
  if (isKnownNumber(props.maxConcurrency)) {
    const mc = props.maxConcurrency;
    if (!Number.isInteger(mc) || mc < LIMITS.minMaxConcurrency || mc > LIMITS.maxMaxConcurrency) {
      problems.push(
        `maxConcurrency: ${mc} is outside ${LIMITS.minMaxConcurrency}–${LIMITS.maxMaxConcurrency}, the range Lambda accepts [services-sqs-scaling]`,
      );
    }
    if (isKnownNumber(props.reservedConcurrency) && mc > props.reservedConcurrency) {
      problems.push(
        `maxConcurrency: ${mc} is above reservedConcurrency (${props.reservedConcurrency}): the surplus invocations are throttled and their messages return with a raised receive count [services-sqs-scaling]`,
      );
    }
  }

  // Visibility timeout [services-sqs-configure].
  const visibility = secondsOf(s.visibilityTimeout);
  if (
    visibility !== undefined &&
    fnTimeout !== undefined &&
    (props.maxBatchingWindow === undefined || window !== undefined)
  ) {
    const minimum = JOB_QUEUE_DEFAULTS.visibilityTimeoutMultiple * fnTimeout + (window ?? 0);
    if (visibility < minimum) {
      problems.push(
        `visibilityTimeout: ${visibility} s is below ${minimum} s (6 × functionTimeout ${fnTimeout} s${window ? ` + maxBatchingWindow ${window} s` : ''}) [services-sqs-configure]`,
      );
    }
    if (visibility > LIMITS.maxVisibilityTimeoutSeconds) {
      problems.push(
        `visibilityTimeout: ${visibility} s is above ${LIMITS.maxVisibilityTimeoutSeconds} s (12 hours), the SQS maximum; lower functionTimeout`,
      );
    }
  }

  // Message size [quotas-messages].
  if (
    isKnownNumber(s.maxMessageSizeBytes) &&
    (s.maxMessageSizeBytes < LIMITS.minMessageSizeBytes || s.maxMessageSizeBytes > LIMITS.maxMessageSizeBytes)
  ) {
    problems.push(
      `maxMessageSizeBytes: ${s.maxMessageSizeBytes} is outside ${LIMITS.minMessageSizeBytes}–${LIMITS.maxMessageSizeBytes} bytes [quotas-messages]`,
    );
  }

  // High-throughput FIFO [high-throughput-fifo].
  if (!s.fifo && props.deduplicationScope !== undefined) {
    problems.push('deduplicationScope: only FIFO queues have a deduplication scope');
  }
  if (!s.fifo && props.fifoThroughputLimit !== undefined) {
    problems.push('fifoThroughputLimit: only FIFO queues have a throughput limit');
  }
  if (
    s.fifo &&
    props.fifoThroughputLimit === sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID &&
    props.deduplicationScope !== sqs.DeduplicationScope.MESSAGE_GROUP
  ) {
    problems.push(
      'fifoThroughputLimit: perMessageGroupId requires deduplicationScope messageGroup [high-throughput-fifo]',
    );
  }

  for (const target of Object.keys(props.enqueueTargets ?? {})) {
    if (!NAME_PATTERN.test(target)) {
      problems.push(
        `enqueueTargets: '${target}' is not a valid logical queue name (lowercase letters, digits, '-')`,
      );
    }
  }

  return problems;
}

/**
 * A queue of background jobs and its Lambda worker.
 *
 * Creates:
 * - the queue (FIFO or standard): SSE-SQS encryption at rest, a queue policy that denies
 *   requests without TLS, `MaximumMessageSize` set explicitly, a redrive policy to the DLQ with
 *   `maxReceiveCount` above `maxAttempts`;
 * - the dead-letter queue (unless one is given): same kind, 14 days retention, same encryption
 *   and TLS policy;
 * - the worker: a `NodejsFunction` on `nodejs24.x`, ARM64, bundled by the local esbuild as a
 *   minified ESM bundle with source maps (the AWS SDK included, so the tested versions are the
 *   deployed ones); its own log group and a role that may only write its logs, consume and
 *   change visibility on its queue, send to its DLQ and enqueue targets, and read/write the
 *   idempotency table;
 * - the SQS event source with `ReportBatchItemFailures` always on [services-sqs-errorhandling];
 * - five alarms ({@link JobQueueAlarms}), with the alarm topic as action when given.
 *
 * Worker environment (docs/contracts.md): `JOBS_QUEUE_NAME`, `JOBS_QUEUE_URL`, `JOBS_DLQ_URL`,
 * `JOBS_IDEMPOTENCY_TABLE` (when a table is given), `JOBS_QUEUE_URL_<NAME>` per enqueue target,
 * `JOBS_HANDLER_VERSION`, `POWERTOOLS_SERVICE_NAME` (`sqs-jobs-<name>`),
 * `POWERTOOLS_METRICS_NAMESPACE` (`SqsJobs`), plus `environment`.
 *
 * Validation happens in the constructor, before anything is created or bundled: it is plain
 * data, known at once, and failing at `new JobQueue(...)` points the stack trace at the caller.
 *
 * @throws {JobsConfigError} listing every unsafe setting (each problem names its prop), when
 *   `name` is malformed; the DLQ kind differs from the queue's; `maxConcurrency` is outside
 *   2–1000 or above `reservedConcurrency`; `batchSize` is over 10 on FIFO, over 10,000 on
 *   standard, or over 10 on standard without a batching window of at least 1 s; a batching
 *   window is set on FIFO (or exceeds 5 minutes); `visibilityTimeout` is below 6 × the function
 *   timeout plus the batching window (or above 12 hours); `maxReceiveCount` is at or below
 *   `maxAttempts`; `jobTimeoutSeconds` is not below the function timeout; the message size is
 *   outside 1 KiB–1 MiB; high-throughput FIFO settings are inconsistent or set on a standard queue.
 */
export class JobQueue extends Construct {
  /** Logical name (`props.name`). */
  readonly name: string;
  /** Whether the queue is FIFO. */
  readonly fifo: boolean;
  /** The main queue the worker consumes. */
  readonly queue: sqs.Queue;
  /** The dead-letter queue: created, or the one passed in. */
  readonly deadLetterQueue: sqs.IQueue;
  /** The worker function. */
  readonly worker: nodejs.NodejsFunction;
  /** The worker's log group. */
  readonly logGroup: logs.LogGroup;
  /** The SQS event source mapping. */
  readonly eventSource: SqsEventSource;
  /** The alarms of this queue and worker. */
  readonly alarms: JobQueueAlarms;
  /** The redrive policy's `maxReceiveCount` in effect. */
  readonly maxReceiveCount: number;
  /** The function timeout in effect. */
  readonly functionTimeout: Duration;
  /** The queue's visibility timeout in effect. */
  readonly visibilityTimeout: Duration;

  private readonly enqueueTargetNames = new Set<string>();

  constructor(scope: Construct, id: string, props: JobQueueProps) {
    super(scope, id);
    const settings = resolveSettings(props);
    const problems = findProblems(props, settings);
    if (problems.length > 0) throw new JobsConfigError(`JobQueue '${props.name}'`, this.node.path, problems);

    this.name = props.name;
    this.fifo = settings.fifo;
    this.maxReceiveCount = settings.maxReceiveCount;
    this.functionTimeout = settings.functionTimeout;
    this.visibilityTimeout = settings.visibilityTimeout;

    if (
      isKnownNumber(settings.maxReceiveCount) &&
      settings.maxReceiveCount < JOB_QUEUE_DEFAULTS.minSafeMaxReceiveCount
    ) {
      Annotations.of(this).addWarningV2(
        'sqs-jobs:lowMaxReceiveCount',
        `maxReceiveCount ${settings.maxReceiveCount} is below ${JOB_QUEUE_DEFAULTS.minSafeMaxReceiveCount}: throttled deliveries raise the receive count without running and can reach the DLQ [services-sqs-scaling]`,
      );
    }

    const fifoProps = settings.fifo
      ? {
          fifo: true,
          deduplicationScope: props.deduplicationScope,
          fifoThroughputLimit: props.fifoThroughputLimit,
        }
      : {};

    this.deadLetterQueue =
      props.deadLetterQueue ??
      new sqs.Queue(this, 'DeadLetterQueue', {
        fifo: settings.fifo ? true : undefined,
        queueName: settings.fifo ? fifoQueueName(this, 'dlq') : undefined,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: JOB_QUEUE_DEFAULTS.deadLetterRetentionPeriod,
        maxMessageSizeBytes: settings.maxMessageSizeBytes,
      });

    this.queue = new sqs.Queue(this, 'Queue', {
      ...fifoProps,
      queueName: settings.fifo ? fifoQueueName(this, 'queue') : undefined,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: settings.visibilityTimeout,
      retentionPeriod: props.retentionPeriod ?? JOB_QUEUE_DEFAULTS.retentionPeriod,
      maxMessageSizeBytes: settings.maxMessageSizeBytes,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
    });

    this.logGroup = new logs.LogGroup(this, 'WorkerLogs', {
      retention: props.logRetention ?? JOB_QUEUE_DEFAULTS.logRetention,
    });
    const role = new iam.Role(this, 'WorkerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `sqs-jobs worker of queue ${props.name}: its logs, its queues, the idempotency table`,
    });
    this.logGroup.grantWrite(role);

    const projectRoot = props.projectRoot;
    const entry = projectRoot !== undefined ? path.resolve(projectRoot, props.entry) : props.entry;
    const depsLockFilePath =
      props.depsLockFilePath ??
      (projectRoot !== undefined ? path.join(projectRoot, 'package-lock.json') : undefined);

    this.worker = new nodejs.NodejsFunction(this, 'Worker', {
      entry,
      handler: props.handler ?? 'handler',
      projectRoot,
      depsLockFilePath,
      description: `sqs-jobs worker of queue ${props.name}`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySizeMb ?? JOB_QUEUE_DEFAULTS.memorySizeMb,
      timeout: settings.functionTimeout,
      reservedConcurrentExecutions: props.reservedConcurrency,
      role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      bundling: {
        format: nodejs.OutputFormat.ESM,
        target: 'node24',
        minify: true,
        // Error class names are DLQ evidence (ErrorName) and the operators' grouping key:
        // minification must not turn EnvelopeError into `kt`.
        keepNames: true,
        sourceMap: true,
        // The AWS SDK is bundled: the deployed versions are the ones the tests ran against.
        bundleAwsSDK: true,
        mainFields: ['module', 'main'],
        // Bundled CommonJS dependencies call require(); an ESM bundle has none unless defined.
        banner:
          "import { createRequire as __sqsJobsCreateRequire } from 'node:module'; const require = __sqsJobsCreateRequire(import.meta.url);",
      },
      environment: {
        ...props.environment,
        JOBS_QUEUE_NAME: props.name,
        JOBS_QUEUE_URL: this.queue.queueUrl,
        JOBS_DLQ_URL: this.deadLetterQueue.queueUrl,
        POWERTOOLS_SERVICE_NAME: `sqs-jobs-${props.name}`,
        POWERTOOLS_METRICS_NAMESPACE: JOBS_METRICS_NAMESPACE,
        // Stack traces in logs and DLQ evidence point at the TypeScript sources.
        NODE_OPTIONS: '--enable-source-maps',
      },
    });
    const cfnWorker = this.worker.node.defaultChild as lambda.CfnFunction;
    // Lets tools find a queue's worker (and its code asset) in the synthesized template.
    cfnWorker.addMetadata('sqs-jobs:queue', props.name);
    this.worker.addEnvironment('JOBS_HANDLER_VERSION', props.handlerVersion ?? codeAssetHash(cfnWorker));

    if (props.idempotencyTable !== undefined) {
      this.worker.addEnvironment('JOBS_IDEMPOTENCY_TABLE', props.idempotencyTable.tableName);
      // Item-level reads and conditional writes of the idempotency records, nothing table-wide.
      props.idempotencyTable.grant(role, ...IDEMPOTENCY_TABLE_ACTIONS);
    }

    // The worker sends dead-lettered jobs with their evidence itself; SQS redrive is the safety net.
    this.deadLetterQueue.grantSendMessages(role);

    this.eventSource = new SqsEventSource(this.queue, {
      batchSize: settings.batchSize,
      maxBatchingWindow: props.maxBatchingWindow,
      maxConcurrency: props.maxConcurrency,
      reportBatchItemFailures: true,
    });
    // Grants consume (receive, delete, change visibility, get attributes) on the queue.
    this.worker.addEventSource(this.eventSource);

    for (const [name, queue] of Object.entries(props.enqueueTargets ?? {}))
      this.addEnqueueTarget(name, queue);

    this.alarms = this.createAlarms(props);
    if (props.alarmTopic !== undefined) {
      const action = new cloudwatchActions.SnsAction(props.alarmTopic);
      for (const alarm of Object.values(this.alarms) as cloudwatch.Alarm[]) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }
  }

  /**
   * Lets the worker's jobs enqueue to `queue`: sets `JOBS_QUEUE_URL_<NAME>` and grants send.
   * Use it for targets created after this queue, and for the queue itself (job chaining).
   * @throws {JobsConfigError} when `name` is not a valid logical name or was added before.
   */
  addEnqueueTarget(name: string, queue: sqs.IQueue): void {
    const problems: string[] = [];
    if (!NAME_PATTERN.test(name))
      problems.push(`enqueueTargets: '${name}' is not a valid logical queue name`);
    if (this.enqueueTargetNames.has(name))
      problems.push(`enqueueTargets: '${name}' is already an enqueue target`);
    if (problems.length > 0) throw new JobsConfigError(`JobQueue '${this.name}'`, this.node.path, problems);
    this.enqueueTargetNames.add(name);
    this.worker.addEnvironment(enqueueUrlVariable(name), queue.queueUrl);
    queue.grantSendMessages(this.worker);
  }

  /** Logical names of the queues this worker may enqueue to. */
  get enqueueTargets(): readonly string[] {
    return [...this.enqueueTargetNames];
  }

  /** A worker metric of namespace `SqsJobs` with dimension `Queue` = this queue's name (docs/contracts.md). */
  metricJobs(
    metricName: 'JobCompleted' | 'JobRetried' | 'JobDeadLettered' | 'JobDuplicateAbsorbed' | 'JobDuration',
    options: cloudwatch.MetricOptions = {},
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: JOBS_METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { Queue: this.name },
      statistic: metricName === 'JobDuration' ? 'Average' : 'Sum',
      period: Duration.minutes(1),
      ...options,
    });
  }

  private createAlarms(props: JobQueueProps): JobQueueAlarms {
    const oneMinute = Duration.minutes(1);
    const fiveMinutes = Duration.minutes(5);
    const ageThreshold =
      props.ageOfOldestMessageAlarmThreshold ?? JOB_QUEUE_DEFAULTS.ageOfOldestMessageAlarmThreshold;
    const q = `queue ${props.name}`;
    return {
      deadLetterQueueDepth: new cloudwatch.Alarm(this, 'DeadLetterQueueDepthAlarm', {
        alarmDescription: `${q}: the dead-letter queue holds at least one message. A job failed permanently or used up its attempts: inspect the DLQ evidence, fix, then redrive.`,
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: oneMinute,
          statistic: 'Maximum',
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      ageOfOldestMessage: new cloudwatch.Alarm(this, 'AgeOfOldestMessageAlarm', {
        alarmDescription: `${q}: the oldest message has waited more than ${ageThreshold.toHumanString()}. The worker is not keeping up, is failing, throttled or disabled.`,
        metric: this.queue.metricApproximateAgeOfOldestMessage({ period: oneMinute, statistic: 'Maximum' }),
        threshold: ageThreshold.toSeconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      functionErrors: new cloudwatch.Alarm(this, 'WorkerErrorsAlarm', {
        alarmDescription: `${q}: the worker function failed an invocation (crash, timeout or out of memory), so a whole batch returned to the queue. Job failures inside a batch do not count here.`,
        metric: this.worker.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      functionThrottles: new cloudwatch.Alarm(this, 'WorkerThrottlesAlarm', {
        alarmDescription: `${q}: invocations of the worker were throttled (reserved or account concurrency exhausted). Throttled messages return with a raised receive count.`,
        metric: this.worker.metricThrottles({ period: fiveMinutes, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      jobsDeadLettered: new cloudwatch.Alarm(this, 'JobsDeadLetteredAlarm', {
        alarmDescription: `${q}: the worker sent at least one job to the dead-letter queue (permanent error, attempts used up, or an expired lease under the dead-letter policy).`,
        metric: this.metricJobs('JobDeadLettered', { period: oneMinute, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    };
  }
}

/**
 * A FIFO queue name: unique per construct path, at most 80 characters, ending in `.fifo`.
 * CloudFormation's generated FIFO names can exceed the 80-character limit with long stack names
 * (cloudformation-coverage-roadmap issue 280), so FIFO queues are named here.
 */
function fifoQueueName(scope: Construct, suffix: string): string {
  const base = Names.uniqueResourceName(scope, {
    maxLength: 80 - suffix.length - '-.fifo'.length,
    separator: '-',
  });
  return `${base}-${suffix}.fifo`;
}

/**
 * The hash of the function's code asset: the S3 object key without `.zip`. Falls back to the
 * stack's name when the key is not a literal (e.g. a custom synthesizer).
 */
function codeAssetHash(fn: lambda.CfnFunction): string {
  const code = fn.code as lambda.CfnFunction.CodeProperty;
  const key = code.s3Key;
  if (typeof key === 'string' && !Token.isUnresolved(key)) return key.replace(/\.zip$/, '');
  return `unknown-${Stack.of(fn).stackName}`;
}
