/**
 * Filtered redrive: selected DLQ messages are sent, body unchanged, to a target queue and deleted
 * from the DLQ only once the send succeeded; everything else is made visible again. Then
 * {@link verifyRedrive} tells which redriven jobs came back to the DLQ.
 *
 * On real AWS a plain full redrive can also be done with `StartMessageMoveTask` (console: "Start
 * DLQ redrive"); this module exists for filtered redrives and for emulators, which lack that
 * action. Sources: SendMessageBatch API reference (at most 10 entries and 1 MiB per request; "for
 * a FIFO queue, multiple messages within a single batch are enqueued in the order they are sent";
 * a 200 response can carry `Failed` entries, so each entry is checked); DeleteMessageBatch API
 * reference (at most 10 entries, per-entry results); SendMessage API reference,
 * `MessageDeduplicationId` (up to 128 characters; a message sent with an id already used within
 * the 5-minute deduplication interval is accepted but not delivered);
 * sqs-configure-dead-letter-queue-redrive (redriven messages get new message ids).
 *
 * Returns (a redriven job back in the DLQ) are recognised by message identity and SQS's own
 * timestamps, never by this machine's clock: see {@link returnMatcher}. Parked jobs a FIFO redrive
 * leaves behind are found (and moved on request) by the verification: stranded-parks.ts.
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
import { messageSizeBytes, SQS_MAX_BATCH_ENTRIES, SQS_MAX_MESSAGE_BYTES } from '../../core/message-size.ts';
import type { DeadLetterMessage } from '../dead-letter-message.ts';
import {
  type DeadLetterRead,
  DeadLetterReader,
  type DeadLetterReaderOptions,
  DLQ_READER_DEFAULTS,
  type ReleaseReport,
  readDeadLetters,
} from '../dlq-reader.ts';
import type { OpsError } from '../errors.ts';
import { compileFilter, type DeadLetterFilter, describeFilter } from '../filters.ts';
import { strandedParkedCommand } from '../format.ts';
import {
  callSqs,
  checkIsDeadLetterQueue,
  checkRedrivePair,
  describeQueue,
  type OpsSqs,
  type QueueInfo,
  redrivePairWarnings,
} from '../queue.ts';
import { groupsOf, isParkedBehindRedrive, strandedParkedHeads } from './stranded-parks.ts';

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
   * when none of them had a `SentTimestamp`. Used by {@link returnMatcher} for returns without
   * identity.
   */
  readonly sentAfterMs: number | undefined;
}

/** A selected message that was not sent (it is still in the DLQ), or sent but not deleted. */
export interface FailedItem extends RedriveItem {
  /** SQS error code (`Failed[].Code`), an {@link OpsError} code, or `GroupBlocked`. */
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
}

/** Counters passed to {@link RedriveOptions.onProgress}. */
export interface RedriveProgress {
  readonly read: number;
  readonly selected: number;
  readonly moved: number;
  readonly failed: number;
  readonly skipped: number;
}

/** What the redrive will do, shown before it starts. */
export interface RedrivePlan {
  readonly dlq: QueueInfo;
  readonly target: QueueInfo;
  /** {@link describeFilter} of the filter. */
  readonly filter: string;
  readonly max: number | undefined;
  readonly warnings: readonly string[];
}

/** Options of {@link redriveDeadLetters}. */
export interface RedriveOptions extends Omit<DeadLetterReaderOptions, 'queueUrl'> {
  readonly dlqUrl: string;
  readonly targetUrl: string;
  /** @default every message */
  readonly filter?: DeadLetterFilter;
  /**
   * A further condition a message must meet to be selected, besides `filter` (not shown in the
   * plan): {@link verifyRedrive} moves only stranded parked messages with it. @default none
   */
  readonly select?: (message: DeadLetterMessage) => boolean;
  /** Most messages to select. @default no limit */
  readonly max?: number;
  /** Read and select only: nothing is sent or deleted. @default false */
  readonly dryRun?: boolean;
  /** Stops after the current batch; what is held is released. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: RedriveProgress) => void;
  /**
   * Asked once the queues are described and checked, before anything is received (not on a dry
   * run). Returning false ends the redrive with `stoppedBy: 'declined'`.
   */
  readonly confirm?: (plan: RedrivePlan) => boolean | Promise<boolean>;
  /**
   * Redrive also from a queue that is no queue's dead-letter queue (refused otherwise, see
   * {@link checkIsDeadLetterQueue}); the words naming this override in the refusal.
   * @default false, '--any-source-queue'
   */
  readonly anySourceQueue?: boolean;
  readonly anySourceQueueOverride?: string;
}

