/**
 * Text of `sqs-jobs schedules list|show|cancel|fire` (lib/ops/schedules.ts reads, this renders).
 * Times are shown in UTC and in the zone that matters: a pending job's in the operator's local
 * zone (`localTimeZone`), a recurring schedule's in its own `ScheduleExpressionTimezone`.
 */
import { wallClockOf } from '../core/schedule-expression.ts';
import type { FiredSchedule } from './fire-schedule.ts';
import type {
  CancelScheduledJobResult,
  FiringView,
  PendingJob,
  RecurringDetail,
  RecurringScheduleView,
  ScheduledJobDetail,
  SchedulesList,
} from './schedules.ts';
import { terminalField, terminalLines } from './terminal-text.ts';

/** `2026-12-01T23:00:00Z (2026-12-02 00:00:00 Europe/Berlin)`. */
export function bothTimes(iso: string, timeZone: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return terminalField(iso);
  const utc = `${date.toISOString().slice(0, 19)}Z`;
  if (timeZone === 'UTC') return utc;
  return `${utc} (${wallClockOf(date, timeZone).replace('T', ' ')} ${timeZone})`;
}

function pendingLine(job: PendingJob, localTimeZone: string): string {
  const forWhom = job.partitionKey === undefined ? '' : ` for ${terminalField(job.partitionKey)}`;
  const via = job.via === 'schedule' ? `schedule ${job.scheduleName ?? '?'}` : 'SQS delay';
  const generation =
    job.generation !== undefined && job.generation > 1 ? `, rescheduled (generation ${job.generation})` : '';
  return `  ${bothTimes(job.runAt, localTimeZone)}  ${terminalField(job.type)}${forWhom}  id ${terminalField(job.jobId)} (source ${terminalField(job.source)}, queue ${terminalField(job.queue)}, via ${via}${generation})`;
}

function recurringLines(s: RecurringScheduleView): string[] {
  const lines = [
    `  ${terminalField(s.groupName)}/${terminalField(s.name)}: ${terminalField(s.expression)} in ${s.timeZone}, ${s.state}` +
      (s.jobType === undefined ? '' : `, job ${terminalField(s.jobType)}`) +
      (s.partitionKey === undefined ? '' : ` for ${terminalField(s.partitionKey)}`) +
      (s.queueName === undefined ? '' : ` → queue ${terminalField(s.queueName)}`),
  ];
  if (s.nextFiringsError !== undefined) lines.push(`    next firings: cannot tell (${s.nextFiringsError})`);
  else if (s.state === 'DISABLED') lines.push('    next firings: none (disabled)');
  else if (s.nextFirings.length === 0) lines.push('    next firings: none (past its end date)');
  else lines.push(`    next: ${s.nextFirings.map((f) => bothTimes(f.at, s.timeZone)).join(', ')}`);
  return lines;
}

/** `schedules list` as text. */
export function renderSchedulesList(list: SchedulesList, localTimeZone: string): string {
  const lines = [
    `pending one-time jobs (${list.pending.length}), earliest first, times in ${localTimeZone === 'UTC' ? 'UTC' : `UTC and ${localTimeZone}`}:`,
  ];
  if (list.pending.length === 0) lines.push('  none');
  for (const job of list.pending) lines.push(pendingLine(job, localTimeZone));
  lines.push(
    '',
    `recurring schedules (${list.recurring.length}) of group${list.groups.length === 1 ? '' : 's'} ${list.groups.join(', ') || '(none)'}, next firings in their time zone:`,
  );
  if (list.recurring.length === 0) lines.push('  none');
  for (const s of list.recurring) lines.push(...recurringLines(s));
  for (const note of list.notes) lines.push(`note: ${note}`);
  return terminalLines(lines);
}

function firingLine(f: FiringView): string {
  const error = f.lastError === undefined ? '' : `; last error ${terminalField(f.lastError)}`;
  const ended = f.endedAt === undefined ? '' : `, ended ${f.endedAt}`;
  return `    ${terminalField(f.jobId)}${f.manual ? ' (fired by an operator)' : ''}: ${f.outcome}, attempt ${f.attempts}${ended}${error}`;
}

