/**
 * What a redrive reports about each message it looked at: the DLQ message as an item, and the
 * item once moved, failed, sent but not deleted, or left in the DLQ on purpose.
 */
import type { DeadLetterMessage } from '../dead-letter-message.ts';

/** A message the redrive looked at. */
export interface RedriveItem {
  /** Id of the message in the DLQ. */
  readonly messageId: string;
  /** Envelope `id` of the job in the body, when it has one. */
  readonly jobId: string | undefined;
  readonly jobType: string;
  readonly reason: string;
  readonly errorName: string;
  /** FIFO: the message group, kept on the target. */
  readonly messageGroupId: string | undefined;
  /** See {@link DeadLetterMessage.jobKey}. */
  readonly jobKey: string;
}

/** A message sent to the target. */
export interface MovedItem extends RedriveItem {
  /** Its new id on the target queue (SendMessageBatch `Successful[].MessageId`). */
  readonly targetMessageId: string;
  /** FIFO: the `MessageDeduplicationId` it was sent with. */
  readonly deduplicationId: string | undefined;
  /**
   * Epoch ms on SQS's clock (not this machine's) before which the copy cannot have been sent: the
   * latest `SentTimestamp` of the DLQ messages this redrive had received when it sent the copy
   * (each entered the DLQ before it was received, and it was received before the send). Undefined
   * when none of them had a `SentTimestamp`. Used by `returnMatcher` (returns.ts) for returns without
   * identity.
   */
  readonly sentAfterMs: number | undefined;
}

/** A selected message that was not sent (it is still in the DLQ), or sent but not deleted. */
export interface FailedItem extends RedriveItem {
  /** SQS error code (`Failed[].Code`), an `OpsError` code, or `GroupBlocked`. */
  readonly code: string;
  readonly message: string;
  /** From SQS's per-entry result, when there is one. */
  readonly senderFault: boolean | undefined;
}

/** A message sent to the target whose delete from the DLQ failed: it is in both queues. */
export interface NotDeletedItem extends MovedItem, FailedItem {}

/** A message left in the DLQ on purpose. */
export interface SkippedItem extends RedriveItem {
  /**
   * `not-selected`: the filter does not match it (or `max` was reached); `group-blocked` (FIFO):
   * an earlier message of its group stays in the DLQ, so moving this one would run the group out
   * of order; `came-back`: a job this run already moved failed again and is back in the DLQ
   * (moving it again would loop).
   */
  readonly why: 'not-selected' | 'group-blocked' | 'came-back';
  /**
   * `group-blocked` only: whether the filter selects it, so that it would have moved but for its
   * group's order (the redrive reports it, and exits 1).
   */
  readonly matchesFilter?: boolean;
}

/** The item of a DLQ message. */
export function itemOf(message: DeadLetterMessage): RedriveItem {
  return {
    messageId: message.messageId,
    jobId: message.job?.id,
    jobType: message.jobType,
    reason: message.reason,
    errorName: message.errorName,
    messageGroupId: message.messageGroupId,
    jobKey: message.jobKey,
  };
}