/** Outcome of {@link redriveDeadLetters}. */
export interface RedriveResult {
  readonly dryRun: boolean;
  readonly plan: RedrivePlan;
  /** Messages selected, in DLQ order: moved, or (dry run) that would move. */
  readonly selected: readonly RedriveItem[];
  /** Sent to the target and deleted from the DLQ. */
  readonly moved: readonly MovedItem[];
  /** Selected but not sent; still in the DLQ, visible again. */
  readonly failed: readonly FailedItem[];
  /** Sent to the target but the DLQ delete failed: the job is in both queues. */
  readonly notDeleted: readonly NotDeletedItem[];
  /** Left in the DLQ on purpose. */
  readonly skipped: readonly SkippedItem[];
  /** Messages read from the DLQ. */
  readonly read: number;
  /** `end`: read as far as possible; `max`: `max` selected; `aborted`: the signal; `declined`: `confirm` said no. */
  readonly stoppedBy: 'end' | 'max' | 'aborted' | 'declined';
  /**
   * Messages the DLQ reported visible at the start that were not read (approximate). On a FIFO
   * DLQ these include messages behind an unselected (or, on a dry run, any) first message of their
   * group: a group's later messages cannot be received while an earlier one is held.
   */
  readonly notRead: number;
  readonly release: ReleaseReport;
  /** DLQ message ids read by this redrive, except those that came back (for {@link verifyRedrive}). */
  readonly seenMessageIds: readonly string[];
  /** Epoch ms when reading started, on this machine's clock (shown only; never compared with SQS's timestamps). */
  readonly startedAtMs: number;
}