function scheduleDetailLines(s: RecurringScheduleView): string[] {
  const retry = s.retryPolicy;
  return [
    `  schedule:    ${terminalField(s.groupName)}/${terminalField(s.name)} (${s.arn})`,
    `  expression:  ${terminalField(s.expression)} in ${s.timeZone}, ${s.state}`,
    ...(s.description === undefined ? [] : [`  description: ${terminalField(s.description)}`]),
    `  target:      ${s.targetArn}${s.messageGroupId === undefined ? '' : ` (MessageGroupId ${terminalField(s.messageGroupId)})`}`,
    `  retries:     ${retry.maximumRetryAttempts ?? '185 (AWS default)'} attempts within ${retry.maximumEventAgeSeconds ?? '86400 (AWS default)'} s, then ${s.deadLetterArn === undefined ? 'dropped (no dead-letter queue)' : `dead-letter queue ${s.deadLetterArn}`}`,
    ...(s.flexibleWindowMinutes === undefined
      ? []
      : [`  window:      flexible, up to ${s.flexibleWindowMinutes} min late`]),
    ...(s.startDate === undefined && s.endDate === undefined
      ? []
      : [`  active:      from ${s.startDate ?? 'creation'} until ${s.endDate ?? 'deleted'}`]),
    `  input:       ${terminalField(s.input)}`,
  ];
}

/** `schedules show` as text. */
export function renderScheduleDetail(
  detail: RecurringDetail | ScheduledJobDetail,
  localTimeZone: string,
): string {
  if (detail.kind === 'recurring') {
    const s = detail.schedule;
    const lines = [`recurring schedule ${terminalField(s.name)}:`, ...scheduleDetailLines(s)];
    lines.push(
      ...recurringLines(s)
        .slice(1)
        .map((line) => line.replace(/^ {4}/, '  ')),
    );
    lines.push(
      `  recent firings (${detail.firings.length}), newest first, by the job each sent (id <name>@<scheduled time>):`,
    );
    if (detail.firings.length === 0) lines.push('    none found');
    for (const f of detail.firings) lines.push(firingLine(f));
    if (detail.firingsNote !== undefined) lines.push(`  note: ${detail.firingsNote}`);
    return terminalLines(lines);
  }
  const { state } = detail;
  const lines = [
    `job sent for later ${terminalField(state.jobId)}:`,
    `  state:       ${state.state}, generation ${state.generation}`,
    `  runs at:     ${bothTimes(state.runAt, localTimeZone)}`,
    `  job:         ${terminalField(state.type)}${state.partitionKey === undefined ? '' : ` for ${terminalField(state.partitionKey)}`}`,
    `  source:      ${terminalField(state.source)}`,
    `  queue:       ${terminalField(state.queue)}`,
    `  via:         ${state.via === 'schedule' ? `one-time schedule ${state.scheduleName ?? '?'}` : 'SQS message with DelaySeconds'}`,
  ];
  if (detail.schedule !== undefined) lines.push(...scheduleDetailLines(detail.schedule));
  else if (state.via === 'schedule')
    lines.push(
      '  schedule:    gone (it fired, or was deleted by a cancel: one-time schedules delete themselves)',
    );
  if (detail.envelope !== undefined)
    lines.push(`  envelope:    ${terminalField(JSON.stringify(detail.envelope))}`);
  return terminalLines(lines);
}

/** `schedules cancel` as text. */
export function renderCancel(result: CancelScheduledJobResult): string {
  switch (result.status) {
    case 'cancelled':
      return `cancelled job ${terminalField(result.id)} (${terminalField(result.type ?? '?')} on queue ${terminalField(result.queue)}, due ${result.runAt}): it will not run${result.scheduleDeleted ? '; its schedule was deleted' : '; a message of it that still arrives is recorded as cancelled'}\n`;
    case 'already-cancelled':
      return `job ${terminalField(result.id)} was already cancelled (due ${result.runAt}): it will not run\n`;
    case 'already-started':
      return `job ${terminalField(result.id)} has already started (due ${result.runAt}): too late to cancel; it runs to its end, retries included\n`;
    default:
      return `no job sent for later with id ${terminalField(result.id)}: never sent for later, sent to another table, or its state expired 14 days after its time\n`;
  }
}

/** `schedules fire` as text. */
export function renderFired(name: string, fired: FiredSchedule): string {
  const copies = fired.messageIds.length;
  return (
    `fired ${terminalField(name)} now: sent job ${terminalField(fired.jobId ?? '(Input has no id)')} to ${fired.queueUrl}` +
    `${copies > 1 ? ` (${copies} copies: the duplicate runs once)` : ''}\n` +
    `  scheduled time ${fired.scheduledTime} has milliseconds, which a real firing never has: this job never collides with the schedule's own firing\n`
  );
}
