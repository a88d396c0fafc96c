/**
 * `sqs-jobs/testing`: test your own jobs and workers without AWS. `runJob` runs one job with a
 * test context and reports what it did (result or classified error, children, steps, logs);
 * `jobRecord` / `sqsRecord` / `sqsEvent` / `lambdaContext` build what Lambda hands a worker's
 * handler; `MemoryIdempotencyStore` is the idempotency store in memory, for
 * `createWorker({ idempotency })`, so duplicates are absorbed as in production, `MemoryLimitStore`
 * the concurrency slots and rate buckets in memory, for `createWorker({ limits })`, and `MemorySqs`
 * records what the worker sends (dead letters with their evidence, children, retries). Works under any
 * test runner (vitest, jest, node:test): examples/testing.
 *
 * The public API: test/unit/entry-points.test.ts pins this list.
 */

export { MemoryLimitStore, type MemoryLimitStoreOptions } from './memory-limits.ts';
export { type FailRule, MemorySqs, type SqsCall } from './memory-sqs.ts';
export {
  MemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
  type MemoryJobRecord,
} from './memory-store.ts';
export {
  type CompletedRun,
  type EnqueuedChild,
  type FailedRun,
  type JobRunOutcome,
  type LoggedLine,
  type RecordedLogLevel,
  type RecordedStep,
  type RunJobOptions,
  runJob,
  type StartedBatch,
  type TakenRateLimit,
} from './run-job.ts';
export {
  type JobBodyOptions,
  type JobRecordOptions,
  jobBody,
  jobRecord,
  lambdaContext,
  queueArn,
  queueUrl,
  type RecordInput,
  sqsEvent,
  sqsRecord,
  TEST_ACCOUNT,
  TEST_REGION,
  type TestLambdaContext,
} from './sqs-events.ts';
