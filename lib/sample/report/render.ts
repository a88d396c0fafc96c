/**
 * The text of a local run's report (build.ts computes it): plain text, no colours, for a terminal
 * or a log, one section per function in the order printed.
 */
import { describeDeadLetterJob } from './dead-letters.ts';
import { flowControlLines } from './flow-control.ts';
import type { RunReport } from './run-report.ts';
import { scheduleLines } from './schedules.ts';

const ms = (value: number | undefined): string =>
  value === undefined
    ? 'n/a'
    : value >= 10_000
      ? `${(value / 1000).toFixed(1)} s`
      : `${Math.round(value)} ms`;
const seconds = (value: number): string => `${(value / 1000).toFixed(1)} s`;

/** Aligns columns: the first and any listed in `left` are left-aligned, the rest right-aligned. */
function table(rows: readonly (readonly string[])[], indent = '  ', left: readonly number[] = []): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) =>
          i === 0 || left.includes(i) ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0),
        )
        .join('  ')
        .trimEnd(),
  );
}

/**
 * Why an unfinished run could not complete, and what to do (one line); undefined when it completed.
 * `timeoutSeconds` is the deadline the run had, when known.
 */
export function unfinishedMessage(report: RunReport, timeoutSeconds?: number): string | undefined {
  if (report.complete) return undefined;
  if (report.interrupted) {
    return `not finished: interrupted (Ctrl-C) with ${report.jobs.unfinished} jobs still queued/in flight; they are not counted as lost. Run again without interrupting to let the run complete.`;
  }
  const deadline = timeoutSeconds === undefined ? '' : ` of ${timeoutSeconds} s`;
  return (
    `not finished: the deadline${deadline} (--timeout-seconds) was reached with ${report.jobs.unfinished} ` +
    `jobs still queued/in flight; they are not counted as lost. Raise --timeout-seconds to let the run complete.`
  );
}

/** Renders the report as plain text (no colours), for a terminal or a log. */
export function renderReport(report: RunReport, options: { timeoutSeconds?: number } = {}): string {
  const out = [
    'sqs-jobs local run report',
    '',
    ...jobLines(report),
    ...deadLetterLines(report),
    '',
    ...figureLines(report),
    '',
    'Invariants:',
    ...invariantLines(report),
    ...detailLines(report),
    '',
    ...resultLines(report, options.timeoutSeconds),
  ];
  return `${out.join('\n')}\n`;
}

/** Jobs in all by final state, then by job type (a "not finished" column when any is). */
function jobLines(report: RunReport): string[] {
  const { jobs } = report;
  const showUnfinished = !report.complete || jobs.unfinished > 0;
  return [
    `Jobs: ${jobs.total} (${jobs.sent} sent by the workload, ${jobs.enqueued} enqueued by jobs)` +
      (report.complete && jobs.lost === 0
        ? ` = ${jobs.completed} completed + ${jobs.deadLettered} dead-lettered`
        : ''),
    ...table([
      ['completed', String(jobs.completed)],
      ['dead-lettered', String(jobs.deadLettered)],
      ...(showUnfinished
        ? [
            [
              `not finished (${report.interrupted ? 'interrupted' : 'deadline reached'})`,
              String(jobs.unfinished),
            ],
          ]
        : []),
      ['lost', report.complete ? String(jobs.lost) : 'not checked'],
      ['retried', `${jobs.retriedJobs} jobs, ${jobs.retries} retries`],
    ]),
    '',
    'By job type:',
    ...table([
      [
        'type',
        'total',
        'completed',
        'dead-lettered',
        ...(showUnfinished ? ['not finished'] : []),
        'lost',
        'retries',
      ],
      ...Object.entries(jobs.byType)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([type, r]) => [
          type,
          String(r.total),
          String(r.completed),
          String(r.deadLettered),
          ...(showUnfinished ? [String(r.unfinished)] : []),
          String(r.lost),
          String(r.retries),
        ]),
    ]),
    '',
  ];
}

/** Dead letters by cause, each with an example error and, when known, an example job. */
function deadLetterLines(report: RunReport): string[] {
  const out: string[] = [];
  const { total, copies } = report.deadLetters;
  out.push(
    copies === 0
      ? `Dead-lettered by cause (${total}):`
      : `Dead-lettered by cause (${total} messages, ${total - copies} jobs: ${copies} a second DLQ message of one job, its DLQ send repeated after a lost response):`,
  );
  if (report.deadLetters.byCause.length === 0) out.push('  none');
  else {
    const rows = table(
      report.deadLetters.byCause.map((c) => [
        c.cause,
        String(c.count),
        c.expected === c.count ? 'expected' : `${c.count - c.expected} unexplained`,
        c.example === undefined ? '' : `e.g. "${c.example}"`,
      ]),
      '  ',
      [2, 3],
    );
    // Each cause's example job and its chain under its row (sqs-jobs job prints the whole chain).
    rows.forEach((line, i) => {
      out.push(line);
      const job = report.deadLetters.byCause[i]?.exampleJob;
      if (job !== undefined) out.push(`      ${describeDeadLetterJob(job)}`);
    });
  }
  return out;
}

