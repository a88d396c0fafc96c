/**
 * The check after a redrive: which redriven jobs came back to the DLQ ({@link returnMatcher}),
 * which could not be looked for (FIFO, behind another message of their group), what is still in
 * the target, and the parked jobs a FIFO redrive left behind (stranded-parks.ts), moved on request.
 */
import type { DeadLetterMessage } from '../dead-letter-message.ts';
import {
  type DeadLetterRead,
  type DeadLetterReaderOptions,
  DLQ_READER_DEFAULTS,
  readDeadLetters,
} from '../dlq-reader.ts';
import type { DeadLetterFilter } from '../filters.ts';
import { strandedParkedCommand } from '../format.ts';
import { describeQueue } from '../queue.ts';
import { type FailedItem, itemOf, type MovedItem, type RedriveItem } from './items.ts';
import { type ReturnMatch, returnMatcher } from './returns.ts';
import { type RedriveResult, redriveDeadLetters } from './run.ts';
import { groupsOf, isParkedBehindRedrive, strandedParkedHeads } from './stranded-parks.ts';

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
  const unverified = read.queue.fifo ? hiddenBehindGroupHeads(read.messages, redriven, cameBack) : [];
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
 * FIFO: the redriven jobs whose return a read could not see. A job that comes back joins the end
 * of its message group in the DLQ; when the group still starts with another message, the read saw
 * that one and nothing behind it. `messages`: the read, in the order received.
 */
function hiddenBehindGroupHeads(
  messages: readonly DeadLetterMessage[],
  redriven: readonly MovedItem[],
  cameBack: readonly CameBackItem[],
): UnverifiedItem[] {
  const unverified: UnverifiedItem[] = [];
  const back = new Set(cameBack.map((c) => c.redriven.messageId));
  const headOf = new Map<string, string>();
  for (const message of messages) {
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
  return unverified;
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
