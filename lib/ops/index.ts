/**
 * `sqs-jobs/ops`: dead-letter queue operations for operators and tools (the `sqs-jobs` CLI,
 * the console): read a DLQ without losing messages, summarize it by cause, redrive (all or
 * filtered, FIFO-safe) and verify what came back; walk a job's chain (`walkJobChain`). See
 * docs/operations.md.
 */
export { createOpsSqsClient, type OpsClientInput, opsClientConfig } from './client.ts';
export {
  type DeadLetterEvidenceAttributes,
  type DeadLetterMessage,
  EVIDENCE_ATTRIBUTE_NAMES,
  type JobIdentity,
  NO_EVIDENCE_REASON,
  toDeadLetterMessage,
} from './dead-letter-message.ts';
export {
  type DeadLetterRead,
  DeadLetterReader,
  type DeadLetterReaderOptions,
  DLQ_READER_DEFAULTS,
  type ReadDeadLettersOptions,
  type ReleaseFailure,
  type ReleaseReport,
  readDeadLetters,
} from './dlq-reader.ts';
export {
  InvalidQueueUrlError,
  OpsError,
  type OpsErrorCode,
  QueueMismatchError,
  QueueNotFoundError,
  SqsRequestError,
  SqsUnreachableError,
} from './errors.ts';
export { compileFilter, type DeadLetterFilter, describeFilter, matchesPattern } from './filters.ts';
export {
  type ChainDeadLetter,
  type ChainDeadLetterQueue,
  type ChainJob,
  type ChainJobState,
  describeJobRef,
  type JobChain,
  type JobName,
  jobOfRecordKey,
  type ReadJobItem,
  type WalkJobChainOptions,
  walkJobChain,
} from './job-chain.ts';
export { jobChainJson, renderJobChain } from './job-chain-format.ts';
export {
  CloudWatchUnavailableError,
  cloudWatchOldestAges,
  loadCloudWatchReader,
  type MetricDataReader,
  type MetricDataRequest,
  type MetricDataResponse,
  OLDEST_AGE_METRIC,
  type OldestMessageAge,
  type OldestMessageAgeSource,
  unknownOldestAges,
} from './oldest-age.ts';
export { describeQueue, type OpsSqs, type QueueInfo, validateQueueUrl } from './queue.ts';
export {
  type CameBackItem,
  type FailedItem,
  type MovedItem,
  type NotDeletedItem,
  type RedriveItem,
  type RedriveOptions,
  type RedrivePlan,
  type RedriveResult,
  type ReturnMatch,
  type ReturnOf,
  redriveDeadLetters,
  redriveDeduplicationId,
  returnMatcher,
  type SkippedItem,
  type StrandedParked,
  type VerifyRedriveOptions,
  type VerifyRedriveResult,
  verifyRedrive,
} from './redrive.ts';
export {
  type DeadLetterQueueStats,
  listQueueUrls,
  parseQueueArn,
  type QueueArn,
  type QueueStats,
  type QueueStatsReport,
  queueUrlOfArn,
  type ReadQueueStatsOptions,
  readQueueStats,
} from './stats.ts';
export { formatAge, renderStats, statsJson } from './stats-format.ts';
export {
  DEFAULT_GROUP_BY,
  type DeadLetterGroup,
  type DeadLetterSummary,
  type GroupKey,
  summarizeDeadLetters,
} from './summary.ts';
