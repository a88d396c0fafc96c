/**
 * `sqs-jobs/client`: what a producer service needs to send jobs. `JobClient`, envelope
 * building and validation, queue URL and size rules. Its import graph reaches only
 * `@aws-sdk/client-sqs` (and `@standard-schema/spec` types): plain JavaScript on Node 20 works.
 */

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
} from '../core/envelope.ts';
export { JobError, PermanentError, TransientError } from '../core/errors.ts';
export {
  messageSizeBytes,
  SQS_MAX_BATCH_ENTRIES,
  SQS_MAX_MESSAGE_BYTES,
} from '../core/message-size.ts';
export {
  isFifoQueueUrl,
  QUEUE_URL_ENV_PREFIX,
  queueUrlEnvName,
  queueUrlsFromEnv,
} from '../core/queue-urls.ts';
export {
  newTraceparent,
  traceIdOf,
  traceparentProblem,
} from '../core/trace-context.ts';
export type { CheckedEnvelope, SendEnvelopeOptions } from './job-client.ts';
export {
  type BatchEntry,
  type BatchResult,
  batchEntry,
  DEFAULT_PAYLOAD_WARN_BYTES,
  type FailedEntry,
  JobClient,
  type JobClientOptions,
  type ParentLink,
  type SendableJob,
  type SendOptions,
  type SendResult,
  type SentEntry,
  type SqsBatchSender,
} from './job-client.ts';
export { type EntryProblem, JobClientError } from './job-client-error.ts';
export { type ClientRetryOptions, DEFAULT_CLIENT_RETRY } from './retry.ts';
