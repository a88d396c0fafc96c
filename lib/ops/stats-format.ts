/**
 * Text and JSON renderings of queue statistics for `sqs-jobs stats`. Text is for people (a table
 * and `note:` lines); `--json` is for scripts (one document, or one line per refresh with `--watch`).
 */
import type { QueueStats, QueueStatsReport } from './stats.ts';
import { terminalLines } from './terminal-text.ts';

/**
 * A duration in seconds for people: `45s`, `3m 12s`, `2h 05m`, `3d 4h`.
 * @param seconds >= 0; fractions are dropped.
 */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3_600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400)
    return `${Math.floor(s / 3_600)}h ${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3_600)}h`;
}

function oldestCell(queue: QueueStats): string {
  const age = queue.oldestMessageAge;
  if (age.seconds === null) return 'n/a';
  // The datapoint's minute (UTC): CloudWatch trails the counts.
  return `${formatAge(age.seconds)} @${age.at?.slice(11, 16) ?? '?'}Z`;
}

function dlqCell(queue: QueueStats): string {
  const dlq = queue.deadLetterQueue;
  if (dlq === null) return queue.deadLetterQueueNote?.startsWith('no redrive policy') ? 'none' : 'unknown';
  const extra = [
    dlq.inFlight > 0 ? `+${dlq.inFlight} in flight` : '',
    dlq.delayed > 0 ? `+${dlq.delayed} delayed` : '',
  ].filter((s) => s !== '');
  return `${dlq.name}: ${dlq.visible}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

function table(rows: readonly string[][], rightAligned: ReadonlySet<number>): string[] {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows.map((row) =>
    row
      .map((cell, col) =>
        col === row.length - 1
          ? cell
          : rightAligned.has(col)
            ? cell.padStart(widths[col]!)
            : cell.padEnd(widths[col]!),
      )
      .join('  ')
      .trimEnd(),
  );
}

/** The notes under the table: why ages or DLQs are missing, each said once. */
export function statsNotes(report: QueueStatsReport): string[] {
  const notes = new Map<string, string[]>();
  const add = (note: string, queue: string) => notes.set(note, [...(notes.get(note) ?? []), queue]);
  for (const queue of report.queues) {
    if (queue.oldestMessageAge.note !== undefined)
      add(`oldest: n/a: ${queue.oldestMessageAge.note}`, queue.name);
    if (queue.deadLetterQueueNote !== undefined) add(queue.deadLetterQueueNote, queue.name);
  }
  const lines = [...notes].map(([note, queues]) =>
    queues.length === report.queues.length && report.queues.length > 1
      ? note
      : `${queues.join(', ')}: ${note}`,
  );
  if (report.queues.some((q) => q.oldestMessageAge.source === 'cloudwatch')) {
    lines.push(
      'oldest: CloudWatch ApproximateAgeOfOldestMessage, Maximum of the latest 1-minute datapoint (@ its minute, UTC); it trails the counts',
    );
  }
  return lines;
}

/** The report as a table with notes. */
export function renderStats(report: QueueStatsReport): string {
  if (report.queues.length === 0) return `queue stats at ${report.at}: no queues\n`;
  const rows = [
    ['queue', 'type', 'visible', 'in flight', 'delayed', 'oldest', 'dead-letter queue: visible'],
    ...report.queues.map((q) => [
      q.name,
      q.fifo ? 'FIFO' : 'standard',
      String(q.visible),
      String(q.inFlight),
      String(q.delayed),
      oldestCell(q),
      dlqCell(q),
    ]),
  ];
  const lines = [
    `queue stats at ${report.at} (counts are approximate, as SQS reports them)`,
    ...table(rows, new Set([2, 3, 4])),
    ...statsNotes(report).map((note) => `note: ${note}`),
  ];
  return terminalLines(lines);
}

/**
 * The report for scripts: `{ at, queues: [{ name, url, arn, fifo, visible, inFlight, delayed,
 * oldestMessageAge: { seconds, source, at, note? }, deadLetterQueue: { name, url, arn,
 * maxReceiveCount, visible, inFlight, delayed } | null, deadLetterQueueNote? }] }`.
 */
export function statsJson(report: QueueStatsReport): unknown {
  return {
    at: report.at,
    queues: report.queues.map((q) => ({
      name: q.name,
      url: q.url,
      arn: q.arn ?? null,
      fifo: q.fifo,
      visible: q.visible,
      inFlight: q.inFlight,
      delayed: q.delayed,
      oldestMessageAge: q.oldestMessageAge,
      deadLetterQueue: q.deadLetterQueue,
      ...(q.deadLetterQueueNote === undefined ? {} : { deadLetterQueueNote: q.deadLetterQueueNote }),
    })),
  };
}
