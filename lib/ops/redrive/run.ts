/**
 * Filtered redrive: selected DLQ messages are sent, body unchanged, to a target queue and deleted
 * from the DLQ only once the send succeeded (mover.ts); everything else is made visible again.
 * This file runs it: plan and checks, then receive, select (select.ts), move, until the end, `max`
 * or an abort, and release what is held.
 */
import { shownValue } from '../../core/shown-value.ts';
import type { DeadLetterMessage } from '../dead-letter-message.ts';
import { DeadLetterReader, type DeadLetterReaderOptions, type ReleaseReport } from '../dlq-reader.ts';
import { type DeadLetterFilter, describeFilter } from '../filters.ts';
import {
  checkIsDeadLetterQueue,
  checkRedrivePair,
  describeQueue,
  type QueueInfo,
  redrivePairWarnings,
} from '../queue.ts';
import type { FailedItem, MovedItem, NotDeletedItem, RedriveItem, SkippedItem } from './items.ts';
import { Mover } from './mover.ts';
import { Selection, selectorOf } from './select.ts';

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
   * plan): `verifyRedrive` (verify.ts) moves only stranded parked messages with it. @default none
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
  /** DLQ message ids read by this redrive, except those that came back (for `verifyRedrive`, verify.ts). */
  readonly seenMessageIds: readonly string[];
  /** Epoch ms when reading started, on this machine's clock (shown only; never compared with SQS's timestamps). */
  readonly startedAtMs: number;
}

/**
 * Redrives the DLQ messages selected by `filter` (at most `max`) to `targetUrl`.
 *
 * - Each selected body is sent unchanged, with the original message's attributes kept in the DLQ
 *   (`originalAttributesOf`: a raw job's identity attribute) but not the evidence, which stays
 *   behind (the worker writes fresh evidence if the job fails again); only a character SQS would refuse (no
 *   body SQS delivered holds one) is written as a JSON escape (lib/core/characters.ts). FIFO: the
 *   message's `MessageGroupId` and a fresh `redriveDeduplicationId` (mover.ts); standard: the
 *   fair-queue tenant kept (its DLQ `MessageGroupId`, else the envelope's `partitionkey`; `fairQueueGroup`).
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
  const plan = await planRedrive(options);
  const { dlq, target, max } = plan;
  const dryRun = options.dryRun ?? false;
  const now = options.now ?? Date.now;
  const reader = new DeadLetterReader({ ...options, queueUrl: dlq.url });
  const blockedGroups = new Map<string, string>();
  const mover = new Mover(options.sqs, target, dlq.url, reader, blockedGroups);
  const selection = new Selection(dlq.fifo, max, selectorOf(options.filter, options.select), blockedGroups);
  const startedAtMs = now();
  const result = (
    stoppedBy: RedriveResult['stoppedBy'],
    release: ReleaseReport = { released: 0, failed: [] },
  ): RedriveResult => ({
    dryRun,
    plan,
    selected: selection.selected,
    moved: mover.moved,
    failed: mover.failed,
    notDeleted: mover.notDeleted,
    skipped: selection.skipped,
    read: selection.read,
    stoppedBy,
    notRead: Math.max(0, dlq.approximateVisible - selection.read),
    release,
    seenMessageIds: [...reader.seenMessageIds].filter((id) => !selection.cameBackIds.has(id)),
    startedAtMs,
  });
  if (!dryRun && options.confirm !== undefined && !(await options.confirm(plan))) return result('declined');

  const progress = () =>
    options.onProgress?.({
      read: selection.read,
      selected: selection.selected.length,
      moved: mover.moved.length,
      failed: mover.failed.length,
      skipped: selection.skipped.length,
    });
  let stoppedBy: RedriveResult['stoppedBy'] = 'end';
  let failure: unknown;
  try {
    for (;;) {
      if (options.signal?.aborted) {
        stoppedBy = 'aborted';
        break;
      }
      if (selection.full) {
        stoppedBy = 'max';
        break;
      }
      const batch = await reader.receive(max === undefined ? 10 : max - selection.selected.length);
      const toMove = selection.take(batch, [...mover.moved, ...mover.notDeleted]);
      if (!dryRun && toMove.length > 0) await mover.move(toMove, selection.latestSentAtMs);
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

/**
 * Describes and checks the two queues and `max`, and puts the plan together: what a redrive
 * shows before it starts (and asks `confirm` about).
 *
 * @throws {OpsError} an invalid URL, a missing queue, an unreachable endpoint, a FIFO/standard
 *   mismatch, the DLQ as target, or (without `anySourceQueue`) a source that is no DLQ.
 * @throws {RangeError} when `max` is not a whole number >= 1.
 */
async function planRedrive(options: RedriveOptions): Promise<RedrivePlan> {
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
    throw new RangeError(`max must be a whole number >= 1, got ${shownValue(max)}`);
  }
  return {
    dlq,
    target,
    filter: describeFilter(filter),
    max,
    warnings: redrivePairWarnings(dlq, target),
  };
}
