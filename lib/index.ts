/**
 * `sqs-jobs`: what runs in the Lambda worker. Define jobs (`defineJob`), wire them into a
 * handler (`createWorker`), classify failures (`PermanentError`, `TransientError`,
 * `classifyError`), the envelope contract and the idempotency store. Its import graph never
 * reaches aws-cdk-lib, constructs or the CLI: the producer client is `sqs-jobs/client`, the
 * constructs `sqs-jobs/cdk`, the DLQ tools `sqs-jobs/ops`.
 */
export {
  backoffDelaySeconds,
  DEFAULT_RETRY_POLICY,
  MAX_VISIBILITY_TIMEOUT_SECONDS,
  type RetryPolicy,
  resolveRetryPolicy,
} from './core/backoff.ts';
export {
  type CreateEnvelopeInput,
  childJobId,
  createEnvelope,
  DATA_CONTENT_TYPE,
  deduplicationIdOf,
  EnvelopeError,
  type EnvelopeLineage,
  type JobEnvelope,
  parseEnvelope,
  SPEC_VERSION,
} from './core/envelope.ts';
export {
  classifyError,
  type ErrorClassification,
  JobError,
  PermanentError,
  parseRetryAfterMs,
  TransientError,
} from './core/errors.ts';
export type { JobLogger } from './core/logger.ts';
export { newTraceparent, traceIdOf, traceparentProblem } from './core/trace-context.ts';
export { DEFAULT_MAX_CONCURRENCY } from './runtime/batch.ts';
export { canonicalJson, payloadHash } from './runtime/canonical-json.ts';
export { WORKER_ENV, type WorkerConfig } from './runtime/config.ts';
export {
  type DeadLetterEvidence,
  deadLetterDeduplicationId,
  GROUP_PARKED_REASON,
} from './runtime/dead-letter.ts';
export {
  IdempotencyRecordError,
  IdempotencyStoreError,
  PayloadMismatchError,
  StepValueNotStoredError,
} from './runtime/idempotency/errors.ts';
export type {
  BeginOutcome,
  BeginRequest,
  GroupPark,
  GroupParkStore,
  IdempotencyGuard,
  Lease,
  LeaseWrite,
} from './runtime/idempotency/guard.ts';
export {
  type DecodedRecordKey,
  decodeDefaultJobKey,
  decodeGroupRecordKey,
  decodeRecordKey,
  defaultJobKey,
  deriveIdempotencyKey,
  groupRecordKey,
  jobRecordKey,
  stepRecordKey,
} from './runtime/idempotency/keys.ts';
export { type DynamoIdempotencyStoreOptions, IDEMPOTENCY_DEFAULTS } from './runtime/idempotency/options.ts';
export type { JobRecord, JobRecordStatus, StepRecord } from './runtime/idempotency/record.ts';
export { DynamoIdempotencyStore } from './runtime/idempotency/store.ts';
export {
  DEAD_LETTER_POLICIES,
  DEFAULT_JOB_TIMEOUT_SECONDS,
  type DeadLetterPolicy,
  defineJob,
  type EnqueueOptions,
  type JobContext,
  type JobDefinition,
  type JobIdempotencyOptions,
  type JobLineage,
  type JobSpec,
  type LeaseExpiredPolicy,
  type StepValue,
} from './runtime/job.ts';
export { lineageOf } from './runtime/lineage.ts';
export { DEADLINE_RELEASE_SECONDS } from './runtime/record/index.ts';
export type { SqsSender } from './runtime/sqs-port.ts';
export {
  createWorker,
  DEFAULT_DEADLINE_MARGIN_MS,
  type WorkerHandler,
  type WorkerOptions,
} from './runtime/worker.ts';
export {
  ChildEnqueueError,
  ChildRejectedError,
  GroupParkedError,
  JobDataInvalidError,
  JobIdentityError,
  JobTimeoutError,
  LeaseExpiredError,
  UnknownJobTypeError,
  WorkerConfigError,
} from './runtime/worker-errors.ts';
