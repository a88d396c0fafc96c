/**
 * Plain-text and JSON renderings of the DLQ operations for the operator CLI (`sqs-jobs dlq`).
 * Text is for people (stable enough to grep, not a format to parse); `--json` is for scripts.
 *
 * Why one file: the renderings of the `dlq` subcommands share their helpers (shell quoting, times,
 * evidence lines) and are changed side by side.
 */

import { SQS_MAX_MESSAGE_BYTES, utf8Bytes } from '../core/message-size.ts';
import { shellWord } from '../core/shell-word.ts';
import { GROUP_PARKED_REASON } from '../runtime/dead-letter.ts';
import {
  type DeadLetterMessage,
  NO_EVIDENCE_REASON,
  SCHEDULE_DELIVERY_REASON,
} from './dead-letter-message.ts';
import type { DeadLetterRead, ReleaseReport } from './dlq-reader.ts';
import { describeJobRef } from './job-chain.ts';
import type { QueueInfo } from './queue.ts';
import type { RedriveItem, RedriveResult, SkippedItem, VerifyRedriveResult } from './redrive/index.ts';
import { cutText, type DeadLetterGroup, type DeadLetterSummary, type GroupKey } from './summary.ts';
import { terminalLines } from './terminal-text.ts';

export { terminalSafe } from './terminal-text.ts';

const KEY_LABEL: Record<GroupKey, string> = {
  reason: 'reason',
  jobType: 'job type',
  errorName: 'error name',
  handlerVersion: 'handler version',
};

/** Characters of a sample body shown in text output. */
const TEXT_BODY_CHARS = 300;

