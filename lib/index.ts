// Worker (lib/runtime/worker.ts and its modules)
export { DEFAULT_MAX_CONCURRENCY } from './runtime/batch.ts';
export { canonicalJson, payloadHash } from './runtime/canonical-json.ts';
export { WORKER_ENV, type WorkerConfig } from './runtime/config.ts';
export { type DeadLetterEvidence, deadLetterDeduplicationId } from './runtime/dead-letter.ts';
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
