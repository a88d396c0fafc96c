/**
 * Reading the dead-letter queues at the end of a run, for the report (the evidence of every
 * dead-lettered job), so that they are left as an operator would find them: every dead letter
 * still there and visible, `sqs-jobs dlq list` and the console see them all.
 *
 * - **Standard DLQ**: read as `sqs-jobs dlq list` reads it ({@link readDeadLetters}): each message
 *   is held (received with a visibility timeout) so that it is read once, and every message is made
 *   visible again at the end (ChangeMessageVisibility 0), also when a receive fails. Nothing
 *   changes but each message's `ApproximateReceiveCount` (one more).
 * - **FIFO DLQ**: SQS hands out nothing more of a message group while one of its messages is in
 *   flight ("FIFO queue delivery logic": a receive may return up to 10 messages of one group, the
 *   emulator returns one; later ones wait until those are deleted or visible again), so a group's
 *   later messages cannot be read while its first one is held. {@link readFifoQueueThrough} reads
 *   a group through by rotating it: it receives a message, sends a copy to the back of the same
 *   queue (same body, same `MessageGroupId`, the same message attributes: the evidence), and only
 *   then deletes the original; when the first copy of a group comes back, every message of that
 *   group has been read. The copies stay held until the end and are then made visible again.
 *   Each group keeps its order (its messages are copied in the order received, behind its last
 *   one), and a failure between the send and the delete leaves a duplicate, never a loss.
 *
 *   What changes for each message of a FIFO DLQ: its `MessageId` (the copy's, the report keeps the
 *   original's as `messageId` and the copy's as `copyMessageId`), its `SentTimestamp` (the copy's
 *   send: "in the DLQ since" becomes the time of the report's read; the evidence's
 *   `FirstFailureAt` / `LastFailureAt` are unchanged), its `SequenceNumber`, and its receive
 *   count (1: the read). Nothing can mark a copy as one: SQS allows at most 10 message
 *   attributes, and the evidence uses all 10 ("DLQ evidence", docs/contracts.md), so the copies
 *   are recognised by the `MessageId`s the sends returned. The copy's `MessageDeduplicationId` is
 *   derived from the original's `MessageId` ({@link rotationDeduplicationId}), so a send the SDK
 *   repeats after a lost response is dropped by SQS as a duplicate within its 5-minute window.
 *
 * Why not delete what was read, as this module did before: the FIFO DLQ then held nothing after
 * `npm start`, and `dlq list` or the console found no dead letter to look at or redrive. Why not
 * a side queue: a process that dies between the moves would leave messages outside the DLQ.
 */

import { createHash } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  type DeleteMessageBatchCommandOutput,
  type MessageAttributeValue,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
} from '@aws-sdk/client-sqs';
import type { DeadLetterMessage } from '../../ops/dead-letter-message.ts';
import {
  DeadLetterReader,
  type DeadLetterReaderOptions,
  type ReleaseReport,
  readDeadLetters,
} from '../../ops/dlq-reader.ts';
import { callSqs, type OpsSqs } from '../../ops/queue.ts';

/** A message read from a DLQ, reduced to what the report needs. */
export interface CollectedDeadLetter {
  /** Logical name of the source queue. */
  readonly queue: string;
  /** The message's id when it was read. */
  readonly messageId: string;
  /** FIFO DLQs: the id of the copy that replaced it in the DLQ (see {@link readFifoQueueThrough}). */
  readonly copyMessageId?: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** What {@link collectDeadLetters} read, and what the read changed or could not do. */
export interface DeadLetterCollection {
  readonly deadLetters: readonly CollectedDeadLetter[];
  /** One line each, for the report's notes: the FIFO rotation, and any failure of it. */
  readonly notes: readonly string[];
}

/** Reader options of a collection (tests shorten the waits). */
export type CollectOptions = Pick<
  DeadLetterReaderOptions,
  'holdSeconds' | 'waitTimeSeconds' | 'emptyReceivesToStop'
>;

function stringAttributes(
  attributes: Readonly<Record<string, MessageAttributeValue>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value.StringValue !== undefined) out[name] = value.StringValue;
  }
  return out;
}