function kind(queue: QueueInfo): string {
  return queue.fifo ? 'FIFO' : 'standard';
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ');
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Notes about what a read could not see or give back. */
function readNotes(
  read: Pick<DeadLetterRead, 'queue' | 'stoppedBy' | 'notRead' | 'release'>,
  max?: number,
): string[] {
  const notes: string[] = [];
  if (read.stoppedBy === 'max') {
    notes.push(`stopped after ${max ?? 'the maximum'} messages (--max); about ${read.notRead} more not read`);
  } else if (read.stoppedBy === 'aborted') {
    notes.push('interrupted: the messages read so far are shown');
  } else if (read.notRead > 0 && read.queue.fifo) {
    notes.push(
      `about ${plural(read.notRead, 'more message')} could not be read: on a FIFO queue a group's later messages ` +
        'stay locked while its first ones are held, and reading never deletes (redrive moves a group in order)',
    );
  } else if (read.notRead > 0) {
    notes.push(
      `about ${plural(read.notRead, 'message')} reported visible at the start were not seen (counts are approximate)`,
    );
  }
  if (read.queue.approximateNotVisible > 0) {
    notes.push(
      `${plural(read.queue.approximateNotVisible, 'message was', 'messages were')} in flight at the start ` +
        '(held by another reader) and could not be read',
    );
  }
  notes.push(...releaseNotes(read.release));
  return notes;
}

function releaseNotes(release: ReleaseReport): string[] {
  return release.failed.map(
    (f) =>
      `message ${f.messageId} could not be made visible at once (${f.code}: ${f.message}); visible again by ${f.visibleBy}`,
  );
}

function groupDetails(group: DeadLetterGroup, indent: string): string[] {
  const lines: string[] = [];
  const names = group.errorNames.map((e) => `${e.name} ×${e.count}`).join(', ');
  const facts: string[] = [];
  if (group.firstFailureAt || group.lastFailureAt) {
    facts.push(`failures ${group.firstFailureAt ?? '?'} → ${group.lastFailureAt ?? '?'}`);
  } else if (group.oldestSentAt) {
    facts.push(`in the DLQ since ${group.oldestSentAt}`);
  }
  if (group.attempts) {
    facts.push(
      `attempts ${group.attempts.min === group.attempts.max ? group.attempts.min : `${group.attempts.min}-${group.attempts.max}`}`,
    );
  }
  if (group.handlerVersions.length > 0) facts.push(`handler ${group.handlerVersions.join(', ')}`);
  if (group.key.reason === NO_EVIDENCE_REASON) {
    lines.push(
      `${indent}no evidence attributes: SQS moved these after maxReceiveCount receives (crash, timeout or throttling), or the worker dead-lettered them with no room left for evidence beside a body near the size limit`,
    );
  } else if (group.key.reason === SCHEDULE_DELIVERY_REASON) {
    lines.push(
      `${indent}EventBridge Scheduler could not deliver these firings to their queue (${names}): the jobs did not run; fix the cause, then redrive them with --target-url <the queue>`,
    );
  } else {
    lines.push(`${indent}errors: ${names}`);
  }
  if (facts.length > 0) lines.push(`${indent}${facts.join(', ')}`);
  for (const message of group.errorMessages)
    lines.push(`${indent}message: ${cutText(oneLine(message), 200)}`);
  const sample = group.sample;
  const about = [
    sample.jobId ? `job ${sample.jobId}` : undefined,
    sample.rootJobId && sample.rootJobId !== sample.jobId ? `root ${sample.rootJobId}` : undefined,
    sample.correlationId ? `correlation ${sample.correlationId}` : undefined,
  ].filter((part) => part !== undefined);
  lines.push(
    `${indent}sample: ${sample.messageId}${about.length > 0 ? ` (${about.join(', ')})` : ''} ${cutText(oneLine(sample.body), TEXT_BODY_CHARS)}`,
  );
  return lines;
}

/** Text of `list`: the queue, the groups level by level, and notes. */
export function renderList(
  read: DeadLetterRead,
  summary: DeadLetterSummary,
  options: { readonly filter?: string; readonly max?: number } = {},
): string {
  const { queue } = read;
  const lines: string[] = [];
  lines.push(`DLQ ${queue.name} (${kind(queue)}) ${queue.url}`);
  const matched =
    options.filter && options.filter !== 'all messages' ? `, ${summary.total} match ${options.filter}` : '';
  const released =
    read.release.failed.length === 0 ? 'nothing deleted, all visible again' : 'nothing deleted';
  lines.push(`read ${plural(read.messages.length, 'message')}${matched}; ${released}`);
  if (summary.total === 0) {
    lines.push('', 'no messages');
  } else {
    lines.push(
      '',
      `${plural(summary.total, 'message')} by ${summary.groupBy.map((k) => KEY_LABEL[k]).join(', ')}:`,
    );
    const totals = new Map<string, number>();
    const prefixOf = (g: DeadLetterGroup, depth: number) =>
      JSON.stringify(summary.groupBy.slice(0, depth).map((k) => g.key[k]));
    for (const g of summary.groups) {
      for (let depth = 1; depth <= summary.groupBy.length; depth++) {
        totals.set(prefixOf(g, depth), (totals.get(prefixOf(g, depth)) ?? 0) + g.count);
      }
    }
    let previous: DeadLetterGroup | undefined;
    for (const g of summary.groups) {
      summary.groupBy.forEach((key, i) => {
        const depth = i + 1;
        if (previous !== undefined && prefixOf(previous, depth) === prefixOf(g, depth)) return;
        const indent = '  '.repeat(depth);
        const label = g.key[key] ?? '';
        lines.push(
          `${indent}${label.padEnd(Math.max(1, 50 - indent.length))} ${totals.get(prefixOf(g, depth))}`,
        );
      });
      lines.push(...groupDetails(g, '  '.repeat(summary.groupBy.length + 1)));
      previous = g;
    }
  }
  const notes = readNotes(read, options.max);
  if (notes.length > 0) lines.push('', ...notes.map((n) => `note: ${n}`));
  return terminalLines(lines);
}

/** JSON of `list`. */
export function listJson(read: DeadLetterRead, summary: DeadLetterSummary, filter: string): unknown {
  return {
    queue: read.queue,
    filter,
    read: read.messages.length,
    stoppedBy: read.stoppedBy,
    notRead: read.notRead,
    release: read.release,
    total: summary.total,
    groupBy: summary.groupBy,
    groups: summary.groups,
  };
}

/** JSON text without the whitespace between tokens (strings kept as they are). */
function compactJson(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|[ \t\n\r]+/g, (token) => (token.startsWith('"') ? token : ''));
}

