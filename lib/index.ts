// Public API of sqs-jobs: export list only. Biome keeps it sorted by module path, so group
// comments would drift: lib/client = producer client, lib/runtime = contracts and worker.
export {
  type BatchEntry,
  type BatchResult,
  batchEntry,
  DEFAULT_PAYLOAD_WARN_BYTES,
  type FailedEntry,
  JobClient,
  type JobClientOptions,
  type SendableJob,
  type SendOptions,
  type SendResult,
  type SentEntry,
  type SqsBatchSender,
} from './client/job-client.ts';
export { type EntryProblem, JobClientError } from './client/job-client-error.ts';
export {
  messageSizeBytes,
  SQS_MAX_BATCH_ENTRIES,
  SQS_MAX_MESSAGE_BYTES,
} from './client/message-size.ts';
export {
  isFifoQueueUrl,
  QUEUE_URL_ENV_PREFIX,
  queueUrlEnvName,
  queueUrlsFromEnv,
} from './client/queue-urls.ts';
export { type ClientRetryOptions, DEFAULT_CLIENT_RETRY } from './client/retry.ts';
export { AlarmTopic, type AlarmTopicProps } from './constructs/alarm-topic.ts';
export { JobsConfigError, JobsConstructError } from './constructs/errors.ts';
export {
  IDEMPOTENCY_TABLE_SCHEMA,
  IdempotencyTable,
  type IdempotencyTableProps,
} from './constructs/idempotency-table.ts';
export {
  enqueueUrlVariable,
  IDEMPOTENCY_TABLE_ACTIONS,
  JOB_QUEUE_DEFAULTS,
  JOBS_METRICS_NAMESPACE,
  JobQueue,
  type JobQueueAlarms,
  type JobQueueProps,
} from './constructs/job-queue.ts';
export { JobsDashboard, type JobsDashboardProps } from './constructs/jobs-dashboard.ts';
export { createOpsSqsClient, type OpsClientInput, opsClientConfig } from './ops/client.ts';
export {
  type DeadLetterEvidenceAttributes,
  type DeadLetterMessage,
  EVIDENCE_ATTRIBUTE_NAMES,
  type JobIdentity,
  NO_EVIDENCE_REASON,
  toDeadLetterMessage,
} from './ops/dead-letter-message.ts';
export {
  type DeadLetterRead,
  DeadLetterReader,
  type DeadLetterReaderOptions,
  DLQ_READER_DEFAULTS,
  type ReadDeadLettersOptions,
  type ReleaseFailure,
  type ReleaseReport,
  readDeadLetters,
} from './ops/dlq-reader.ts';
export {
  InvalidQueueUrlError,
  OpsError,
  type OpsErrorCode,
  QueueMismatchError,
  QueueNotFoundError,
  SqsRequestError,
  SqsUnreachableError,
} from './ops/errors.ts';
export { compileFilter, type DeadLetterFilter, describeFilter, matchesPattern } from './ops/filters.ts';
export { describeQueue, type OpsSqs, type QueueInfo, validateQueueUrl } from './ops/queue.ts';
export {
  type CameBackItem,
  type FailedItem,
  type MovedItem,
  type RedriveItem,
  type RedriveOptions,
  type RedrivePlan,
  type RedriveResult,
  redriveDeadLetters,
  redriveDeduplicationId,
  type SkippedItem,
  type VerifyRedriveOptions,
  type VerifyRedriveResult,
  verifyRedrive,
} from './ops/redrive.ts';
export {
  DEFAULT_GROUP_BY,
  type DeadLetterGroup,
  type DeadLetterSummary,
  type GroupKey,
  summarizeDeadLetters,
} from './ops/summary.ts';
export {
  backoffDelaySeconds,
  DEFAULT_RETRY_POLICY,
  MAX_VISIBILITY_TIMEOUT_SECONDS,
  type RetryPolicy,
  resolveRetryPolicy,
} from './runtime/backoff.ts';
export { DEFAULT_MAX_CONCURRENCY } from './runtime/batch.ts';
export { canonicalJson, payloadHash } from './runtime/canonical-json.ts';
export { WORKER_ENV, type WorkerConfig } from './runtime/config.ts';
export { type DeadLetterEvidence, deadLetterDeduplicationId } from './runtime/dead-letter.ts';
export {
  type CreateEnvelopeInput,
  childJobId,
  createEnvelope,
  DATA_CONTENT_TYPE,
  deduplicationIdOf,
  EnvelopeError,
  type JobEnvelope,
  parseEnvelope,
  SPEC_VERSION,
} from './runtime/envelope.ts';
export {
  classifyError,
  type ErrorClassification,
  JobError,
  PermanentError,
  parseRetryAfterMs,
  TransientError,
} from './runtime/errors.ts';
export {
  IdempotencyStoreError,
  PayloadMismatchError,
  StepValueNotStoredError,
} from './runtime/idempotency/errors.ts';
export type {
  BeginOutcome,
  BeginRequest,
  IdempotencyGuard,
  Lease,
  LeaseWrite,
} from './runtime/idempotency/guard.ts';
export { deriveIdempotencyKey, jobRecordKey, stepRecordKey } from './runtime/idempotency/keys.ts';
export type { JobRecord, JobRecordStatus, StepRecord } from './runtime/idempotency/record.ts';
export {
  DynamoIdempotencyStore,
  type DynamoIdempotencyStoreOptions,
  IDEMPOTENCY_DEFAULTS,
} from './runtime/idempotency/store.ts';
export {
  DEFAULT_JOB_TIMEOUT_SECONDS,
  defineJob,
  type EnqueueOptions,
  type JobContext,
  type JobDefinition,
  type JobIdempotencyOptions,
  type JobLogger,
  type JobSpec,
  type LeaseExpiredPolicy,
} from './runtime/job.ts';
export { DEADLINE_RELEASE_SECONDS } from './runtime/record.ts';
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
  JobDataInvalidError,
  JobTimeoutError,
  LeaseExpiredError,
  UnknownJobTypeError,
  WorkerConfigError,
} from './runtime/worker-errors.ts';
