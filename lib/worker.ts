/**
 * `sqs-jobs/worker`: the same Lambda worker as `sqs-jobs`, with its optional features imported
 * one by one, so a bundle carries only the code of the features its worker uses (as Powertools'
 * per-utility packages and Middy's middlewares do). `createWorker({ jobs, features: [...] })`
 * takes the feature objects exported here: `children` (`ctx.enqueue`), `batches` (with
 * `children`: `ctx.startBatch`, batch children and completion jobs), `limits` (concurrency, rate
 * limits), `groupParking` (FIFO `onDeadLetter: 'park'`), `scheduledJobs` (jobs sent for later),
 * `rawMessages` (`defineJob({ raw })`). `createWorker` of `sqs-jobs` is this worker with all of
 * them. A missing feature is never silent: what the jobs declare throws a WorkerConfigError at
 * createWorker, a message that needs one is dead-lettered at once as `MissingFeature`, naming the
 * import to add (docs/own-app.md, "Smaller bundles: sqs-jobs/worker").
 *
 * test/unit/entry-points.test.ts pins this list, as it pins `sqs-jobs`'s.
 */
export type { RetryPolicy } from './core/backoff.ts';
export { EnvelopeError } from './core/envelope.ts';
export {
  classifyError,
  type ErrorClassification,
  JobError,
  PermanentError,
  parseRetryAfterMs,
  TransientError,
} from './core/errors.ts';
export type { JobLogExtra, JobLogger } from './core/logger.ts';
export { batches } from './runtime/features/batches.ts';
export { children } from './runtime/features/children.ts';
export { type FeatureName, MissingFeatureError, type WorkerFeature } from './runtime/features/feature.ts';
export { groupParking } from './runtime/features/group-parking.ts';
export { limits } from './runtime/features/limits.ts';
export { rawMessages } from './runtime/features/raw-messages.ts';
export { scheduledJobs } from './runtime/features/scheduled-jobs.ts';
export {
  IdempotencyRecordError,
  PayloadMismatchError,
  StepValueNotStoredError,
} from './runtime/idempotency/errors.ts';
export type { IdempotencyGuard } from './runtime/idempotency/guard.ts';
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
export { defineRateLimit, type RateLimitDefinition } from './runtime/limits/rate-limit.ts';
export type { SqsSender } from './runtime/sqs-port.ts';
export {
  createLeanWorker as createWorker,
  type LeanWorkerOptions as WorkerOptions,
  type WorkerHandler,
} from './runtime/worker.ts';
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