/**
 * Reads every message of the DLQs and leaves each of them in its DLQ, visible (see the module
 * doc): standard DLQs with a hold released at the end, FIFO DLQs read through by rotation.
 *
 * @param expected messages per queue (its approximate counts before the read): a queue is read
 *   until that many were seen (a FIFO queue: and every group it started is read through), or until
 *   receives bring nothing new. A queue expected to hold 0 is not read.
 * @throws {OpsError} when a receive fails (what was held is released first).
 */
export async function collectDeadLetters(
  sqs: OpsSqs,
  dlqUrls: Readonly<Record<string, string>>,
  expected: Readonly<Record<string, number>> = {},
  options: CollectOptions = {},
): Promise<DeadLetterCollection> {
  const deadLetters: CollectedDeadLetter[] = [];
  const notes: string[] = [];
  for (const [queue, url] of Object.entries(dlqUrls)) {
    const count = expected[queue];
    if (count === 0) continue;
    let messages: readonly DeadLetterMessage[];
    let copies: ReadonlyMap<string, string> = new Map();
    let release: ReleaseReport;
    if (url.endsWith('.fifo')) {
      const read = await readFifoQueueThrough({ ...options, sqs, queueUrl: url, expected: count });
      ({ messages, copies, release } = read);
      if (copies.size > 0) {
        notes.push(
          `${queue} DLQ (FIFO): read through by rotation: each of its ${copies.size} dead letters was copied to the back of its message group ` +
            '(same body, group and evidence attributes; new MessageId and SentTimestamp) and the original deleted, so all of them are still there, visible, in their order',
        );
      }
      for (const problem of read.problems) notes.push(`${queue} DLQ (FIFO): ${problem}`);
    } else {
      const read = await readDeadLetters({
        ...options,
        sqs,
        queueUrl: url,
        ...(count === undefined ? {} : { maxMessages: count }),
      });
      ({ messages, release } = read);
    }
    for (const failure of release.failed) {
      notes.push(
        `${queue} DLQ: message ${failure.messageId} could not be made visible again (${failure.code}); it is by ${failure.visibleBy}`,
      );
    }
    for (const m of messages) {
      const copy = copies.get(m.messageId);
      deadLetters.push({
        queue,
        messageId: m.messageId,
        ...(copy === undefined ? {} : { copyMessageId: copy }),
        body: m.body,
        attributes: stringAttributes(m.messageAttributes),
      });
    }
  }
  return { deadLetters, notes };
}

/** `MessageDeduplicationId` of the copy of the FIFO DLQ message `messageId` (SHA-256 hex, 64 characters). */
export function rotationDeduplicationId(messageId: string): string {
  return createHash('sha256').update(`dlq-read-through\n${messageId}`).digest('hex');
}

/** Options of {@link readFifoQueueThrough}. */
export interface FifoReadThroughOptions extends DeadLetterReaderOptions {
  /**
   * Messages the queue is expected to hold: the read ends once that many were read and every
   * group it started is read through, without waiting for empty receives. @default unknown
   */
  readonly expected?: number;
}

/** What {@link readFifoQueueThrough} read and left. */
export interface FifoReadThrough {
  /** Every message read (the originals), in the order received: per group, the group's order. */
  readonly messages: readonly DeadLetterMessage[];
  /** Original `MessageId` → the `MessageId` of its copy, now in the queue in its place. */
  readonly copies: ReadonlyMap<string, string>;
  /** Groups read through: their first copy came back. */
  readonly groupsReadThrough: number;
  /**
   * What could not be done, one sentence each: a copy that could not be sent (the message and the
   * rest of its group stay where they were, not read: the group's copies made before it are now
   * ahead of it), a delete that failed after the copy was sent (that message is in the queue
   * twice; the group's later messages are not read).
   */
  readonly problems: readonly string[];
  /** The release of the copies held at the end (and of any message left held by a problem). */
  readonly release: ReleaseReport;
}

/** A message attribute as SendMessage takes it (the list forms are reserved by SQS). */
function sendableAttributes(
  attributes: Readonly<Record<string, MessageAttributeValue>>,
): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value.DataType === undefined) continue;
    if (value.StringValue !== undefined)
      out[name] = { DataType: value.DataType, StringValue: value.StringValue };
    else if (value.BinaryValue !== undefined)
      out[name] = { DataType: value.DataType, BinaryValue: value.BinaryValue };
  }
  return out;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Reads every message of a FIFO queue and leaves them all there, visible, each group in its
 * order, by rotating each group once (see the module doc). Messages in flight when it starts
 * (held by someone else) are not read. Meant for a queue nothing else reads or writes meanwhile
 * (the report reads once the queues are drained): a message sent to a group while it rotates
 * lands between the group's copies and the rest, and is read only if it comes before the first copy.
 *
 * @throws {OpsError} when a receive fails (what is held is released first).
 */
