/**
 * The moving half of a redrive: selected DLQ messages are sent, body unchanged (with the original
 * message's attributes kept beside the evidence, `originalAttributesOf`), to the target in
 * batches and deleted from the DLQ only once their send succeeded; on a FIFO target one message
 * per group per request, so a failed send never leaves a later message of its group moved ahead.
 *
 * Sources: SendMessageBatch API reference (at most 10 entries and 1 MiB per request; "for a FIFO
 * queue, multiple messages within a single batch are enqueued in the order they are sent"; a 200
 * response can carry `Failed` entries, so each entry is checked); DeleteMessageBatch API reference
 * (at most 10 entries, per-entry results); SendMessage API reference, `MessageDeduplicationId`
 * (up to 128 characters; a message sent with an id already used within the 5-minute deduplication
 * interval is accepted but not delivered).
 */
import { createHash } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  type DeleteMessageBatchCommandOutput,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { bodyToSendOn } from '../../core/characters.ts';
import { chunkByCountAndBytes } from '../../core/chunk.ts';
import { isValidMessageGroupId } from '../../core/message-parameters.ts';
import { messageSizeBytes, SQS_MAX_BATCH_ENTRIES, SQS_MAX_MESSAGE_BYTES } from '../../core/message-size.ts';
import { type DeadLetterMessage, originalAttributesOf } from '../dead-letter-message.ts';
import type { DeadLetterReader } from '../dlq-reader.ts';
import type { OpsError } from '../errors.ts';
import { callSqs, type OpsSqs, type QueueInfo } from '../queue.ts';
import { type FailedItem, itemOf, type MovedItem, type NotDeletedItem } from './items.ts';

/**
 * FIFO `MessageDeduplicationId` of a redriven message: SHA-256 hex (64 characters) of the DLQ
 * messageId. Never the job's original dedup id, which a FIFO queue remembers for 5 minutes
 * even after the message was deleted and would silently drop. Deterministic, so a redrive
 * re-run within 5 minutes after a send whose DLQ delete failed is not delivered twice; and new
 * for every dead-lettering, because each one gives the DLQ message a new id.
 */
export function redriveDeduplicationId(dlqMessageId: string): string {
  return createHash('sha256').update(`redrive\n${dlqMessageId}`).digest('hex');
}

/**
 * The fair-queue tenant of a message redriven to a standard queue: its `MessageGroupId` in the
 * DLQ, else its envelope's `partitionkey` (what `JobClient` sent as the group), so a redriven job
 * keeps its tenant and a tenant's redrive does not crowd out the others (Amazon SQS fair queues,
 * sqs-fair-queues). None when neither is a valid `MessageGroupId` (1-128 printable ASCII, no
 * space; SendMessage API reference): the message goes back as a plain standard message, as it
 * was sent.
 */
export function fairQueueGroup(message: DeadLetterMessage): { MessageGroupId?: string } {
  const group = message.messageGroupId ?? message.job?.partitionKey;
  return group !== undefined && isValidMessageGroupId(group) ? { MessageGroupId: group } : {};
}

/** Sends, deletes and keeps order for one run. */
export class Mover {
  readonly moved: MovedItem[] = [];
  readonly failed: FailedItem[] = [];
  readonly notDeleted: NotDeletedItem[] = [];

  readonly sqs: OpsSqs;
  readonly target: QueueInfo;
  readonly dlqUrl: string;
  readonly reader: DeadLetterReader;
  /** FIFO: groups that must not move further in this run, with why. */
  readonly blockedGroups: Map<string, string>;

  constructor(
    sqs: OpsSqs,
    target: QueueInfo,
    dlqUrl: string,
    reader: DeadLetterReader,
    blockedGroups: Map<string, string>,
  ) {
    this.sqs = sqs;
    this.target = target;
    this.dlqUrl = dlqUrl;
    this.reader = reader;
    this.blockedGroups = blockedGroups;
  }

