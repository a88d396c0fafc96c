/**
 * Reading a dead-letter queue without losing anything: messages are received with a visibility
 * timeout (the "hold") so that each is read once, and every message not deleted by the caller is
 * made visible again at the end (ChangeMessageVisibility to 0). Should the process die, held
 * messages come back on their own when the hold runs out.
 *
 * Sources: ReceiveMessage API reference (at most 10 messages per call; `VisibilityTimeout`
 * overrides the queue's for the received messages; `WaitTimeSeconds` 0–20, a long poll queries
 * all servers, while a short poll samples some and may come back empty while messages exist);
 * ChangeMessageVisibility / ChangeMessageVisibilityBatch API reference (0–43,200 s, counted from
 * the call; 0 makes the message visible at once; at most 10 entries; a 200 response may carry
 * `Failed` entries); "FIFO queue delivery logic" (a message group is locked while any of its
 * messages is in flight: only the first messages of each group can be read without deleting them).
 */

import {
  ChangeMessageVisibilityBatchCommand,
  type ChangeMessageVisibilityBatchCommandOutput,
  ReceiveMessageCommand,
  type ReceiveMessageCommandOutput,
} from '@aws-sdk/client-sqs';
import { shownValue } from '../core/shown-value.ts';
import { type DeadLetterMessage, toDeadLetterMessage } from './dead-letter-message.ts';
import { OpsError } from './errors.ts';
import { callSqs, describeQueue, type OpsSqs, type QueueInfo } from './queue.ts';

/** Defaults of the reader, defined once. */
export const DLQ_READER_DEFAULTS = {
  /** Visibility timeout of received messages while an operation runs, seconds. */
  holdSeconds: 300,
  /** `WaitTimeSeconds` of each ReceiveMessage (a long poll sees every server). */
  waitTimeSeconds: 1,
  /** Receives in a row that bring nothing new before the queue counts as read to the end. */
  emptyReceivesToStop: 2,
  /** Most messages read by one scan (list, show, verify). */
  maxMessages: 10_000,
} as const;

/** Largest visibility timeout SQS accepts, seconds (12 hours). */
export const MAX_HOLD_SECONDS = 43_200;
/** Largest `WaitTimeSeconds` SQS accepts. */
export const MAX_WAIT_TIME_SECONDS = 20;
/** Most entries per ReceiveMessage / batch call. */
const MAX_BATCH = 10;

/** Options of a {@link DeadLetterReader}. */
export interface DeadLetterReaderOptions {
  readonly sqs: OpsSqs;
  readonly queueUrl: string;
  /** Visibility timeout while held, seconds (1–43,200). @default 300 */
  readonly holdSeconds?: number;
  /** `WaitTimeSeconds` per receive (0–20). @default 1 */
  readonly waitTimeSeconds?: number;
  /** Receives in a row with nothing new that end the read. @default 2 */
  readonly emptyReceivesToStop?: number;
  /** Epoch ms clock. @default Date.now */
  readonly now?: () => number;
}

/** A message the reader holds, with the latest receipt handle and when its hold runs out (epoch ms). */
interface HeldMessage {
  readonly message: DeadLetterMessage;
  heldUntilMs: number;
}

/** A message that could not be made visible again at once. */
export interface ReleaseFailure {
  readonly messageId: string;
  readonly code: string;
  readonly message: string;
  /** When it becomes visible anyway (its hold runs out), ISO 8601. */
  readonly visibleBy: string;
}

/** Outcome of {@link DeadLetterReader.releaseAll}. */
export interface ReleaseReport {
  /** Messages made visible again at once. */
  readonly released: number;
  /** Messages whose release failed; each becomes visible anyway when its hold runs out. */
  readonly failed: readonly ReleaseFailure[];
}

/**
 * Receives from a queue and keeps track of what it holds. Not safe for concurrent calls.
 *
 * A message received again (its hold ran out during a long operation) is not returned a second
 * time; its receipt handle is refreshed so that it can still be released or deleted.
 */
export class DeadLetterReader {
  readonly queueUrl: string;
  readonly holdSeconds: number;
  readonly #sqs: OpsSqs;
  readonly #waitTimeSeconds: number;
  readonly #emptyReceivesToStop: number;
  readonly #now: () => number;
  readonly #held = new Map<string, HeldMessage>();
  readonly #seen = new Set<string>();
  #emptyInARow = 0;

