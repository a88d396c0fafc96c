/**
 * `sqs-jobs/client`: what a producer service needs to send jobs: `JobClient` (send, send a
 * batch, send a ready envelope, send for later, cancel, reschedule, start a batch),
 * `queueUrlsFromEnv`, `schedulingFromEnv`, and `JobClientError` for what it refuses. Its import
 * graph reaches `@aws-sdk/client-sqs` (and `@standard-schema/spec` types); `@aws-sdk/client-scheduler`,
 * `@aws-sdk/client-dynamodb` and croner only through the dynamic import of the jobs sent for
 * later (lib/client/scheduled-jobs.ts), and `@aws-sdk/client-dynamodb` for `startBatch` (loaded
 * at the first start). Plain JavaScript on Node 20 works.
 *
 * The public API: what README.md, docs/ and examples/ use, plus the types of those signatures.
 * test/unit/entry-points.test.ts pins this list; adding a name is a decision made in review.
 */
export type { BatchDeadLetterPolicy } from '../core/batch.ts';
export type { JobEnvelope } from '../core/envelope.ts';
export { JobError } from '../core/errors.ts';
export type { LogWriter } from '../core/logger.ts';
export { queueUrlsFromEnv } from '../core/queue-urls.ts';
export { batchChild, batchCompletion } from './batch-entries.ts';
export type {
  BatchChildEntry,
  BatchCompletionEntry,
  BatchSpec,
  BatchStarted,
  WatchdogScheduler,
} from './batch-start.ts';
export type { JobClientBatchOptions } from './batch-table.ts';
export {
  type BatchEntry,
  type BatchResult,
  batchEntry,
  type CheckedEnvelope,
  type FailedEntry,
  JobClient,
  type JobClientOptions,
  type ParentLink,
  type SendableJob,
  type SendEnvelopeOptions,
  type SendOptions,
  type SendResult,
  type SentEntry,
  type SqsBatchSender,
} from './job-client.ts';
export { type EntryProblem, JobClientError } from './job-client-error.ts';
export type { ClientRetryOptions } from './retry.ts';
export {
  type CancelResult,
  type DynamoDbSender,
  type QueueScheduling,
  type RescheduleResult,
  type ScheduledJobIdentity,
  type SchedulerSender,
  type SchedulingOptions,
  schedulingFromEnv,
} from './scheduling.ts';
