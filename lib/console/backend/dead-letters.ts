/**
 * The dead-letters page (`POST /api/queues/:id/dead-letters`, `.../dead-letters/:messageId`): a
 * queue's DLQ grouped by cause (reason, then job type), its messages listed, and one message with
 * its body and evidence. Built field by field: never a receipt handle.
 */
import type { DeadLetterMessage } from '../../ops/dead-letter-message.ts';
import type { ConsoleContext } from './context.ts';
import { CONSOLE_DEFAULTS } from './defaults.ts';
import { ConsoleRequestError } from './errors.ts';

/** A DLQ message as the page lists it. */
export function listedMessage(m: DeadLetterMessage) {
  return {
    messageId: m.messageId,
    jobId: m.job?.id,
    jobSource: m.job?.source,
    jobType: m.jobType,
    reason: m.reason,
    errorName: m.errorName,
    errorMessage: m.evidence.errorMessage,
    attempts: m.evidence.attempts,
    lastFailureAt: m.evidence.lastFailureAt,
    sentAt: m.sentAtMs === undefined ? undefined : new Date(m.sentAtMs).toISOString(),
    messageGroupId: m.messageGroupId,
  };
}

/** A DLQ message with its body (cut at {@link CONSOLE_DEFAULTS.maxBodyChars}) and evidence. */
export function fullMessage(m: DeadLetterMessage) {
  const body =
    m.body.length <= CONSOLE_DEFAULTS.maxBodyChars
      ? m.body
      : `${m.body.slice(0, CONSOLE_DEFAULTS.maxBodyChars)}…[${m.body.length - CONSOLE_DEFAULTS.maxBodyChars} more characters]`;
  return {
    ...listedMessage(m),
    body,
    evidence: m.evidence,
    hasEvidence: m.hasEvidence,
    job: m.job,
    sequenceNumber: m.sequenceNumber,
    receiveCount: m.receiveCount,
  };
}

/** A DLQ message as the page shows it whole. */
export type FullMessageView = ReturnType<typeof fullMessage>;

/** The dead letters of a queue's DLQ, grouped by cause (reason, then job type). */
export async function deadLettersView(ctx: ConsoleContext, queueId: string, refresh: boolean) {
  const queue = ctx.queue(queueId);
  const { at, read, summary } = await ctx.dlqs.read(queue, refresh);
  const notes: string[] = [];
  if (read.notRead > 0) {
    notes.push(
      read.queue.fifo
        ? `about ${read.notRead} more messages could not be read: on a FIFO queue a group's later messages stay locked while its first one is held, and reading never deletes (a redrive moves a group in order)`
        : `about ${read.notRead} messages reported visible were not seen (counts are approximate)`,
    );
  }
  if (read.queue.approximateNotVisible > 0) {
    notes.push(
      `${read.queue.approximateNotVisible} messages were in flight (held by another reader) and could not be read`,
    );
  }
  for (const failure of read.release.failed) {
    notes.push(
      `message ${failure.messageId} could not be made visible at once (${failure.code}); visible again by ${failure.visibleBy}`,
    );
  }
  return {
    queue: { id: queue.id, url: queue.url },
    dlq: {
      name: read.queue.name,
      url: read.queue.url,
      fifo: read.queue.fifo,
      approximateVisible: read.queue.approximateVisible,
      approximateNotVisible: read.queue.approximateNotVisible,
    },
    readAt: new Date(at).toISOString(),
    total: read.messages.length,
    stoppedBy: read.stoppedBy,
    notRead: read.notRead,
    notes,
    groups: summary.groups.map((g) => ({
      reason: g.key.reason ?? '',
      jobType: g.key.jobType ?? '',
      count: g.count,
      errorNames: g.errorNames,
      firstFailureAt: g.firstFailureAt,
      lastFailureAt: g.lastFailureAt,
      oldestSentAt: g.oldestSentAt,
      newestSentAt: g.newestSentAt,
      attempts: g.attempts,
      handlerVersions: g.handlerVersions,
      errorMessages: g.errorMessages,
      sample: g.sample,
    })),
    messages: read.messages.slice(0, CONSOLE_DEFAULTS.maxListedMessages).map(listedMessage),
    readOnly: ctx.readOnly,
  };
}

/** The dead-letters page of a queue. */
export type DeadLettersView = Awaited<ReturnType<typeof deadLettersView>>;

/**
 * One DLQ message with its body and evidence (from the latest read; read again when not in it).
 * @throws {ConsoleRequestError} 404 when the message is not (or no longer) in the DLQ.
 */
export async function messageView(ctx: ConsoleContext, queueId: string, messageId: string) {
  const queue = ctx.queue(queueId);
  let entry = await ctx.dlqs.read(queue, false);
  let found = entry.read.messages.find((m) => m.messageId === messageId);
  if (found === undefined) {
    entry = await ctx.dlqs.read(queue, true);
    found = entry.read.messages.find((m) => m.messageId === messageId);
  }
  if (found === undefined) {
    throw new ConsoleRequestError(
      404,
      `message ${messageId} is not (or no longer) in ${entry.read.queue.name}`,
    );
  }
  return { queue: { id: queue.id }, dlq: { name: entry.read.queue.name }, message: fullMessage(found) };
}

/** One dead letter, whole. */
export type MessageView = Awaited<ReturnType<typeof messageView>>;