/**
 * The body as received, indented when that changes nothing but whitespace: `JSON.parse` then
 * `JSON.stringify` respells what binary64 cannot hold (`12345678901234567890` →
 * `12345678901234567000`, `1e400` → `null`), numbers (`1.50` → `1.5`), escapes (`\u00e9` → `é`)
 * and duplicate keys; then the body is shown exactly as received instead.
 */
export function prettyBody(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  return JSON.stringify(parsed) === compactJson(body) ? JSON.stringify(parsed, null, 2) : body;
}

/** The job a dead letter carries, as `sqs-jobs job` names it. */
export interface FollowedJob {
  readonly type: string;
  readonly source: string;
  readonly id: string;
}

/**
 * The `sqs-jobs job` command line that prints a job's chain. The default names only the job;
 * `sqs-jobs dlq show` passes one that also says where to look (table, DLQ, endpoints).
 */
export type FollowCommand = (job: FollowedJob) => string;

const jobOnly: FollowCommand = (job) =>
  `sqs-jobs job ${shellWord(job.type)} --source ${shellWord(job.source)} --id ${shellWord(job.id)}`;

/**
 * Text of `show` for one message: where it is, its evidence, stack and body, and the command that
 * follows its job's chain (`follow`, when the body names the job's type and source).
 */
export function renderMessage(message: DeadLetterMessage, follow: FollowCommand = jobOnly): string {
  const e = message.evidence;
  const lines: string[] = [];
  const row = (label: string, value: string | number | undefined) => {
    if (value !== undefined && value !== '') lines.push(`${label.padEnd(18)} ${value}`);
  };
  row('DLQ message id', message.messageId);
  row(
    'in the DLQ since',
    message.sentAtMs === undefined ? undefined : new Date(message.sentAtMs).toISOString(),
  );
  row('message group', message.messageGroupId);
  row('sequence number', message.sequenceNumber);
  row('job id', message.job?.id);
  row('job source', message.job?.source);
  row('job type', message.jobType);
  row('parent job id', message.job?.parentId);
  row('parent job', message.job?.parentJob === undefined ? undefined : describeJobRef(message.job.parentJob));
  row('root job id', message.job?.rootId);
  row('correlation id', message.job?.correlationId);
  row('trace id', message.job?.traceId ?? message.job?.traceparent);
  const job = message.job;
  if (job?.type !== undefined && job.source !== undefined) {
    row('follow its chain', follow({ type: job.type, source: job.source, id: job.id }));
  }
  row('reason', message.reason);
  row('error', e.errorName === undefined ? undefined : `${e.errorName}: ${e.errorMessage ?? ''}`);
  row('attempts', e.attempts);
  row('first failure', e.firstFailureAt);
  row('last failure', e.lastFailureAt);
  row('handler version', e.handlerVersion);
  row('source message id', e.sourceMessageId);
  const delivery = message.scheduleDelivery;
  if (delivery !== undefined) {
    row('schedule', delivery.scheduleArn);
    row('scheduled time', delivery.scheduledTime);
    row('target', delivery.targetArn);
    row(
      'Scheduler error',
      `${delivery.errorCode}${delivery.errorMessage ? `: ${delivery.errorMessage}` : ''}`,
    );
    row('retries', delivery.retryAttempts);
    row('gave up on', delivery.exhaustedRetryCondition);
    lines.push(
      'a schedule dead-letter event: EventBridge Scheduler could not deliver this firing to its queue, so the job did not run (fix the cause, then redrive it to the queue with --target-url)',
    );
  } else if (!message.hasEvidence) {
    lines.push(noEvidenceLine(message));
  }
  if (e.errorStack) lines.push('', 'stack:', ...e.errorStack.split('\n').map((l) => `  ${l}`));
  lines.push(
    '',
    'body:',
    ...prettyBody(message.body)
      .split('\n')
      .map((l) => `  ${l}`),
  );
  return terminalLines(lines);
}