export async function readFifoQueueThrough(options: FifoReadThroughOptions): Promise<FifoReadThrough> {
  const { sqs, queueUrl, expected } = options;
  const reader = new DeadLetterReader(options);
  const messages: DeadLetterMessage[] = [];
  const copies = new Map<string, string>();
  const copyIds = new Set<string>();
  const copiedPerGroup = new Map<string, number>();
  /** Groups rotating: a copy was sent, the first has not come back yet. */
  const open = new Set<string>();
  /** Groups whose rotation stopped on a failure: their messages are only held, then released. */
  const stopped = new Set<string>();
  let readThrough = 0;
  const problems: string[] = [];
  let failure: unknown;
  try {
    while (!reader.exhausted) {
      if (expected !== undefined && messages.length >= expected && open.size === 0) break;
      for (const message of await reader.receive()) {
        const group = message.messageGroupId ?? '';
        if (copyIds.has(message.messageId)) {
          // The group's first copy: every message of the group was read. It stays held (the
          // group locked) until the end, so the rest of the group is not handed out again.
          if (open.delete(group)) readThrough += 1;
          continue;
        }
        messages.push(message);
        if (stopped.has(group)) continue;
        let copyId: string | undefined;
        try {
          const out = await callSqs<SendMessageBatchCommandOutput>(
            sqs,
            new SendMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: [
                {
                  Id: 'copy',
                  MessageBody: message.body,
                  MessageGroupId: group,
                  MessageDeduplicationId: rotationDeduplicationId(message.messageId),
                  MessageAttributes: sendableAttributes(message.messageAttributes),
                },
              ],
            }),
            queueUrl,
          );
          copyId = out.Successful?.[0]?.MessageId;
          if (copyId === undefined) {
            const failed = out.Failed?.[0];
            throw new Error(
              failed ? `${failed.Code}: ${failed.Message ?? ''}` : 'no MessageId in the answer',
            );
          }
        } catch (error) {
          stopped.add(group);
          open.delete(group);
          problems.push(
            `group ${group}: the copy of message ${message.messageId} could not be sent (${errorText(error)}); ` +
              "it and the group's later messages stay where they were" +
              ((copiedPerGroup.get(group) ?? 0) > 0
                ? ", behind the copies of the group's messages read before it (the group's order is rotated)"
                : ''),
          );
          continue;
        }
        copiedPerGroup.set(group, (copiedPerGroup.get(group) ?? 0) + 1);
        copies.set(message.messageId, copyId);
        copyIds.add(copyId);
        open.add(group);
        try {
          const out = await callSqs<DeleteMessageBatchCommandOutput>(
            sqs,
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: [{ Id: 'original', ReceiptHandle: reader.receiptHandleOf(message.messageId) ?? '' }],
            }),
            queueUrl,
          );
          const failed = out.Failed?.[0];
          if (failed !== undefined || (out.Successful ?? []).length === 0) {
            throw new Error(failed ? `${failed.Code}: ${failed.Message ?? ''}` : 'no result for the entry');
          }
          reader.forget([message.messageId]);
        } catch (error) {
          // The original stays held (the group locked, so its copy will not come back): it is
          // released at the end, ahead of its copy.
          stopped.add(group);
          open.delete(group);
          problems.push(
            `group ${group}: message ${message.messageId} could not be deleted after its copy ${copyId} was sent (${errorText(error)}); ` +
              "it is in the queue twice, and the group's later messages were not read (the held original locks the group)",
          );
        }
      }
    }
  } catch (error) {
    failure = error;
  }
  const release = await reader.releaseAll();
  if (failure !== undefined) throw failure;
  for (const group of open) {
    problems.push(
      `group ${group}: its first copy did not come back before the read ended; its messages are all there, ` +
        'but the copies may be ahead of messages not read yet',
    );
  }
  return { messages, copies, groupsReadThrough: readThrough, problems, release };
}