  constructor(options: DeadLetterReaderOptions) {
    this.queueUrl = options.queueUrl;
    this.#sqs = options.sqs;
    this.holdSeconds = checkRange(
      'holdSeconds',
      options.holdSeconds ?? DLQ_READER_DEFAULTS.holdSeconds,
      1,
      MAX_HOLD_SECONDS,
    );
    this.#waitTimeSeconds = checkRange(
      'waitTimeSeconds',
      options.waitTimeSeconds ?? DLQ_READER_DEFAULTS.waitTimeSeconds,
      0,
      MAX_WAIT_TIME_SECONDS,
    );
    this.#emptyReceivesToStop = Math.max(
      1,
      options.emptyReceivesToStop ?? DLQ_READER_DEFAULTS.emptyReceivesToStop,
    );
    this.#now = options.now ?? Date.now;
  }

  /** Whether the last receives brought nothing new: the queue is read as far as it can be. */
  get exhausted(): boolean {
    return this.#emptyInARow >= this.#emptyReceivesToStop;
  }

  /** Ids of every message received so far (held, deleted or released). */
  get seenMessageIds(): ReadonlySet<string> {
    return this.#seen;
  }

  /** Number of messages currently held (received, not deleted, not released). */
  get heldCount(): number {
    return this.#held.size;
  }

  /**
   * One ReceiveMessage of up to `max` (≤ 10) messages with every message and system attribute.
   *
   * @returns the messages not seen before in this run, in the order received (per group on FIFO).
   * @throws {OpsError} when the receive fails.
   */
  async receive(max: number = MAX_BATCH): Promise<DeadLetterMessage[]> {
    await this.#extendHolds();
    const out = await callSqs<ReceiveMessageCommandOutput>(
      this.#sqs,
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: Math.min(MAX_BATCH, Math.max(1, Math.floor(max))),
        VisibilityTimeout: this.holdSeconds,
        WaitTimeSeconds: this.#waitTimeSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
      this.queueUrl,
    );
    const heldUntilMs = this.#now() + this.holdSeconds * 1000;
    const fresh: DeadLetterMessage[] = [];
    for (const raw of out.Messages ?? []) {
      const message = toDeadLetterMessage(raw);
      if (message.messageId === '' || message.receiptHandle === '') continue;
      this.#held.set(message.messageId, { message, heldUntilMs });
      if (this.#seen.has(message.messageId)) continue;
      this.#seen.add(message.messageId);
      fresh.push(message);
    }
    this.#emptyInARow = fresh.length === 0 ? this.#emptyInARow + 1 : 0;
    return fresh;
  }

  /** The current receipt handle of a held message (refreshed when it was received again). */
  receiptHandleOf(messageId: string): string | undefined {
    return this.#held.get(messageId)?.message.receiptHandle;
  }

  /** Stops tracking messages the caller deleted. */
  forget(messageIds: Iterable<string>): void {
    for (const id of messageIds) this.#held.delete(id);
  }

  /**
   * Makes every held message visible again (ChangeMessageVisibilityBatch, `VisibilityTimeout` 0,
   * 10 per call). Never throws: a failed release is reported; the message becomes visible
   * anyway when its hold runs out.
   */
  async releaseAll(): Promise<ReleaseReport> {
    const entries = [...this.#held.values()];
    this.#held.clear();
    const results = await this.#changeVisibility(entries, 0);
    let released = 0;
    const failed: ReleaseFailure[] = [];
    entries.forEach((entry, i) => {
      const failure = results[i];
      if (failure === undefined) {
        released += 1;
        return;
      }
      failed.push({
        messageId: entry.message.messageId,
        code: failure.code,
        message: failure.message,
        visibleBy: new Date(entry.heldUntilMs).toISOString(),
      });
    });
    return { released, failed };
  }

  /**
   * Renews the hold of messages held for more than half of it, so that a long operation does not
   * see them come back (and stop early because nothing new arrives). A renewal that fails is
   * ignored: the message comes back, is recognised, and is held again.
   */
  async #extendHolds(): Promise<void> {
    const now = this.#now();
    const due = [...this.#held.values()].filter((e) => e.heldUntilMs - now < (this.holdSeconds * 1000) / 2);
    if (due.length === 0) return;
    const results = await this.#changeVisibility(due, this.holdSeconds);
    const heldUntilMs = this.#now() + this.holdSeconds * 1000;
    due.forEach((entry, i) => {
      if (results[i] === undefined) entry.heldUntilMs = heldUntilMs;
    });
  }

  /**
   * ChangeMessageVisibilityBatch over `entries`, 10 per call. Never throws.
   *
   * @returns per entry, undefined when it succeeded, else the failure.
   */
  async #changeVisibility(
    entries: readonly HeldMessage[],
    visibilityTimeout: number,
  ): Promise<({ code: string; message: string } | undefined)[]> {
    const results: ({ code: string; message: string } | undefined)[] = [];
    for (let start = 0; start < entries.length; start += MAX_BATCH) {
      const chunk = entries.slice(start, start + MAX_BATCH);
      try {
        const out = await callSqs<ChangeMessageVisibilityBatchCommandOutput>(
          this.#sqs,
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: chunk.map((entry, i) => ({
              Id: `v${i}`,
              ReceiptHandle: entry.message.receiptHandle,
              VisibilityTimeout: visibilityTimeout,
            })),
          }),
          this.queueUrl,
        );
        const failures = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
        const succeeded = new Set((out.Successful ?? []).map((s) => s.Id));
        chunk.forEach((_, i) => {
          const failure = failures.get(`v${i}`);
          results.push(
            succeeded.has(`v${i}`) && failure === undefined
              ? undefined
              : {
                  code: failure?.Code ?? 'NoResult',
                  message: failure?.Message ?? 'no result for this entry in the response',
                },
          );
        });
      } catch (error) {
        const failure = {
          code: error instanceof OpsError ? error.code : 'Error',
          message: error instanceof Error ? error.message : String(error),
        };
        for (const _ of chunk) results.push(failure);
      }
    }
    return results;
  }
}