/**
 * Why a dead letter has no evidence attributes. Two causes: SQS moved it (receive count above
 * `maxReceiveCount`: a crash, a timeout, throttling), or the worker dead-lettered it with no room
 * for them: body and attributes share SQS's 1 MiB (1,048,576 bytes) limit, and beside a body near
 * it the worker sends the body alone (lib/runtime/dead-letter.ts). The message cannot tell which;
 * a body within {@link NO_ROOM_BYTES} of the limit makes the worker the likely one, and its log
 * line `job dead-lettered` for the job says so.
 */
function noEvidenceLine(message: DeadLetterMessage): string {
  const bytes = utf8Bytes(message.body);
  const why =
    'no evidence attributes: SQS moved this message (receive count above maxReceiveCount: a crash, timeout or throttling), ' +
    'or the worker dead-lettered it with no room left for them beside its body';
  if (bytes < SQS_MAX_MESSAGE_BYTES - NO_ROOM_BYTES) return why;
  return `${why}; this body is ${bytes} bytes, near the ${SQS_MAX_MESSAGE_BYTES}-byte limit, so most likely the worker (its log has a "job dead-lettered" line for this job)`;
}

/** Room, in bytes, the evidence needs at least beside a body (the smallest set the worker keeps). */
const NO_ROOM_BYTES = 1_024;

/** JSON of one message for `show`. */
export function messageJson(message: DeadLetterMessage): unknown {
  const { receiptHandle: _receiptHandle, ...rest } = message;
  return {
    ...rest,
    sentAt: message.sentAtMs === undefined ? undefined : new Date(message.sentAtMs).toISOString(),
  };
}

function itemLine(item: RedriveItem): string {
  const parts = [item.messageId, item.jobId ? `job ${item.jobId}` : 'no job id', item.jobType, item.reason];
  if (item.messageGroupId !== undefined) parts.push(`group ${item.messageGroupId}`);
  return `  ${parts.join('  ')}`;
}

/** Text of `redrive`: plan, what moved (or would), what failed, counts, notes. */
export function renderRedrive(result: RedriveResult): string {
  const { plan } = result;
  const lines: string[] = [];
  lines.push(
    `${result.dryRun ? 'dry run: ' : ''}redrive ${plan.filter}${plan.max === undefined ? '' : ` (at most ${plan.max})`}`,
    `  from ${plan.dlq.name} (${kind(plan.dlq)}) ${plan.dlq.url}`,
    `  to   ${plan.target.name} (${kind(plan.target)}) ${plan.target.url}`,
  );
  for (const warning of plan.warnings) lines.push(`warning: ${warning}`);
  if (result.stoppedBy === 'declined') {
    lines.push('', 'not confirmed: nothing read, nothing moved');
    return terminalLines(lines);
  }
  if (result.dryRun) {
    lines.push('', `would move ${plural(result.selected.length, 'message')} (nothing was sent or deleted):`);
    lines.push(...result.selected.map(itemLine));
  } else {
    if (result.moved.length > 0)
      lines.push('', `moved ${plural(result.moved.length, 'message')}:`, ...result.moved.map(itemLine));
    if (result.failed.length > 0) {
      lines.push('', `failed ${plural(result.failed.length, 'message')} (still in the DLQ):`);
      for (const f of result.failed) lines.push(`${itemLine(f)}  ${f.code}: ${f.message}`);
    }
    if (result.notDeleted.length > 0) {
      lines.push(
        '',
        `sent but NOT deleted from the DLQ (${result.notDeleted.length}; the job is in both queues):`,
      );
      for (const f of result.notDeleted) lines.push(`${itemLine(f)}  ${f.code}: ${f.message}`);
    }
  }
  lines.push('', ...redriveCountLines(result));
  const notes: string[] = [];
  if (result.stoppedBy === 'max') notes.push(`stopped at --max ${plan.max}`);
  if (result.stoppedBy === 'aborted') notes.push('interrupted: the counts above are what happened before');
  if (result.notRead > 0 && plan.dlq.fifo) {
    notes.push(
      `about ${plural(result.notRead, 'message')} in the DLQ were not read: on a FIFO queue a group's later messages stay ` +
        'locked behind its first ones' +
        (result.dryRun
          ? '; a real run moves a group in order and applies the same filter to them'
          : ' that stay in the DLQ (not selected, or failed), so any of them the filter matches was not moved'),
    );
  } else if (result.notRead > 0 && result.stoppedBy === 'end') {
    notes.push(
      `about ${plural(result.notRead, 'message')} reported at the start were not seen (counts are approximate)`,
    );
  }
  if (plan.dlq.approximateNotVisible > 0) {
    notes.push(
      `${plan.dlq.approximateNotVisible} DLQ messages were in flight at the start (held by another reader) and were not read`,
    );
  }
  notes.push(...releaseNotes(result.release));
  if (notes.length > 0) lines.push(...notes.map((n) => `note: ${n}`));
  return terminalLines(lines);
}