  #fail(message: DeadLetterMessage, code: string, text: string, senderFault?: boolean): void {
    this.failed.push({ ...itemOf(message), code, message: text, senderFault });
    if (this.target.fifo && message.messageGroupId !== undefined) {
      this.blockedGroups.set(
        message.messageGroupId,
        `an earlier message of the group failed to send (${code})`,
      );
    }
  }

  /**
   * Moves `messages` (selected, in DLQ order). `sentAfterMs`: see {@link MovedItem.sentAfterMs}.
   */
  async move(messages: readonly DeadLetterMessage[], sentAfterMs: number | undefined): Promise<void> {
    if (!this.target.fifo) {
      for (const chunk of this.#chunks(messages)) await this.#sendChunk(chunk, sentAfterMs);
      return;
    }
    // FIFO: one message per group per request, requests in order, so that a failed send never
    // leaves a later message of its group moved ahead of it.
    const byGroup = new Map<string, DeadLetterMessage[]>();
    for (const message of messages) {
      if (message.messageGroupId === undefined) {
        this.#fail(message, 'NoMessageGroupId', 'the DLQ message has no MessageGroupId');
        continue;
      }
      const list = byGroup.get(message.messageGroupId) ?? [];
      list.push(message);
      byGroup.set(message.messageGroupId, list);
    }
    while (byGroup.size > 0) {
      const round: DeadLetterMessage[] = [];
      for (const [group, list] of byGroup) {
        const head = list.shift() as DeadLetterMessage;
        if (list.length === 0) byGroup.delete(group);
        const blocked = this.blockedGroups.get(group);
        if (blocked !== undefined) {
          this.failed.push({
            ...itemOf(head),
            code: 'GroupBlocked',
            message: `not sent: ${blocked}`,
            senderFault: undefined,
          });
          continue;
        }
        round.push(head);
      }
      for (const chunk of this.#chunks(round)) await this.#sendChunk(chunk, sentAfterMs);
    }
  }

  #chunks(messages: readonly DeadLetterMessage[]): DeadLetterMessage[][] {
    const size = (m: DeadLetterMessage) =>
      messageSizeBytes({ MessageBody: bodyToSendOn(m.body), MessageAttributes: originalAttributesOf(m) });
    return chunkByCountAndBytes(messages, size, {
      maxEntries: SQS_MAX_BATCH_ENTRIES,
      maxBytes: SQS_MAX_MESSAGE_BYTES,
    });
  }

  async #sendChunk(chunk: readonly DeadLetterMessage[], sentAfterMs: number | undefined): Promise<void> {
    const entries: SendMessageBatchRequestEntry[] = chunk.map((message, i) => ({
      Id: `m${i}`,
      // Unchanged when SQS takes it (every body SQS delivered does); a body it would refuse
      // (written by a tool that did not check) gets those characters as JSON escapes: same JSON value.
      MessageBody: bodyToSendOn(message.body),
      // The original message's own attributes kept in the DLQ (a raw job's identity attribute): without them it would not be the same message.
      MessageAttributes: originalAttributesOf(message),
      ...(this.target.fifo
        ? {
            MessageGroupId: message.messageGroupId,
            MessageDeduplicationId: redriveDeduplicationId(message.messageId),
          }
        : fairQueueGroup(message)),
    }));
    let out: SendMessageBatchCommandOutput;
    try {
      out = await callSqs<SendMessageBatchCommandOutput>(
        this.sqs,
        new SendMessageBatchCommand({ QueueUrl: this.target.url, Entries: entries }),
        this.target.url,
      );
    } catch (error) {
      const opsError = error as OpsError;
      for (const message of chunk) this.#fail(message, opsError.code ?? 'Error', opsError.message);
      return;
    }
    const successes = new Map((out.Successful ?? []).map((s) => [s.Id, s]));
    const failures = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
    const sent: MovedItem[] = [];
    chunk.forEach((message, i) => {
      const id = `m${i}`;
      const failure = failures.get(id);
      const success = successes.get(id);
      if (failure !== undefined || success === undefined) {
        this.#fail(
          message,
          failure?.Code ?? 'NoResult',
          failure?.Message ?? 'SendMessageBatch reported no result for this entry',
          failure?.SenderFault,
        );
        return;
      }
      sent.push({
        ...itemOf(message),
        targetMessageId: success.MessageId ?? '',
        deduplicationId: entries[i]?.MessageDeduplicationId,
        sentAfterMs,
      });
    });
    await this.#delete(sent);
  }

  async #delete(sent: readonly MovedItem[]): Promise<void> {
    if (sent.length === 0) return;
    const entries = sent.map((item, i) => ({
      Id: `d${i}`,
      ReceiptHandle: this.reader.receiptHandleOf(item.messageId) ?? '',
    }));
    let failures = new Map<string | undefined, { Code?: string; Message?: string; SenderFault?: boolean }>();
    let successes = new Set<string | undefined>();
    try {
      const out = await callSqs<DeleteMessageBatchCommandOutput>(
        this.sqs,
        new DeleteMessageBatchCommand({ QueueUrl: this.dlqUrl, Entries: entries }),
        this.dlqUrl,
      );
      failures = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
      successes = new Set((out.Successful ?? []).map((s) => s.Id));
    } catch (error) {
      const opsError = error as OpsError;
      for (const entry of entries) {
        failures.set(entry.Id, { Code: opsError.code ?? 'Error', Message: opsError.message });
      }
    }
    sent.forEach((item, i) => {
      const failure = failures.get(`d${i}`);
      if (successes.has(`d${i}`) && failure === undefined) {
        this.moved.push(item);
        this.reader.forget([item.messageId]);
        return;
      }
      // Still held: released with the rest, so the DLQ copy stays visible and nothing is hidden.
      this.notDeleted.push({
        ...item,
        code: failure?.Code ?? 'NoResult',
        message: `sent to the target as ${item.targetMessageId}, but not deleted from the DLQ: ${
          failure?.Message ?? 'DeleteMessageBatch reported no result for this entry'
        }`,
        senderFault: failure?.SenderFault,
      });
    });
  }
}
