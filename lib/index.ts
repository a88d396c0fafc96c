/**
 * `sqs-jobs`: what runs in the Lambda worker. Define jobs (`defineJob`), wire them into a
 * handler (`createWorker`), classify failures (`PermanentError`, `TransientError`,
 * `classifyError`), and the error classes a dead letter names (docs/operations.md). Its import
 * graph never reaches aws-cdk-lib, constructs or the CLI: the producer client is
 * `sqs-jobs/client`, the constructs `sqs-jobs/cdk`, the DLQ tools `sqs-jobs/ops`.
 *
 * The public API: what README.md, docs/ and examples/ use, plus the types of those signatures.
 * test/unit/entry-points.test.ts pins this list; adding a name is a decision made in review.
 */
export { batchChild, batchCompletion } from './client/batch-entries.ts';
export type { BatchChildEntry, BatchCompletionEntry } from './client/batch-start.ts';
export type { RetryPolicy } from './core/backoff.ts';
export type { BatchDeadLetterPolicy } from './core/batch.ts';
export { EnvelopeError } from './core/envelope.ts';
export {
  classifyError,
  type ErrorClassification,
  JobError,
  PermanentError,
  parseRetryAfterMs,
  TransientError,
} from './core/errors.ts';
export type { JobLogExtra, JobLogger, LogWriter } from './core/logger.ts';
export type { BatchChildOutcome, BatchContext } from './runtime/batches/context.ts';
export type { JobBatchSpec } from './runtime/batches/start.ts';
export {
  IdempotencyRecordError,
  PayloadMismatchError,
  StepValueNotStoredError,
} from './runtime/idempotency/errors.ts';
export type {
  BeginOutcome,
  BeginRequest,
  IdempotencyGuard,
  Lease,
  LeaseWrite,
  TogetherWrite,
} from './runtime/idempotency/guard.ts';
export {
  type DeadLetterPolicy,
  defineJob,
  type EnqueueOptions,
  type JobContext,
  type JobDefinition,
  type JobIdempotencyOptions,
  type JobLineage,
  type JobSpec,
  type LeaseExpiredPolicy,
  type RateLimitOptions,
  type RateLimitPermit,
  type StepValue,
} from './runtime/job.ts';
export type { ConcurrencyOptions } from './runtime/limits/concurrency.ts';
export {
  ConcurrencyKeyError,
  LimitStoreError,
  LimitWait,
  RateLimitUsageError,
} from './runtime/limits/errors.ts';
export {
  type AdaptiveRateOptions,
  defineRateLimit,
  type RateLimitDefinition,
  type RateLimitSpec,
} from './runtime/limits/rate-limit.ts';
export { LimitStore, type LimitStoreOptions } from './runtime/limits/store.ts';
export type { RawJobIdentity, RawMessageFormat, RawMessageOptions } from './runtime/raw-messages.ts';
export type { SqsSender } from './runtime/sqs-port.ts';
export { createWorker, type WorkerHandler, type WorkerOptions } from './runtime/worker.ts';
export {
  ChildRejectedError,
  GroupParkedError,
  JobDataInvalidError,
  JobIdentityError,
  JobTimeoutError,
  LeaseExpiredError,
  OrderedJobWithoutGroupError,
  RawMessageError,
  UnknownJobTypeError,
  WorkerConfigError,
} from './runtime/worker-errors.ts';