function itemOf(message: DeadLetterMessage): RedriveItem {
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

/** Sends, deletes and keeps order for one run. */
class Mover {
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
    return chunkByCountAndBytes(messages, (m) => messageSizeBytes({ MessageBody: bodyToSendOn(m.body) }), {
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
      ...(this.target.fifo
        ? {
            MessageGroupId: message.messageGroupId,
            MessageDeduplicationId: redriveDeduplicationId(message.messageId),
          }
        : {}),
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

/**
 * Redrives the DLQ messages selected by `filter` (at most `max`) to `targetUrl`.
 *
 * - Each selected body is sent unchanged (no message attributes: the evidence stays behind; the
 *   worker writes fresh evidence if the job fails again); only a character SQS would refuse (no
 *   body SQS delivered holds one) is written as a JSON escape (lib/core/characters.ts). FIFO: the
 *   message's `MessageGroupId` and a fresh {@link redriveDeduplicationId}; standard: no group.
 * - A message is deleted from the DLQ only after its send succeeded; per-entry failures of
 *   SendMessageBatch leave their messages in the DLQ and are reported.
 * - FIFO order: messages are moved in DLQ order per group; a group stops at its first message that
 *   is not selected or fails to send (later ones are `group-blocked` / `GroupBlocked`).
 * - Everything read and not deleted is made visible again at the end, also on errors and aborts.
 * - `dryRun`: reads and selects the same way, sends and deletes nothing.
 *
 * @throws {OpsError} before anything is read: an invalid URL, a missing queue, an unreachable
 *   endpoint, a FIFO/standard mismatch or the DLQ as target; during the run: a failed receive
 *   (what was held is released first). Send and delete failures are reported, not thrown.
 */
export async function redriveDeadLetters(options: RedriveOptions): Promise<RedriveResult> {
  const { sqs } = options;
  const dlq = await describeQueue(sqs, options.dlqUrl, 'DLQ URL (--dlq-url)');
  const target = await describeQueue(sqs, options.targetUrl, 'target URL (--target-url)');
  checkRedrivePair(dlq, target);
  if (options.anySourceQueue !== true) {
    await checkIsDeadLetterQueue(sqs, dlq, target, options.anySourceQueueOverride ?? '--any-source-queue');
  }
  const filter = options.filter ?? {};
  const max = options.max;
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
    throw new RangeError(`max must be a whole number >= 1, got ${max}`);
  }
  const plan: RedrivePlan = {
    dlq,
    target,
    filter: describeFilter(filter),
    max,
    warnings: redrivePairWarnings(dlq, target),
  };
  const dryRun = options.dryRun ?? false;
  const now = options.now ?? Date.now;
  const reader = new DeadLetterReader({ ...options, queueUrl: dlq.url });
  const blockedGroups = new Map<string, string>();
  const mover = new Mover(sqs, target, dlq.url, reader, blockedGroups);
  const selected: RedriveItem[] = [];
  const skipped: SkippedItem[] = [];
  const startedAtMs = now();
  const cameBackIds = new Set<string>();
  /** Latest `SentTimestamp` (SQS's clock) of the DLQ messages received so far. */
  let latestSentAtMs: number | undefined;
  let read = 0;
  const result = (
    stoppedBy: RedriveResult['stoppedBy'],
    release: ReleaseReport = { released: 0, failed: [] },
  ): RedriveResult => ({
    dryRun,
    plan,
    selected,
    moved: mover.moved,
    failed: mover.failed,
    notDeleted: mover.notDeleted,
    skipped,
    read,
    stoppedBy,
    notRead: Math.max(0, dlq.approximateVisible - read),
    release,
    seenMessageIds: [...reader.seenMessageIds].filter((id) => !cameBackIds.has(id)),
    startedAtMs,
  });
  if (!dryRun && options.confirm !== undefined && !(await options.confirm(plan))) return result('declined');

  const byFilter = compileFilter(filter);
  const select = options.select;
  const matches = select === undefined ? byFilter : (m: DeadLetterMessage) => byFilter(m) && select(m);
  const progress = () =>
    options.onProgress?.({
      read,
      selected: selected.length,
      moved: mover.moved.length,
      failed: mover.failed.length,
      skipped: skipped.length,
    });
  let stoppedBy: RedriveResult['stoppedBy'] = 'end';
  let failure: unknown;
  try {
    for (;;) {
      if (options.signal?.aborted) {
        stoppedBy = 'aborted';
        break;
      }
      if (max !== undefined && selected.length >= max) {
        stoppedBy = 'max';
        break;
      }
      const batch = await reader.receive(max === undefined ? 10 : max - selected.length);
      read += batch.length;
      for (const message of batch) {
        if (
          message.sentAtMs !== undefined &&
          (latestSentAtMs === undefined || message.sentAtMs > latestSentAtMs)
        )
          latestSentAtMs = message.sentAtMs;
      }
      const toMove: DeadLetterMessage[] = [];
      const returnOf = returnMatcher([...mover.moved, ...mover.notDeleted]);
      for (const message of batch) {
        const group = dlq.fifo ? message.messageGroupId : undefined;
        if (returnOf(message) !== undefined) {
          skipped.push({ ...itemOf(message), why: 'came-back' });
          cameBackIds.add(message.messageId);
          if (group !== undefined) blockedGroups.set(group, 'a job of the group came back to the DLQ');
          continue;
        }
        const blocked = group === undefined ? undefined : blockedGroups.get(group);
        if (blocked !== undefined) {
          skipped.push({ ...itemOf(message), why: 'group-blocked' });
          continue;
        }
        if (!matches(message) || (max !== undefined && selected.length >= max)) {
          skipped.push({ ...itemOf(message), why: 'not-selected' });
          if (group !== undefined)
            blockedGroups.set(group, 'an earlier message of the group is not selected');
          continue;
        }
        selected.push(itemOf(message));
        toMove.push(message);
      }
      if (!dryRun && toMove.length > 0) await mover.move(toMove, latestSentAtMs);
      progress();
      if (reader.exhausted) break;
    }
  } catch (error) {
    failure = error;
  }
  const release = await reader.releaseAll();
  if (failure !== undefined) throw failure;
  return result(stoppedBy, release);
}

/** What a confirmed redrive will move, as its dry run can tell ({@link redriveScope}). */
export interface RedriveScope {
  /** Messages the dry run selected; a run with the same filter moves them. */
  readonly selected: number;
  /** FIFO: message groups the selected messages lead. 0 on a standard DLQ. */
  readonly groups: number;
  /**
   * FIFO: messages the DLQ reported visible that the dry run could not read (approximate), because
   * they wait behind the first message of their group. A run moves those of the selected groups
   * too, in order, each that matches the filter, up to the first that does not (or fails to send);
   * they are not in {@link selected}. 0 on a standard DLQ.
   */
  readonly behindGroupHeads: number;
  /** The same in one sentence, for a confirmation. */
  readonly text: string;
}

/**
 * What running `dryRun`'s redrive for real (same filter, same `max`) will move: the one rule that
 * `sqs-jobs dlq redrive` and the console's redrive share, as both run {@link redriveDeadLetters}.
 * On a standard DLQ a dry run sees every visible message. On a FIFO DLQ it sees only the first
 * message of each group (a group's later messages cannot be received while an earlier one is held
 * and not deleted: "FIFO queue delivery logic"); a real run deletes each moved message, which
 * makes the next one of its group receivable, so it moves more than the dry run counted.
 *
 * @throws {RangeError} when `dryRun` is not a dry run's result.
 */
export function redriveScope(dryRun: RedriveResult): RedriveScope {
  if (!dryRun.dryRun) throw new RangeError('redriveScope needs the result of a dry run');
  const { plan } = dryRun;
  const selected = dryRun.selected.length;
  const atMost = plan.max === undefined ? '' : ` (at most ${plan.max} in all)`;
  const messages = (n: number) => `${n} message${n === 1 ? '' : 's'}`;
  const matching = plan.filter === describeFilter({}) ? '' : ` that matches ${plan.filter}`;
  if (!plan.dlq.fifo) {
    return {
      selected,
      groups: 0,
      behindGroupHeads: 0,
      text:
        `Moves every message${matching} when it runs${atMost}: ` +
        `the ${messages(selected)} selected now, and any that arrive meanwhile.`,
    };
  }
  const groups = new Set(dryRun.selected.map((item) => item.messageGroupId)).size;
  const behindGroupHeads = dryRun.notRead;
  const behind =
    behindGroupHeads > 0
      ? ` The DLQ holds about ${messages(behindGroupHeads)} more that a dry run cannot read (a FIFO group shows ` +
        'one message at a time): those behind the selected ones move too, in group order' +
        (matching === '' ? '.' : `, each${matching}; a group stops at its first message that does not.`)
      : ` Any message behind them when it runs moves too, in group order${matching === '' ? '' : ', if it matches'}.`;
  return {
    selected,
    groups,
    behindGroupHeads,
    text:
      `Moves the ${messages(selected)} selected, each the first of its message group ` +
      `(${groups} group${groups === 1 ? '' : 's'})${atMost}.${behind}`,
  };
}

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

/** A redriven job found in the DLQ again. */
export interface CameBackItem {
  /** The message as it was redriven. */
  readonly redriven: MovedItem;
  /** How it was recognised. */
  readonly matchedBy: ReturnMatch;
  /** Id of the new DLQ message. */
  readonly messageId: string;
  readonly reason: string;
  readonly errorName: string;
  readonly errorMessage: string | undefined;
  /** When it entered the DLQ again (`SentTimestamp`), ISO 8601. */
  readonly sentAt: string | undefined;
}

/** Options of {@link verifyRedrive}. */
export interface VerifyRedriveOptions extends Omit<DeadLetterReaderOptions, 'queueUrl'> {
  readonly dlqUrl: string;
  /**
   * The messages redriven (`RedriveResult.moved`, plus `notDeleted` if wanted), with their target
   * message ids: returns are recognised by them ({@link returnMatcher}).
   */
  readonly redriven: readonly MovedItem[];
  /** DLQ message ids the redrive read (`RedriveResult.seenMessageIds`): they are not returns. */
  readonly exclude?: Iterable<string>;
  /** The target queue, to report what is still in it. */
  readonly targetUrl?: string;
  /** Most DLQ messages read. @default 10,000 */
  readonly maxMessages?: number;
  readonly signal?: AbortSignal;
  /**
   * FIFO, with `targetUrl`: move the stranded parked messages (stranded-parks.ts: `GroupParked`,
   * first of a group the redrive moved messages of, no job come back) that the redrive did not
   * read and that match this filter (give the redrive's own) to `targetUrl`, each group in DLQ
   * order until its first message is no such message. Leave it out to only report them (also when
   * the redrive stopped at `max`: it moved what the operator asked for).
   * @default report only
   */
  readonly moveStrandedParked?: DeadLetterFilter;
}

/**
 * A redriven job whose return could not be looked for: on a FIFO DLQ its message group starts with
 * another message, and a message that comes back goes behind it, where SQS hands out nothing of
 * the group while that first one is held (a non-destructive read cannot get past it).
 */
export interface UnverifiedItem {
  readonly redriven: MovedItem;
  readonly messageGroupId: string;
  /** The DLQ message at the head of the group (what the return would be behind). */
  readonly behindMessageId: string;
}

/**
 * FIFO: `GroupParked` messages left in the DLQ by a park the redrive was clearing
 * (stranded-parks.ts). Each entry names the DLQ message id, the job and the group.
 */
export interface StrandedParked {
  /** Moved to the target by this verification ({@link VerifyRedriveOptions.moveStrandedParked}), in DLQ order. */
  readonly moved: readonly MovedItem[];
  /** Selected to move but not sent (still in the DLQ), or sent but not deleted (in both queues). */
  readonly failed: readonly FailedItem[];
  /**
   * Still in the DLQ after the verification, first of their group: nothing of the group is ahead
   * of them. On a FIFO DLQ more of the group may be behind each: {@link command} moves those too.
   */
  readonly left: readonly RedriveItem[];
  /** What to run to move `left` (and what is behind them); undefined when `left` is empty. */
  readonly command: string | undefined;
}

/** Outcome of {@link verifyRedrive}. */
export interface VerifyRedriveResult {
  /** Distinct jobs checked. */
  readonly redrivenJobs: number;
  readonly cameBack: readonly CameBackItem[];
  /**
   * FIFO DLQs: redriven jobs that did not come back as far as the read could see, but whose group
   * in the DLQ starts with another message: a return would be hidden behind it. Not verified.
   */
  readonly unverified: readonly UnverifiedItem[];
  /** DLQ messages read. */
  readonly read: number;
  /** Visible DLQ messages not read (FIFO: behind the first of their group), approximate. */
  readonly notRead: number;
  /**
   * Messages still in the target queue (visible + in flight + delayed, approximate): while this is
   * above 0, redriven jobs may not have run yet and can still come back.
   */
  readonly targetPending: number | undefined;
  /** FIFO DLQs: parked messages a park the redrive was clearing left behind (empty lists otherwise). */
  readonly strandedParked: StrandedParked;
}

/**
 * Reads the DLQ (nothing deleted, everything visible again) and reports the redriven messages that
 * are in it again, recognised by {@link returnMatcher}: by `SourceMessageId` evidence or message id
 * equal to a copy's target message id, else the same job entered the DLQ after the copy was sent
 * (SQS's timestamps). Messages in `exclude` are left out. This machine's clock is not used.
 *
 * FIFO DLQs: also reports the `GroupParked` messages the park the redrive was clearing left behind
 * (`strandedParked`, stranded-parks.ts): by message id, with the command that moves them. With
 * `moveStrandedParked` it first moves those the redrive did not read (a job of the group
 * dead-lettered as parked after the redrive had read the group) and reads the DLQ again.
 *
 * @throws {OpsError} when the DLQ or the target cannot be read.
 */
export async function verifyRedrive(options: VerifyRedriveOptions): Promise<VerifyRedriveResult> {
  const exclude = new Set(options.exclude ?? []);
  const readDlq = () =>
    readDeadLetters({
      ...options,
      queueUrl: options.dlqUrl,
      maxMessages: options.maxMessages ?? DLQ_READER_DEFAULTS.maxMessages,
    });
  let read = await readDlq();
  const swept = await moveStrandedParked(options, read, exclude);
  // The DLQ as the move left it: what it revealed behind the messages it moved is seen now.
  if (swept !== undefined) read = await readDlq();
  const redriven = [
    ...options.redriven,
    ...(swept === undefined ? [] : [...swept.moved, ...swept.notDeleted]),
  ];
  const returnOf = returnMatcher(redriven);
  const cameBack: CameBackItem[] = [];
  for (const message of read.messages) {
    if (exclude.has(message.messageId)) continue;
    const found = returnOf(message);
    if (found === undefined) continue;
    cameBack.push({
      redriven: found.item,
      matchedBy: found.matchedBy,
      messageId: message.messageId,
      reason: message.reason,
      errorName: message.errorName,
      errorMessage: message.evidence.errorMessage,
      sentAt: message.sentAtMs === undefined ? undefined : new Date(message.sentAtMs).toISOString(),
    });
  }
  // FIFO: a job that comes back joins the end of its message group in the DLQ. When the group
  // still starts with another message, the read saw that one and nothing behind it.
  const unverified: UnverifiedItem[] = [];
  if (read.queue.fifo) {
    const back = new Set(cameBack.map((c) => c.redriven.messageId));
    const headOf = new Map<string, string>();
    for (const message of read.messages) {
      if (message.messageGroupId !== undefined && !headOf.has(message.messageGroupId))
        headOf.set(message.messageGroupId, message.messageId);
    }
    for (const item of redriven) {
      if (back.has(item.messageId) || item.messageGroupId === undefined) continue;
      const head = headOf.get(item.messageGroupId);
      if (head !== undefined) {
        unverified.push({ redriven: item, messageGroupId: item.messageGroupId, behindMessageId: head });
      }
    }
  }
  let targetPending: number | undefined;
  if (options.targetUrl !== undefined) {
    const target = await describeQueue(options.sqs, options.targetUrl, 'target URL (--target-url)');
    targetPending = target.approximateVisible + target.approximateNotVisible + target.approximateDelayed;
  }
  const left = read.queue.fifo
    ? strandedParkedHeads(read.messages, {
        groups: groupsOf(redriven),
        isReturn: (message) => returnOf(message) !== undefined,
      }).map(itemOf)
    : [];
  return {
    redrivenJobs: new Set(redriven.map((item) => item.jobKey)).size,
    cameBack,
    unverified,
    read: read.messages.length,
    notRead: read.notRead,
    targetPending,
    strandedParked: {
      moved: swept?.moved ?? [],
      failed: swept === undefined ? [] : [...swept.failed, ...swept.notDeleted],
      left,
      command: left.length === 0 ? undefined : strandedParkedCommand(options.dlqUrl, options.targetUrl),
    },
  };
}

/**
 * The move of {@link VerifyRedriveOptions.moveStrandedParked}: a redrive of the DLQ that selects
 * only messages {@link isParkedBehindRedrive} that the redrive did not read (`exclude`) and that
 * match the filter. A group moves in DLQ order and stops at its first other message (a job come
 * back, one the redrive left, another reason), so nothing runs ahead of what stays. Undefined when
 * not asked for, or when `read` shows no such message first of its group.
 */
async function moveStrandedParked(
  options: VerifyRedriveOptions,
  read: DeadLetterRead,
  exclude: ReadonlySet<string>,
): Promise<RedriveResult | undefined> {
  const filter = options.moveStrandedParked;
  const targetUrl = options.targetUrl;
  if (filter === undefined || targetUrl === undefined || !read.queue.fifo) return undefined;
  const returnOf = returnMatcher(options.redriven);
  const redrive = {
    groups: groupsOf(options.redriven),
    isReturn: (message: DeadLetterMessage) => returnOf(message) !== undefined,
  };
  const movable = (message: DeadLetterMessage) =>
    !exclude.has(message.messageId) && isParkedBehindRedrive(message, redrive);
  if (!strandedParkedHeads(read.messages, redrive).some(movable)) return undefined;
  return redriveDeadLetters({
    ...options,
    targetUrl,
    filter,
    select: movable,
    // The redrive whose verification this is checked the pair (or was told to move anyway).
    anySourceQueue: true,
  });
}