/** Duplicates, side effects, order, faults, latency, throughput and the rest, one line each. */
function figureLines(report: RunReport): string[] {
  return [
    `Duplicate deliveries absorbed: ${report.duplicatesAbsorbed ?? 'not measured'}${report.duplicatesSource ? ` (${report.duplicatesSource})` : ''}`,
    `Side effects: ${report.sideEffects.total} over ${report.sideEffects.keys} idempotency keys, at most ${report.sideEffects.maxPerKey} per key`,
    `Order: ${report.order.stepsChecked} booking steps of ${report.order.usersChecked} users checked, ${report.order.violations.length} violations`,
    ...report.order.violations.slice(0, 5).map((v) => `  ${v.userId}: ${v.description}`),
    `Faults injected: ${report.faultsInjected.total}` +
      (report.faultsInjected.total > 0
        ? ` (${Object.entries(report.faultsInjected.byKind)
            .filter(([, n]) => n > 0)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')})`
        : ''),
    `Latency, sent/enqueued to completed: p50 ${ms(report.latency.p50Ms)}, p95 ${ms(report.latency.p95Ms)}, p99 ${ms(report.latencyP99Ms)}, max ${ms(report.latency.maxMs)} over ${report.latency.count} jobs`,
    `Throughput: ${report.throughputPerSecond.toFixed(1)} jobs/s`,
    ...(report.schedules === undefined ? [] : scheduleLines(report.schedules)),
    ...(report.producerRetries === undefined
      ? []
      : [
          `Producer batches sent again by JobClient (after the SDK's own retries): ${report.producerRetries}`,
        ]),
    ...(report.partnerRateLimit === undefined
      ? []
      : [
          `Partner API rate limit (${report.partnerRateLimit.requestsPerSecond}/s per tenant, burst ${report.partnerRateLimit.burst}): ${report.partnerRateLimit.rejected}${report.partnerRateLimit.requests === undefined ? '' : ` of ${report.partnerRateLimit.requests}`} requests answered 429 and retried, from ${report.partnerRateLimit.tenantsLimited} tenants`,
        ]),
    ...flowControlLines(report.flowControl),
    ...(report.idempotency
      ? [
          `Idempotency records at the end: ${report.idempotency.records} (${
            Object.entries(report.idempotency.byStatus)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([status, n]) => `${status} ${n}`)
              .join(', ') || 'none'
          })`,
        ]
      : []),
    ...(report.workerMetrics
      ? [
          `Worker metrics: ${['JobCompleted', 'JobRetried', 'JobDeadLettered', 'JobDuplicateAbsorbed']
            .map((name) => `${name} ${report.workerMetrics?.[name] ?? 0}`)
            .join(', ')}`,
        ]
      : []),
    `Wall time: ${seconds(report.wallTimeMs)} (boot ${seconds(report.wallTimeMs - report.workloadMs)}, workload ${seconds(report.workloadMs)})${report.interrupted ? ' — INTERRUPTED (Ctrl-C)' : report.timedOut ? ' — DEADLINE REACHED' : ''}`,
  ];
}

/** One line per invariant: PASS, FAIL, WARN (a warning) or SKIP, what was found and expected. */
function invariantLines(report: RunReport): string[] {
  return table(
    report.invariants.map((i) => [
      `${i.skipped !== undefined ? 'SKIP' : i.ok ? 'PASS' : i.severity === 'warning' ? 'WARN' : 'FAIL'}  ${i.name}`,
      i.actual,
      i.skipped !== undefined ? `(${i.skipped})` : `(expected ${i.expected})`,
    ]),
  );
}

/** The lost jobs and the keys and jobs with wrong side effects, when there are any. */
function detailLines(report: RunReport): string[] {
  const out: string[] = [];
  if (report.jobs.lostExamples.length > 0) out.push('', `Lost jobs: ${report.jobs.lostExamples.join(', ')}`);
  if (report.sideEffects.keysOverOne.length > 0)
    out.push(`Keys with repeated side effects: ${report.sideEffects.keysOverOne.join(', ')}`);
  if (report.sideEffects.duplicated.length > 0)
    out.push(`Duplicated side effects: ${report.sideEffects.duplicated.join(', ')}`);
  if (report.sideEffects.missing.length > 0)
    out.push(`Missing side effects: ${report.sideEffects.missing.join(', ')}`);
  return out;
}

/** The RESULT lines: an invariant failed, the run did not finish, or all holds. */
function resultLines(report: RunReport, timeoutSeconds: number | undefined): string[] {
  const out: string[] = [];
  const unfinished = unfinishedMessage(report, timeoutSeconds);
  if (report.failed) out.push('RESULT: INVARIANT FAILED');
  if (unfinished !== undefined) out.push(`RESULT: ${unfinished}`);
  if (report.ok) out.push('RESULT: all invariants hold');
  return out;
}
