/**
 * Defaults, AWS limits and names of {@link JobQueue}, each defined once.
 *
 * AWS pages the values come from (named in brackets by their last path segment):
 * - services-sqs-configure: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 * - services-sqs-parameters: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html
 * - services-sqs-scaling: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 * - sqs-dead-letter-queues: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 * - quotas-messages: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 * - configuration-memory: https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html
 */
import { Duration } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';

/** CloudWatch namespace of the worker's metrics (docs/contracts.md, "Metrics"). */
export const JOBS_METRICS_NAMESPACE = 'SqsJobs';

/** Defaults of `JobQueueProps`, defined once. */
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
  /** Exported name of the worker's handler in `entry`. */
  handler: 'handler',
} as const;

/**
 * Every command the runtime sends to the idempotency table (lib/runtime/idempotency/table.ts):
 * conditional PutItem and UpdateItem (lease, completion, release, step records, parking a FIFO
 * group), a consistent GetItem, and a conditional DeleteItem (unparking a group once its blocker
 * completed; job and step records expire by TTL); for batches (lib/runtime/batches/) a
 * BatchGetItem of children's outcomes and TransactWriteItems of Put and Update actions, which IAM
 * checks as `dynamodb:PutItem` and `dynamodb:UpdateItem` (developer guide, "Using IAM with
 * DynamoDB transactions": no action of its own). No Scan or Query.
 * test/infra/idempotency-actions.test.ts keeps this list equal to the runtime's `new XCommand(`
 * calls of `@aws-sdk/client-dynamodb`. A worker that cannot park a group is granted these
 * without {@link IDEMPOTENCY_UNPARK_ACTIONS} (./grants.ts).
 */
export const IDEMPOTENCY_TABLE_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
] as const;

/**
 * The part of {@link IDEMPOTENCY_TABLE_ACTIONS} only a worker that parks FIFO groups sends: the
 * DeleteItem of an unpark (lib/runtime/idempotency/group-store.ts, its only caller).
 */
export const IDEMPOTENCY_UNPARK_ACTIONS = ['dynamodb:DeleteItem'] as const;

/**
 * What a traced worker may do on X-Ray (the function's `TracingConfig` is `Active` or
 * `PassThrough`): upload its segments and the telemetry of their transmission, nothing else
 * (no sampling rules: Lambda samples, and centralized sampling is off inside Lambda). Neither
 * action supports resource-level permissions (Service Authorization Reference, "Actions,
 * resources, and condition keys for AWS X-Ray": no resource type), so their statement's resource
 * is `*`, in a policy of its own whose cdk-nag finding `AwsSolutions-IAM5[Resource::*]` is
 * acknowledged there, for it alone [list_awsx-ray].
 */
export const XRAY_WRITE_ACTIONS = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'] as const;

/** AWS limits the validation checks against. */
export const LIMITS = {
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
  /** `MessageRetentionPeriod` when a queue does not set it: 4 days; the maximum is 14 days [quotas-messages]. */
  sqsDefaultRetentionSeconds: 345_600,
  maxRetentionSeconds: 1_209_600,
  /** Lambda function memory: 128–10,240 MB in 1-MB steps [configuration-memory]. */
  minMemorySizeMb: 128,
  maxMemorySizeMb: 10_240,
} as const;

/**
 * Worker environment variables the construct sets itself (lib/constructs/job-queue.ts), each
 * with what to do instead of setting it in `environment`: the construct's value would win.
 */
export const RESERVED_WORKER_ENVIRONMENT: Readonly<Record<string, string>> = {
  JOBS_QUEUE_NAME: 'it is the `name` prop',
  JOBS_QUEUE_URL: "it is this queue's URL",
  JOBS_DLQ_URL: 'give the `deadLetterQueue` prop',
  JOBS_MAX_ATTEMPTS: "give the `maxAttempts` prop (or the jobs' retry.maxAttempts)",
  JOBS_JOB_TIMEOUT_SECONDS: "give the `jobTimeoutSeconds` prop (or the jobs' timeoutSeconds)",
  JOBS_HANDLER_VERSION: 'give the `handlerVersion` prop',
  JOBS_GROUP_PARKING: 'give the `onDeadLetter` prop',
  JOBS_IDEMPOTENCY_TABLE: 'give the `idempotencyTable` prop',
  POWERTOOLS_SERVICE_NAME: 'it is `sqs-jobs-<name>`: choose the `name` prop',
  POWERTOOLS_METRICS_NAMESPACE: `it is ${JOBS_METRICS_NAMESPACE}, the namespace the alarms and dashboard read`,
};

/** Prefixes of worker environment variables the construct sets per queue, and what to use instead. */
export const RESERVED_WORKER_ENVIRONMENT_PREFIXES: Readonly<Record<string, string>> = {
  JOBS_QUEUE_URL_: 'use the `enqueueTargets` prop or `addEnqueueTarget`, which also grant the send',
  JOBS_SCHEDULE_GROUP_: "use the scheduling queue's `grantScheduleJobs(worker)`",
  JOBS_SCHEDULER_ROLE_ARN_: "use the scheduling queue's `grantScheduleJobs(worker)`",
  JOBS_SCHEDULE_DLQ_ARN_: "use the scheduling queue's `grantScheduleJobs(worker)`",
};

/**
 * Logical queue names: lowercase letters, digits and `-`, starting with a letter, at most 40
 * characters, so `JOBS_QUEUE_URL_<NAME>` maps back to the name (JobClient lower-cases `<NAME>`
 * and turns `_` into `-`).
 */
export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * Ids of the warnings a JobQueue adds at synth. Acknowledge one on the queue or any scope above it with
 * `Annotations.of(scope).acknowledgeWarning(id, reason)`; `cdk synth --strict` fails on unacknowledged ones.
 */
export const JOB_QUEUE_WARNINGS = {
  lowMaxReceiveCount: 'sqs-jobs:lowMaxReceiveCount',
  noAlarmTopic: 'sqs-jobs:noAlarmTopic',
  deadLetterRetentionUnknown: 'sqs-jobs:deadLetterRetentionUnknown',
  selfEnqueueRecursiveLoop: 'sqs-jobs:selfEnqueueRecursiveLoop',
  parkOnStandardQueue: 'sqs-jobs:parkOnStandardQueue',
} as const;