/**
 * The counts of a redrive, worded so that they add up: `selected` = moved + failed + sent but not
 * deleted (a dry run moves none); what was read and left in the DLQ is counted apart, by why, and
 * the copies that came back during the redrive are not part of the selection. FIFO matches stuck
 * behind an earlier message of their group get a line of their own: they did not move.
 */
export function redriveCountLines(result: RedriveResult): string[] {
  const count = (why: SkippedItem['why'], matches?: boolean) =>
    result.skipped.filter(
      (s) => s.why === why && (matches === undefined || (s.matchesFilter ?? false) === matches),
    ).length;
  const selected = result.dryRun
    ? `selected ${result.selected.length}, moved 0 (dry run)`
    : `selected ${result.selected.length}, moved ${result.moved.length}, failed ${result.failed.length}` +
      (result.notDeleted.length > 0 ? `, sent but not deleted ${result.notDeleted.length}` : '');
  const stuck = count('group-blocked', true);
  const left = [
    [count('not-selected') + count('group-blocked', false), 'not selected'],
    [stuck, 'matched but stuck behind their group'],
    [count('came-back'), 'copies that came back during this redrive (not moved again)'],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, label]) => `${n} ${label}`);
  const lines = [`${selected}${left.length > 0 ? `; left in the DLQ: ${left.join(', ')}` : ''}`];
  if (stuck > 0) {
    lines.push(
      `${result.dryRun ? 'would not move' : 'not moved'}: ${plural(stuck, 'matching message')}, each behind an earlier message of its FIFO group that stays in the DLQ ` +
        '(not selected, failed or came back): moving it would run the group out of order. Widen the filter to take the earlier ones, or deal with them first',
    );
  }
  return lines;
}

/** JSON of `redrive`. */
export function redriveJson(result: RedriveResult, verify?: VerifyRedriveResult): unknown {
  const { seenMessageIds: _seen, ...rest } = result;
  return {
    ...rest,
    counts: {
      selected: result.selected.length,
      moved: result.moved.length,
      failed: result.failed.length,
      skipped: result.skipped.length,
      notDeleted: result.notDeleted.length,
    },
    ...(verify === undefined ? {} : { verify }),
  };
}

/**
 * The command that moves the parked jobs a FIFO redrive left first of their groups
 * (lib/ops/redrive/stranded-parks.ts), whole groups in DLQ order, those hidden behind them included: a
 * redrive of reason `GroupParked`. It moves every group whose first DLQ message is `GroupParked`
 * (a group whose blocker is still in the DLQ starts with the blocker and stays); a job whose
 * group is still parked is dead-lettered again, behind its blocker. It asks for confirmation on a
 * terminal; `--yes` from a script. `targetUrl` undefined: `"$QUEUE"` stands for it.
 */
export function strandedParkedCommand(dlqUrl: string, targetUrl: string | undefined): string {
  const target = targetUrl === undefined ? '"$QUEUE"' : shellWord(targetUrl);
  return `sqs-jobs dlq redrive --dlq-url ${shellWord(dlqUrl)} --target-url ${target} --reason ${GROUP_PARKED_REASON}`;
}

/**
 * Note after a FIFO redrive that moved messages and will not be verified: a job dead-lettered as
 * `GroupParked` after the read stays in the DLQ once its blocker completes, and only a later look
 * can find it.
 */