function checkRange(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be a whole number from ${min} to ${max}, got ${shownValue(value)}`);
  }
  return value;
}

/** Options of {@link readDeadLetters}. */
export interface ReadDeadLettersOptions extends DeadLetterReaderOptions {
  /** Most messages to read. @default 10,000 */
  readonly maxMessages?: number;
  /** Stops reading early (the messages read so far are released and returned). */
  readonly signal?: AbortSignal;
  /** Called after each receive with the number read so far. */
  readonly onProgress?: (read: number) => void;
}

/** What a non-destructive read of a DLQ saw. */
export interface DeadLetterRead {
  /** The queue as described before reading (counts are approximate). */
  readonly queue: QueueInfo;
  /** Every message read, in the order received. Their receipt handles are no longer valid. */
  readonly messages: readonly DeadLetterMessage[];
  /** Why reading stopped: the end of what can be read, `maxMessages`, or the signal. */
  readonly stoppedBy: 'end' | 'max' | 'aborted';
  /**
   * Messages the queue reported visible before the read that were not read (approximate, ≥ 0):
   * on a FIFO queue those behind the first messages of their group; otherwise those left by
   * `maxMessages` or messages that came and went meanwhile.
   */
  readonly notRead: number;
  /** The release of everything read. */
  readonly release: ReleaseReport;
}

/**
 * Reads a queue without deleting anything: receives until nothing new comes (or `maxMessages`,
 * or the signal), then makes every message visible again — also when a receive fails.
 *
 * Reading raises each message's `ApproximateReceiveCount` in the DLQ (harmless unless the DLQ
 * has a redrive policy of its own).
 *
 * @throws {OpsError} when the queue cannot be described, or a receive fails (after the release).
 */
export async function readDeadLetters(options: ReadDeadLettersOptions): Promise<DeadLetterRead> {
  const queue = await describeQueue(options.sqs, options.queueUrl, 'DLQ URL (--dlq-url)');
  const reader = new DeadLetterReader(options);
  const max = options.maxMessages ?? DLQ_READER_DEFAULTS.maxMessages;
  const messages: DeadLetterMessage[] = [];
  let stoppedBy: DeadLetterRead['stoppedBy'] = 'end';
  let failure: unknown;
  try {
    for (;;) {
      if (options.signal?.aborted) {
        stoppedBy = 'aborted';
        break;
      }
      if (messages.length >= max) {
        stoppedBy = 'max';
        break;
      }
      messages.push(...(await reader.receive(max - messages.length)));
      options.onProgress?.(messages.length);
      if (reader.exhausted) break;
    }
  } catch (error) {
    failure = error;
  }
  const release = await reader.releaseAll();
  if (failure !== undefined) throw failure;
  return {
    queue,
    messages,
    stoppedBy,
    notRead: Math.max(0, queue.approximateVisible - messages.length),
    release,
  };
}
