/**
 * The selecting half of a redrive: each message received from the DLQ is taken (to be moved) or
 * left, with why: a return of what this run moved, behind a blocked FIFO group, or not selected
 * by the filter (or past `max`). On a FIFO DLQ a group stops at its first message left.
 */
import type { DeadLetterMessage } from '../dead-letter-message.ts';
import { compileFilter, type DeadLetterFilter } from '../filters.ts';
import { itemOf, type MovedItem, type RedriveItem, type SkippedItem } from './items.ts';
import { returnMatcher } from './returns.ts';

/** Whether a message is selected: `filter` (default: every message) and, when given, `select`. */
export function selectorOf(
  filter: DeadLetterFilter | undefined,
  select: ((message: DeadLetterMessage) => boolean) | undefined,
): (message: DeadLetterMessage) => boolean {
  const byFilter = compileFilter(filter ?? {});
  return select === undefined ? byFilter : (m: DeadLetterMessage) => byFilter(m) && select(m);
}

/** What one run took and left, in DLQ order, over all the batches it received. */
export class Selection {
  readonly selected: RedriveItem[] = [];
  readonly skipped: SkippedItem[] = [];
  /** DLQ messages recognised as returns of messages this run moved. */
  readonly cameBackIds = new Set<string>();
  /** Latest `SentTimestamp` (SQS's clock) of the DLQ messages received so far. */
  latestSentAtMs: number | undefined;
  /** Messages received. */
  read = 0;

  readonly fifo: boolean;
  readonly max: number | undefined;
  readonly matches: (message: DeadLetterMessage) => boolean;
  /** FIFO: groups that must not move further in this run, with why (shared with the mover). */
  readonly blockedGroups: Map<string, string>;

  constructor(
    fifo: boolean,
    max: number | undefined,
    matches: (message: DeadLetterMessage) => boolean,
    blockedGroups: Map<string, string>,
  ) {
    this.fifo = fifo;
    this.max = max;
    this.matches = matches;
    this.blockedGroups = blockedGroups;
  }

  /** `max` messages are selected. */
  get full(): boolean {
    return this.max !== undefined && this.selected.length >= this.max;
  }

  /**
   * Sorts a received batch (in DLQ order): returns the messages to move. `redriven`: what this run
   * moved so far (moved or not deleted), whose returns are left in the DLQ.
   */
  take(batch: readonly DeadLetterMessage[], redriven: readonly MovedItem[]): DeadLetterMessage[] {
    this.read += batch.length;
    for (const message of batch) {
      if (
        message.sentAtMs !== undefined &&
        (this.latestSentAtMs === undefined || message.sentAtMs > this.latestSentAtMs)
      )
        this.latestSentAtMs = message.sentAtMs;
    }
    const toMove: DeadLetterMessage[] = [];
    const returnOf = returnMatcher(redriven);
    for (const message of batch) {
      const group = this.fifo ? message.messageGroupId : undefined;
      if (returnOf(message) !== undefined) {
        this.skipped.push({ ...itemOf(message), why: 'came-back' });
        this.cameBackIds.add(message.messageId);
        if (group !== undefined) this.blockedGroups.set(group, 'a job of the group came back to the DLQ');
        continue;
      }
      const blocked = group === undefined ? undefined : this.blockedGroups.get(group);
      if (blocked !== undefined) {
        this.skipped.push({ ...itemOf(message), why: 'group-blocked', matchesFilter: this.matches(message) });
        continue;
      }
      if (!this.matches(message) || this.full) {
        this.skipped.push({ ...itemOf(message), why: 'not-selected' });
        if (group !== undefined)
          this.blockedGroups.set(group, 'an earlier message of the group is not selected');
        continue;
      }
      this.selected.push(itemOf(message));
      toMove.push(message);
    }
    return toMove;
  }
}