export function renderUnverifiedParks(result: RedriveResult): string {
  return terminalLines([
    "note: FIFO, onDeadLetter 'park': a job of a moved group dead-lettered as GroupParked after this read " +
      '(sent while the redrive ran) stays in the DLQ once its blocker completes. --verify-seconds finds and moves ' +
      `such jobs; once the moved jobs ran, this moves them: ${strandedParkedCommand(result.plan.dlq.url, result.plan.target.url)}`,
  ]);
}

/** Text of the verification after a redrive. */
export function renderVerify(verify: VerifyRedriveResult, waitedSeconds: number): string {
  const lines: string[] = [];
  lines.push(
    `verify after ${waitedSeconds} s: ${verify.cameBack.length} of ${plural(verify.redrivenJobs, 'redriven job')} came back to the DLQ`,
  );
  for (const c of verify.cameBack) {
    lines.push(
      `  job ${c.redriven.jobId ?? c.redriven.jobKey}  ${c.redriven.jobType}  now ${c.messageId}: ${c.reason}` +
        (c.errorMessage ? ` (${cutText(oneLine(c.errorMessage), 200)})` : ''),
    );
  }
  lines.push(...strandedParkedLines(verify.strandedParked));
  if (verify.targetPending !== undefined && verify.targetPending > 0) {
    lines.push(
      `note: ${plural(verify.targetPending, 'message is', 'messages are')} still in the target queue: ` +
        'jobs may not have run yet; check again later with `sqs-jobs dlq list`',
    );
  }
  if (verify.unverified.length > 0) {
    lines.push(
      `not verified: ${plural(verify.unverified.length, 'redriven job')}: in the FIFO DLQ ${verify.unverified.length === 1 ? 'its' : 'their'} message group starts with another message, ` +
        'and a job that comes back goes behind it, where SQS hands out nothing without deleting that first message:',
    );
    for (const u of verify.unverified) {
      lines.push(
        `  job ${u.redriven.jobId ?? u.redriven.jobKey}  ${u.redriven.jobType}  group ${u.messageGroupId}, behind ${u.behindMessageId}`,
      );
    }
    lines.push(
      '  redrive the rest of the group (or deal with its first message) and verify again, or look the jobs up (sqs-jobs console, Jobs)',
    );
  }
  if (verify.notRead > 0)
    lines.push(`note: about ${verify.notRead} DLQ messages could not be read (see list)`);
  if (
    verify.cameBack.length === 0 &&
    verify.unverified.length === 0 &&
    verify.strandedParked.left.length === 0 &&
    verify.strandedParked.failed.length === 0 &&
    (verify.targetPending ?? 0) === 0
  )
    lines.push('nothing came back');
  return terminalLines(lines);
}

/** Lines of the verification about parked jobs a park the redrive was clearing left behind. */
function strandedParkedLines(stranded: VerifyRedriveResult['strandedParked']): string[] {
  const lines: string[] = [];
  const jobLine = (item: RedriveItem) =>
    `  ${item.messageId}  job ${item.jobId ?? item.jobKey}  ${item.jobType}  group ${item.messageGroupId ?? '-'}`;
  if (stranded.moved.length > 0) {
    lines.push(
      `moved ${plural(stranded.moved.length, 'parked job')} dead-lettered as GroupParked after the redrive read ` +
        `${stranded.moved.length === 1 ? 'its' : 'their'} group (sent while it ran), in group order:`,
      ...stranded.moved.map((m) => `${jobLine(m)}  now ${m.targetMessageId}`),
    );
  }
  if (stranded.failed.length > 0) {
    lines.push(
      `could not move ${plural(stranded.failed.length, 'parked job')} (still in the DLQ, or sent but not deleted):`,
      ...stranded.failed.map((f) => `${jobLine(f)}  ${f.code}: ${f.message}`),
    );
  }
  if (stranded.left.length > 0) {
    lines.push(
      `still in the DLQ: ${plural(stranded.left.length, 'GroupParked job')} first of a group this redrive moved: ` +
        'nothing of the group is ahead of it, so once its blocker completes nothing holds it there ' +
        '(more of the group may be behind it):',
      ...stranded.left.map(jobLine),
      `  move them (and what is behind them), in order: ${stranded.command ?? ''}`,
    );
  }
  return lines;
}
