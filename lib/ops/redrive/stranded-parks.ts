/**
 * Parked dead letters that a FIFO redrive leaves behind (`onDeadLetter: 'park'`,
 * lib/runtime/group-park.ts; docs/operations.md, "Parked FIFO groups").
 *
 * The race: a job of a parked group that reaches the worker ahead of the redriven blocker (a
 * producer sent it while the redrive was under way) is dead-lettered as `GroupParked` after the
 * redrive read that group in the DLQ. The blocker then completes and clears the park, and nothing
 * holds the job in the DLQ any more, yet no redrive comes for it. The same holds for the parked
 * jobs a redrive chose not to move (a filter, `--max`) once their blocker completed.
 *
 * The rule used here needs nothing but the DLQ: a `GroupParked` message that is the first of its
 * FIFO group in the DLQ, in a group the redrive moved messages of, and that is no redriven job come
 * back, has nothing of its group ahead of it: its blocker was moved (or is gone), so once that one
 * completes nothing keeps the message there. Moving it is safe even if the blocker failed again
 * (hidden behind it, where a read cannot see): the worker reads the park on arrival and
 * dead-letters it again as `GroupParked`, now behind its blocker, which is the order the next
 * redrive needs.
 */
import { GROUP_PARKED_REASON } from '../../runtime/dead-letter.ts';
import type { DeadLetterMessage } from '../dead-letter-message.ts';

/** What tells whether a DLQ message is parked behind a redrive: see {@link isParkedBehindRedrive}. */
export interface RedriveGroups {
  /** FIFO message groups the redrive moved messages of. */
  readonly groups: ReadonlySet<string>;
  /** Whether the message is a redriven job come back (`returnMatcher` of returns.ts). */
  readonly isReturn: (message: DeadLetterMessage) => boolean;
}

/** The message groups of redriven messages (standard queues have none: empty). */
export function groupsOf(items: readonly { readonly messageGroupId: string | undefined }[]): Set<string> {
  const groups = new Set<string>();
  for (const item of items) if (item.messageGroupId !== undefined) groups.add(item.messageGroupId);
  return groups;
}

/**
 * Whether `message` was dead-lettered as `GroupParked` (lib/runtime/dead-letter.ts
 * `GROUP_PARKED_REASON`) in a group of the redrive and is no redriven job come back. Whether
 * anything of its group is ahead of it is for the caller to know (the first of its group in a
 * read: {@link strandedParkedHeads}; a redrive's selection: a group stops at its first message
 * that is not selected).
 */
export function isParkedBehindRedrive(message: DeadLetterMessage, redrive: RedriveGroups): boolean {
  return (
    message.reason === GROUP_PARKED_REASON &&
    message.messageGroupId !== undefined &&
    redrive.groups.has(message.messageGroupId) &&
    !redrive.isReturn(message)
  );
}

/**
 * The stranded parked messages of a FIFO DLQ read (`messages` in the order received, which is
 * each group's DLQ order): per group of the redrive, its first message when
 * {@link isParkedBehindRedrive}. At most one per group: on the emulator (and often on AWS) a read
 * sees no further into a group; a redrive of the group reaches the rest.
 */
export function strandedParkedHeads(
  messages: readonly DeadLetterMessage[],
  redrive: RedriveGroups,
): DeadLetterMessage[] {
  const seenGroups = new Set<string>();
  const heads: DeadLetterMessage[] = [];
  for (const message of messages) {
    const group = message.messageGroupId;
    if (group === undefined || seenGroups.has(group)) continue;
    seenGroups.add(group);
    if (isParkedBehindRedrive(message, redrive)) heads.push(message);
  }
  return heads;
}
