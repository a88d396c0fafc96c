/**
 * Returns: redriven messages found in the DLQ again, recognised by message identity and SQS's own
 * timestamps, never by this machine's clock.
 */
import type { DeadLetterMessage } from '../dead-letter-message.ts';
import type { MovedItem } from './items.ts';

/**
 * How a DLQ message was recognised as a redriven message come back:
 * - `source-message-id`: the worker dead-lettered the redriven copy; its evidence names the copy's
 *   target message id (`SourceMessageId`, docs/contracts.md "DLQ evidence").
 * - `message-id`: SQS's redrive policy moved the copy itself (receive count above
 *   `maxReceiveCount`: a crash, a timeout), which keeps its message id.
 * - `job-key`: no identity to go by (no `SourceMessageId`, another message id: a move that gave a
 *   new id, a body that left no room for evidence): the same job (envelope `source` + `id`, or the
 *   same body) that entered the DLQ no earlier than the copy was sent, both on SQS's clock
 *   (`SentTimestamp` against {@link MovedItem.sentAfterMs}).
 */
export type ReturnMatch = 'source-message-id' | 'message-id' | 'job-key';

/** A DLQ message recognised as a redriven message come back. */
export interface ReturnOf {
  /** The redriven message it is a return of. */
  readonly item: MovedItem;
  readonly matchedBy: ReturnMatch;
}

/**
 * Recognises the redriven messages come back to the DLQ, by identity first and by SQS's own
 * timestamps otherwise ({@link ReturnMatch}); this machine's clock plays no part, so an operator
 * clock that is fast or slow changes nothing.
 *
 * A message whose evidence names another source message (`SourceMessageId` that is no redriven
 * copy) is not a return, even of the same job: it is another delivery of that job (a producer
 * sent it again), dead-lettered on its own. A message the redrive itself read is no return either;
 * callers leave those out (`RedriveResult.seenMessageIds`).
 *
 * Sources: SendMessageBatch API reference (`Successful[].MessageId`, the copy's id);
 * sqs-configure-dead-letter-queue-redrive (a message moved by the redrive policy into a FIFO DLQ
 * gets "the original message's ID" as its deduplication id, and it is a DLQ redrive task, not that
 * move, that gives messages new ids; the emulator keeps the id too); setting-up-dead-letter-queue-retention
 * (on the move a standard queue keeps the enqueue timestamp, a FIFO queue resets it: either way
 * not before the copy was sent). Should a move ever give a new id, `job-key` still finds it.
 */
export function returnMatcher(
  redriven: readonly MovedItem[],
): (message: DeadLetterMessage) => ReturnOf | undefined {
  const byTargetId = new Map<string, MovedItem>();
  const byKey = new Map<string, MovedItem[]>();
  for (const item of redriven) {
    if (item.targetMessageId !== undefined && item.targetMessageId !== '')
      byTargetId.set(item.targetMessageId, item);
    const list = byKey.get(item.jobKey) ?? [];
    list.push(item);
    byKey.set(item.jobKey, list);
  }
  return (message) => {
    const moved = byTargetId.get(message.messageId);
    if (moved !== undefined) return { item: moved, matchedBy: 'message-id' };
    const source = message.evidence.sourceMessageId;
    if (source !== undefined) {
      const copy = byTargetId.get(source);
      return copy === undefined ? undefined : { item: copy, matchedBy: 'source-message-id' };
    }
    const sentAtMs = message.sentAtMs;
    const item = byKey
      .get(message.jobKey)
      ?.find((i) => sentAtMs === undefined || i.sentAfterMs === undefined || sentAtMs >= i.sentAfterMs);
    return item === undefined ? undefined : { item, matchedBy: 'job-key' };
  };
}
