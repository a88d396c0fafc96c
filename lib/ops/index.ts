/**
 * `sqs-jobs/ops`: dead-letter queue operations for operators and tools (the `sqs-jobs` CLI,
 * the console): read a DLQ without losing messages, summarize it by cause, redrive (all or
 * filtered, FIFO-safe) and verify what came back; queue numbers; walk a job's chain
 * (`walkJobChain`). See docs/operations.md, "From code".
 *
 * The public API: what README.md, docs/ and examples/ use, plus the types of those signatures.
 * test/unit/entry-points.test.ts pins this list; adding a name is a decision made in review.
 */
export type {
  DeadLetterEvidenceAttributes,
  DeadLetterMessage,
  JobIdentity,
} from './dead-letter-message.ts';
export {
  type DeadLetterRead,
  DeadLetterReader,
  type DeadLetterReaderOptions,
  type ReadDeadLettersOptions,
  type ReleaseFailure,
  type ReleaseReport,
  readDeadLetters,
} from './dlq-reader.ts';
export { OpsError, type OpsErrorCode } from './errors.ts';
export { compileFilter, type DeadLetterFilter } from './filters.ts';
export {
  type ChainDeadLetter,
  type ChainDeadLetterQueue,
  type ChainJob,
  type ChainJobState,
  type JobChain,
  type JobName,
  type ReadJobItem,
  type WalkJobChainOptions,
  walkJobChain,
} from './job-chain.ts';
export { renderJobChain } from './job-chain-format.ts';
export {
  cloudWatchOldestAges,
  type MetricDataReader,
  type MetricDataRequest,
  type MetricDataResponse,
  type OldestMessageAge,
  type OldestMessageAgeSource,
} from './oldest-age.ts';
export type { OpsSqs, QueueInfo } from './queue.ts';
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
  redriveDeadLetters,
  redriveDeduplicationId,
  type SkippedItem,
  type StrandedParked,
  type VerifyRedriveOptions,
  type VerifyRedriveResult,
  verifyRedrive,
} from './redrive/index.ts';
export {
  type DeadLetterQueueStats,
  listQueueUrls,
  type QueueStats,
  type QueueStatsReport,
  type ReadQueueStatsOptions,
  readQueueStats,
} from './stats.ts';
export {
  type DeadLetterGroup,
  type DeadLetterSummary,
  type GroupKey,
  summarizeDeadLetters,
} from './summary.ts';
