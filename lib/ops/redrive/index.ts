/**
 * Filtered redrive of dead letters, one job per file: selected DLQ messages are sent, body
 * unchanged, to a target queue and deleted from the DLQ only once the send succeeded; everything
 * else is made visible again (run.ts reads and selects, mover.ts sends and deletes, with a FIFO
 * deduplication id per DLQ message). Then {@link verifyRedrive} (verify.ts) tells which redriven
 * jobs came back to the DLQ (returns.ts) and finds the parked jobs a FIFO redrive left behind
 * (stranded-parks.ts); {@link redriveScope} (scope.ts) words what a confirmed run will move.
 *
 * On real AWS a plain full redrive can also be done with `StartMessageMoveTask` (console: "Start
 * DLQ redrive"); this module exists for filtered redrives and for emulators, which lack that
 * action. Redriven messages get new message ids (sqs-configure-dead-letter-queue-redrive).
 *
 * Returns (a redriven job back in the DLQ) are recognised by message identity and SQS's own
 * timestamps, never by this machine's clock: see {@link returnMatcher}.
 */
export type { FailedItem, MovedItem, NotDeletedItem, RedriveItem, SkippedItem } from './items.ts';
export { redriveDeduplicationId } from './mover.ts';
export { type ReturnMatch, type ReturnOf, returnMatcher } from './returns.ts';
export {
  type RedriveOptions,
  type RedrivePlan,
  type RedriveProgress,
  type RedriveResult,
  redriveDeadLetters,
} from './run.ts';
export { type RedriveScope, redriveScope } from './scope.ts';
export {
  type CameBackItem,
  type StrandedParked,
  type UnverifiedItem,
  type VerifyRedriveOptions,
  type VerifyRedriveResult,
  verifyRedrive,
} from './verify.ts';
