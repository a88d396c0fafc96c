/**
 * The scope text of a redrive's confirmation: what a confirmed run will move, as its dry run can
 * tell (`sqs-jobs dlq redrive` and the console's redrive both show it).
 */
import { describeFilter } from '../filters.ts';
import type { RedriveResult } from './run.ts';

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
