/**
 * The report of a local run (`npm start`): a pure function from the facts collected after the
 * run to a report object, and a text renderer. Nothing here does I/O, so every figure and every
 * invariant is unit-tested on hand-made facts.
 *
 * Invariants (the run fails when any does not hold):
 * 1. no job lost: every job sent or enqueued ended completed or dead-lettered, once every queue
 *    is empty. When the deadline passes first, the jobs not final yet are `unfinished`, not lost:
 *    the run is incomplete (not a pass, not an invariant failure) and this invariant is skipped;
 * 2. one side effect per idempotency key, and exactly one per completed job that calls an
 *    external API (none missing, none duplicated);
 * 3. no per-user order violation on the FIFO queue;
 * 4. (when `requireDeadLetterEvidence`) every dead letter carries the worker's evidence
 *    (`ErrorName`, `ErrorReason`, `Attempts`): a message moved by the queue's redrive policy
 *    behind the worker's back has none;
 * 5. (when the idempotency tables were scanned at the end) no record is still `IN_PROGRESS` past
 *    its lease: nothing will ever take it over once the queues drained (skipped at the deadline);
 * 6. (when `requireDeadLetterEvidence` and the workers' metrics were collected) the workers'
 *    `JobDeadLettered` metric counts at least every dead-lettered job: a dead letter never goes
 *    uncounted, crashes included (a job dead-lettered twice, e.g. after a lost response, may
 *    count twice; skipped at the deadline).
 *
 * Warning (shown, does not fail the run): a dead letter that is neither a deliberate bad
 * message, an out-of-stock booking, nor a fault the fake service injected into that very job.
 * On an overloaded machine real timeouts can use up a job's attempts; the system then did the
 * right thing (retried, then dead-lettered with evidence), but the cause deserves a look.
 */
import type { OrderLog } from '../domain.ts';
import { BOOKING_STEPS } from '../domain.ts';
import type { IdempotencyRecordSummary } from '../workload/idempotency-records.ts';

/**
 * Final state of a job at the end of a run: `lost` = neither completed nor dead-lettered once
 * every queue drained; `unfinished` = not final yet when the deadline passed (still queued or in
 * flight, or its chain had not reached it).
 */
export type JobState = 'completed' | 'dead-lettered' | 'lost' | 'unfinished';

/** What is known about one job (sent by the workload or enqueued by another job). */
export interface JobOutcome {
  /** Stable identity within the run, e.g. `booking.issue-invoice:b-7`. */
  readonly key: string;
  readonly type: string;
  /** Logical queue name. */
  readonly queue: string;
  /** `sent` by the workload, or `enqueued` by a job it chained from. */
  readonly origin: 'sent' | 'enqueued';
  readonly state: JobState;
  /** When the job came into being (sent, or its parent completed), epoch ms. */
  readonly startedAtMs?: number;
  /** When it completed, epoch ms. */
  readonly completedAtMs?: number;
  /** Runs it took: the attempt that completed it, or the `Attempts` of its DLQ evidence. */
  readonly attempts?: number;
  /** The fake service's reference of the side effect this job performs, if it calls one. */
  readonly sideEffectReference?: string;
}

/** A dead-lettered message as read from a DLQ, with its evidence attributes. */
export interface DeadLetterFact {
  /** Logical name of the queue whose DLQ holds it. */
  readonly queue: string;
  /** `JobType` attribute (absent for a body that was not an envelope). */
  readonly jobType?: string;
  /** `ErrorName` attribute. */
  readonly errorName?: string;
  /** `ErrorReason` attribute (the classification reason). */
  readonly errorReason?: string;
  /** `ErrorMessage` attribute. */
  readonly errorMessage?: string;
  /** `Attempts` attribute. */
  readonly attempts?: number;
  /** The job it belongs to, when it could be matched. */
  readonly jobKey?: string;
  /** Why it was meant to fail (deliberate bad message, out of stock, injected 400); undefined = unexplained. */
  readonly expectedBecause?: string;
}

/** Everything the report is computed from. */
export interface ReportFacts {
  /** When the workload started sending, epoch ms. */
  readonly startedAtMs: number;
  /** When the run ended (all jobs final, or the deadline), epoch ms. */
  readonly finishedAtMs: number;
  /** Time spent booting emulators and provisioning before the workload, ms. */
  readonly bootMs: number;
  /** True when the deadline passed before every job was final. */
  readonly timedOut: boolean;
  readonly jobs: readonly JobOutcome[];
  readonly deadLetters: readonly DeadLetterFact[];
  /** Per-user order logs of the booking steps, as recorded by the jobs. */
  readonly orderLogs: readonly OrderLog[];
  /** Side effects the fake service performed, per idempotency key and per business reference. */
  readonly sideEffects: {
    readonly byKey: Readonly<Record<string, number>>;
    readonly byReference: Readonly<Record<string, number>>;
  };
  /** Faults injected, by kind (fake service kinds, lost responses, deliberate bad messages...). */
  readonly faultsInjected: Readonly<Record<string, number>>;
  /** Duplicate deliveries the idempotency store absorbed; undefined when not measured. */
  readonly duplicatesAbsorbed: number | undefined;
  /** Where the duplicate count came from (for the text). */
  readonly duplicatesSource?: string;
  /** Sums of the workers' own metrics (`JobCompleted`, `JobRetried`, ...), shown for comparison. */
  readonly workerMetrics?: Readonly<Record<string, number>>;
  /**
   * Every dead letter must carry the worker's evidence (`ErrorName`, `ErrorReason`, `Attempts`):
   * an invariant when true. @default false
   */
  readonly requireDeadLetterEvidence?: boolean;
  /** The idempotency tables scanned at the end of the run; the stuck-record invariant when given. */
  readonly idempotency?: IdempotencyRecordSummary;
  /** Producer send retries (requests SQS did not take, sent again); undefined when not counted. */
  readonly producerRetries?: number;
  /**
   * The dead-lettered messages as read (body and evidence attributes), for the examples of each
   * cause: the body is the original envelope, which names the job and its chain (`causationid`,
   * `rootid`, `correlationid`, `traceparent`). Undefined: the examples show the error only.
   */
  readonly deadLetterMessages?: readonly {
    readonly body: string;
    readonly attributes: Readonly<Record<string, string>>;
  }[];
}

/** One checked invariant or warning. */
export interface InvariantResult {
  readonly name: string;
  /** `invariant`: the run fails when not ok; `warning`: shown only. */
  readonly severity: 'invariant' | 'warning';
  readonly ok: boolean;
  /** What was found, e.g. `0` or `2 (b-1, b-9)`. */
  readonly actual: string;
  readonly expected: string;
  /** Why it was not checked (e.g. the deadline was reached); `ok` is then false but it fails nothing. */
  readonly skipped?: string;
}

/** An order violation found in a user's log. */
export interface OrderViolation {
  readonly userId: string;
  readonly description: string;
}

/** Nearest-rank percentiles and extremes of a sample, in ms. */
export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number | undefined;
  readonly p95Ms: number | undefined;
  readonly maxMs: number | undefined;
}

/** The report of a run. */
export interface RunReport {
  /** The run completed (every job final before the deadline) and every invariant holds. */
  readonly ok: boolean;
  /** A checked invariant does not hold (a real failure, even in an unfinished run). */
  readonly failed: boolean;
  /** Every job reached a final state before the deadline (the queues drained). */
  readonly complete: boolean;
  readonly jobs: {
    readonly sent: number;
    readonly enqueued: number;
    readonly total: number;
    readonly completed: number;
    readonly deadLettered: number;
    readonly lost: number;
    /** Jobs not final when the deadline passed (0 when the run completed). */
    readonly unfinished: number;
    /** Jobs that needed more than one run. */
    readonly retriedJobs: number;
    /** Runs beyond the first, summed over all jobs. */
    readonly retries: number;
    readonly byType: Readonly<
      Record<
        string,
        {
          total: number;
          completed: number;
          deadLettered: number;
          lost: number;
          unfinished: number;
          retries: number;
        }
      >
    >;
    /** Keys of lost jobs (first 10). */
    readonly lostExamples: readonly string[];
  };
  readonly deadLetters: {
    readonly total: number;
    readonly byCause: readonly {
      cause: string;
      count: number;
      expected: number;
      /** The `ErrorMessage` of one of them, shortened. */
      example?: string;
      /** The job of one of them and its chain, from its body (when the facts have the messages). */
      exampleJob?: DeadLetterJob;
    }[];
    readonly unexplained: number;
    /** Dead letters without the worker's evidence attributes (no `ErrorName`, `ErrorReason` or `Attempts`). */
    readonly withoutEvidence: number;
  };
  readonly duplicatesAbsorbed: number | undefined;
  readonly duplicatesSource: string | undefined;
  readonly sideEffects: {
    readonly keys: number;
    readonly total: number;
    readonly maxPerKey: number;
    /** Keys with more than one side effect (first 10). */
    readonly keysOverOne: readonly string[];
    /** Completed jobs whose side effect happened more than once. */
    readonly duplicated: readonly string[];
    /** Completed jobs whose side effect never happened. */
    readonly missing: readonly string[];
  };
  readonly order: {
    readonly usersChecked: number;
    readonly stepsChecked: number;
    readonly violations: readonly OrderViolation[];
  };
  readonly latency: LatencySummary;
  /** 99th percentile (nearest rank) of the same latencies, ms. */
  readonly latencyP99Ms: number | undefined;
  /** The idempotency tables at the end, when scanned. */
  readonly idempotency: IdempotencyRecordSummary | undefined;
  /** Producer send retries, when counted. */
  readonly producerRetries: number | undefined;
  /** Completed jobs per second over the workload window. */
  readonly throughputPerSecond: number;
  /** From the first send to the end of the run, ms. */
  readonly workloadMs: number;
  /** Boot plus workload, ms. */
  readonly wallTimeMs: number;
  readonly timedOut: boolean;
  readonly faultsInjected: { readonly total: number; readonly byKind: Readonly<Record<string, number>> };
  /** The workers' own metric sums, when collected. */
  readonly workerMetrics: Readonly<Record<string, number>> | undefined;
  readonly invariants: readonly InvariantResult[];
}

/**
 * Nearest-rank percentile (the smallest value with at least `p`% of the sample at or below it).
 * @returns undefined for an empty sample.
 */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

/** Summarises latencies (any order) in ms. */
export function summariseLatency(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    maxMs: sorted.at(-1),
  };
}

/**
 * Finds per-user order violations in the booking logs: within a user, each step must see the
 * bookings in the order they were placed (ordinals increasing in log order), and each booking
 * must go reserve → confirm → invoice.
 */
export function findOrderViolations(logs: readonly OrderLog[]): OrderViolation[] {
  const violations: OrderViolation[] = [];
  for (const log of logs) {
    const highest = new Map<string, { ordinal: number; bookingId: string }>();
    const stepsSeen = new Map<string, number>();
    for (const entry of log.entries) {
      const prior = highest.get(entry.step);
      if (prior && entry.ordinal < prior.ordinal) {
        violations.push({
          userId: log.userId,
          description: `${entry.step} of booking #${entry.ordinal} (${entry.bookingId}) after booking #${prior.ordinal} (${prior.bookingId})`,
        });
      } else {
        highest.set(entry.step, { ordinal: entry.ordinal, bookingId: entry.bookingId });
      }
      const index = BOOKING_STEPS.indexOf(entry.step);
      const reached = stepsSeen.get(entry.bookingId) ?? -1;
      if (index !== reached + 1) {
        violations.push({
          userId: log.userId,
          description: `${entry.step} of booking ${entry.bookingId} after ${reached < 0 ? 'no step' : BOOKING_STEPS[reached]}`,
        });
      }
      stepsSeen.set(entry.bookingId, Math.max(reached, index));
    }
  }
  return violations;
}

/** A dead-lettered job and its chain, as its body (the original envelope) names them. */
export interface DeadLetterJob {
  readonly jobType?: string;
  readonly jobId: string;
  /** Envelope `causationid`: the job that enqueued it. */
  readonly parentJobId?: string;
  /** Envelope `rootid`; the job's own id for a root. */
  readonly rootJobId: string;
  readonly correlationId?: string;
  /** The trace id of the envelope's `traceparent`. */
  readonly traceId?: string;
}

/** The job of a dead-lettered body and its chain, or undefined for a body that is no envelope. */
export function deadLetterJobOf(body: string): DeadLetterJob | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const o = parsed as Record<string, unknown>;
  const text = (k: string) => (typeof o[k] === 'string' && o[k] !== '' ? (o[k] as string) : undefined);
  const jobId = text('id');
  if (jobId === undefined) return undefined;
  const traceparent = text('traceparent');
  const job: { -readonly [K in keyof DeadLetterJob]: DeadLetterJob[K] } = {
    jobId,
    rootJobId: text('rootid') ?? jobId,
  };
  const jobType = text('type');
  if (jobType !== undefined) job.jobType = jobType;
  const parentJobId = text('causationid');
  if (parentJobId !== undefined) job.parentJobId = parentJobId;
  const correlationId = text('correlationid');
  if (correlationId !== undefined) job.correlationId = correlationId;
  if (traceparent !== undefined && /^[0-9a-f]{2}-[0-9a-f]{32}-/.test(traceparent))
    job.traceId = traceparent.slice(3, 35);
  return job;
}

/** The example line of a dead letter's job: `job <type> <id>, parent .., root .., correlation .., trace ..`. */
export function describeDeadLetterJob(job: DeadLetterJob): string {
  return [
    `job ${job.jobType ?? '?'} ${job.jobId}`,
    job.parentJobId === undefined ? undefined : `parent ${job.parentJobId}`,
    job.rootJobId === job.jobId ? 'root itself' : `root ${job.rootJobId}`,
    job.correlationId === undefined ? undefined : `correlation ${job.correlationId}`,
    job.traceId === undefined ? undefined : `trace ${job.traceId}`,
  ]
    .filter((part) => part !== undefined)
    .join(', ');
}

function causeOf(dl: DeadLetterFact): string {
  const name = dl.errorName ?? 'unknown error';
  return dl.errorReason && dl.errorReason !== name ? `${name} (${dl.errorReason})` : name;
}

const examples = (list: readonly string[], n = 10): string[] => list.slice(0, n);
const shorten = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
};

/** Computes the report from the facts of a run. Pure; never throws on well-typed input. */
export function buildReport(facts: ReportFacts): RunReport {
  const jobs = facts.jobs;
  const byType: Record<
    string,
    {
      total: number;
      completed: number;
      deadLettered: number;
      lost: number;
      unfinished: number;
      retries: number;
    }
  > = {};
  let retries = 0;
  let retriedJobs = 0;
  for (const job of jobs) {
    const row = byType[job.type] ?? {
      total: 0,
      completed: 0,
      deadLettered: 0,
      lost: 0,
      unfinished: 0,
      retries: 0,
    };
    row.total += 1;
    if (job.state === 'completed') row.completed += 1;
    else if (job.state === 'dead-lettered') row.deadLettered += 1;
    else if (job.state === 'unfinished') row.unfinished += 1;
    else row.lost += 1;
    const extra = Math.max(0, (job.attempts ?? 1) - 1);
    row.retries += extra;
    retries += extra;
    if (extra > 0) retriedJobs += 1;
    byType[job.type] = row;
  }
  const count = (state: JobState) => jobs.filter((j) => j.state === state).length;
  const lostKeys = jobs.filter((j) => j.state === 'lost').map((j) => j.key);

  const causes = new Map<string, { count: number; expected: number; example?: string }>();
  for (const dl of facts.deadLetters) {
    const cause = causeOf(dl);
    const example = dl.errorMessage === undefined ? undefined : shorten(dl.errorMessage, 72);
    const row = causes.get(cause) ?? { count: 0, expected: 0, ...(example ? { example } : {}) };
    row.count += 1;
    if (dl.expectedBecause !== undefined) row.expected += 1;
    causes.set(cause, row);
  }
  // One example job per cause, with its chain, from the messages read (their bodies).
  const exampleJobs = new Map<string, DeadLetterJob>();
  for (const message of facts.deadLetterMessages ?? []) {
    const a = message.attributes;
    const cause = causeOf({
      queue: '',
      ...(a.ErrorName ? { errorName: a.ErrorName } : {}),
      ...(a.ErrorReason ? { errorReason: a.ErrorReason } : {}),
    });
    if (exampleJobs.has(cause)) continue;
    const job = deadLetterJobOf(message.body);
    if (job !== undefined) exampleJobs.set(cause, job);
  }
  const byCause = [...causes]
    .map(([cause, row]) => {
      const exampleJob = exampleJobs.get(cause);
      return { cause, ...row, ...(exampleJob ? { exampleJob } : {}) };
    })
    .sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
  const unexplained = facts.deadLetters.filter((dl) => dl.expectedBecause === undefined).length;
  const withoutEvidence = facts.deadLetters.filter(
    (dl) => dl.errorName === undefined || dl.errorReason === undefined || dl.attempts === undefined,
  ).length;

  const keyCounts = Object.entries(facts.sideEffects.byKey);
  const keysOverOne = keyCounts.filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`);
  const maxPerKey = keyCounts.reduce((max, [, n]) => Math.max(max, n), 0);
  const duplicated: string[] = [];
  const missing: string[] = [];
  for (const job of jobs) {
    if (job.state !== 'completed' || job.sideEffectReference === undefined) continue;
    const n = facts.sideEffects.byReference[job.sideEffectReference] ?? 0;
    if (n === 0) missing.push(job.key);
    else if (n > 1) duplicated.push(`${job.key} ×${n}`);
  }

  const violations = findOrderViolations(facts.orderLogs);
  const stepsChecked = facts.orderLogs.reduce((acc, log) => acc + log.entries.length, 0);

  const latencies: number[] = [];
  let lastCompletion = facts.startedAtMs;
  for (const job of jobs) {
    if (job.state !== 'completed' || job.completedAtMs === undefined) continue;
    lastCompletion = Math.max(lastCompletion, job.completedAtMs);
    if (job.startedAtMs !== undefined) latencies.push(Math.max(0, job.completedAtMs - job.startedAtMs));
  }
  const completed = count('completed');
  const windowMs = Math.max(1, lastCompletion - facts.startedAtMs);
  const workloadMs = Math.max(0, facts.finishedAtMs - facts.startedAtMs);

  const faultTotal = Object.values(facts.faultsInjected).reduce((a, b) => a + b, 0);

  const unfinished = count('unfinished');
  const invariants: InvariantResult[] = [
    facts.timedOut
      ? {
          name: 'jobs lost (sent or enqueued, neither completed nor dead-lettered)',
          severity: 'invariant',
          ok: false,
          actual: 'not checked',
          expected: '0',
          skipped: `deadline reached, ${unfinished} jobs not finished`,
        }
      : {
          name: 'jobs lost (sent or enqueued, neither completed nor dead-lettered)',
          severity: 'invariant',
          ok: lostKeys.length === 0,
          actual: lostKeys.length === 0 ? '0' : `${lostKeys.length} (${examples(lostKeys, 3).join(', ')})`,
          expected: '0',
        },
    {
      name: 'side effects per idempotency key',
      severity: 'invariant',
      ok: maxPerKey <= 1,
      actual:
        keysOverOne.length === 0 ? `all 1 (${keyCounts.length} keys)` : `${keysOverOne.length} keys > 1`,
      expected: 'all 1',
    },
    {
      name: 'completed jobs with a duplicated or missing side effect',
      severity: 'invariant',
      ok: duplicated.length === 0 && missing.length === 0,
      actual: `${duplicated.length} duplicated, ${missing.length} missing`,
      expected: '0',
    },
    {
      name: 'per-user order violations on the FIFO queue',
      severity: 'invariant',
      ok: violations.length === 0,
      actual: String(violations.length),
      expected: '0',
    },
    ...(facts.requireDeadLetterEvidence
      ? [
          {
            name: 'dead letters without evidence (ErrorName, ErrorReason, Attempts)',
            severity: 'invariant',
            ok: withoutEvidence === 0,
            actual: String(withoutEvidence),
            expected: '0',
          } satisfies InvariantResult,
        ]
      : []),
    ...(facts.idempotency ? [stuckRecordsInvariant(facts.idempotency, facts.timedOut)] : []),
    ...(facts.requireDeadLetterEvidence && facts.workerMetrics !== undefined && !facts.timedOut
      ? [deadLetterMetricInvariant(facts.workerMetrics.JobDeadLettered ?? 0, count('dead-lettered'))]
      : []),
    {
      name: 'dead letters without an injected or deliberate cause',
      severity: 'warning',
      ok: unexplained === 0,
      actual: String(unexplained),
      expected: '0',
    },
  ];

  const failed = invariants.some((i) => !i.ok && i.severity === 'invariant' && i.skipped === undefined);
  const complete = !facts.timedOut;
  return {
    ok: complete && !failed,
    failed,
    complete,
    jobs: {
      sent: jobs.filter((j) => j.origin === 'sent').length,
      enqueued: jobs.filter((j) => j.origin === 'enqueued').length,
      total: jobs.length,
      completed,
      deadLettered: count('dead-lettered'),
      lost: lostKeys.length,
      unfinished,
      retriedJobs,
      retries,
      byType,
      lostExamples: examples(lostKeys),
    },
    deadLetters: { total: facts.deadLetters.length, byCause, unexplained, withoutEvidence },
    duplicatesAbsorbed: facts.duplicatesAbsorbed,
    duplicatesSource: facts.duplicatesSource,
    sideEffects: {
      keys: keyCounts.length,
      total: keyCounts.reduce((acc, [, n]) => acc + n, 0),
      maxPerKey,
      keysOverOne: examples(keysOverOne),
      duplicated: examples(duplicated),
      missing: examples(missing),
    },
    order: { usersChecked: facts.orderLogs.length, stepsChecked, violations },
    latency: summariseLatency(latencies),
    latencyP99Ms: percentile(
      [...latencies].sort((a, b) => a - b),
      99,
    ),
    idempotency: facts.idempotency,
    producerRetries: facts.producerRetries,
    throughputPerSecond: completed === 0 ? 0 : completed / (windowMs / 1000),
    workloadMs,
    wallTimeMs: facts.bootMs + workloadMs,
    timedOut: facts.timedOut,
    faultsInjected: { total: faultTotal, byKind: { ...facts.faultsInjected } },
    workerMetrics: facts.workerMetrics === undefined ? undefined : { ...facts.workerMetrics },
    invariants,
  };
}

/** Invariant 6: the workers' `JobDeadLettered` sum against the dead-lettered jobs. */
function deadLetterMetricInvariant(metric: number, deadLettered: number): InvariantResult {
  return {
    name: "dead-lettered jobs the workers' JobDeadLettered metric did not count",
    severity: 'invariant',
    ok: metric >= deadLettered,
    actual: metric >= deadLettered ? '0' : String(deadLettered - metric),
    expected: '0',
  };
}

/** The stuck-record invariant from the end-of-run scan; skipped when the deadline came first. */
function stuckRecordsInvariant(scan: IdempotencyRecordSummary, timedOut: boolean): InvariantResult {
  const name = 'idempotency records IN_PROGRESS past their lease (table scan at the end)';
  if (timedOut) {
    return {
      name,
      severity: 'invariant',
      ok: false,
      actual: 'not checked',
      expected: '0',
      skipped: 'deadline reached: jobs still in flight may hold leases',
    };
  }
  return {
    name,
    severity: 'invariant',
    ok: scan.stuckInProgress === 0,
    actual:
      scan.stuckInProgress === 0
        ? `0 of ${scan.records} records`
        : `${scan.stuckInProgress} (${scan.stuckExamples.slice(0, 3).join(', ')})`,
    expected: '0',
  };
}

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
  const deadline = timeoutSeconds === undefined ? '' : ` of ${timeoutSeconds} s`;
  return (
    `not finished: the deadline${deadline} (--timeout-seconds) was reached with ${report.jobs.unfinished} ` +
    `jobs still queued/in flight; they are not counted as lost. Raise --timeout-seconds to let the run complete.`
  );
}

/** Renders the report as plain text (no colours), for a terminal or a log. */
export function renderReport(report: RunReport, options: { timeoutSeconds?: number } = {}): string {
  const out: string[] = [];
  const { jobs } = report;
  const showUnfinished = !report.complete || jobs.unfinished > 0;
  out.push('sqs-jobs local run report', '');
  out.push(
    `Jobs: ${jobs.total} (${jobs.sent} sent by the workload, ${jobs.enqueued} enqueued by jobs)` +
      (report.complete && jobs.lost === 0
        ? ` = ${jobs.completed} completed + ${jobs.deadLettered} dead-lettered`
        : ''),
    ...table([
      ['completed', String(jobs.completed)],
      ['dead-lettered', String(jobs.deadLettered)],
      ...(showUnfinished ? [['not finished (deadline reached)', String(jobs.unfinished)]] : []),
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
  );
  out.push(`Dead-lettered by cause (${report.deadLetters.total}):`);
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
  out.push('');
  out.push(
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
    ...(report.producerRetries === undefined
      ? []
      : [
          `Producer batches sent again by JobClient (after the SDK's own retries): ${report.producerRetries}`,
        ]),
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
    `Wall time: ${seconds(report.wallTimeMs)} (boot ${seconds(report.wallTimeMs - report.workloadMs)}, workload ${seconds(report.workloadMs)})${report.timedOut ? ' — DEADLINE REACHED' : ''}`,
    '',
    'Invariants:',
    ...table(
      report.invariants.map((i) => [
        `${i.skipped !== undefined ? 'SKIP' : i.ok ? 'PASS' : i.severity === 'warning' ? 'WARN' : 'FAIL'}  ${i.name}`,
        i.actual,
        i.skipped !== undefined ? `(${i.skipped})` : `(expected ${i.expected})`,
      ]),
    ),
  );
  if (jobs.lostExamples.length > 0) out.push('', `Lost jobs: ${jobs.lostExamples.join(', ')}`);
  if (report.sideEffects.keysOverOne.length > 0)
    out.push(`Keys with repeated side effects: ${report.sideEffects.keysOverOne.join(', ')}`);
  if (report.sideEffects.duplicated.length > 0)
    out.push(`Duplicated side effects: ${report.sideEffects.duplicated.join(', ')}`);
  if (report.sideEffects.missing.length > 0)
    out.push(`Missing side effects: ${report.sideEffects.missing.join(', ')}`);
  const unfinished = unfinishedMessage(report, options.timeoutSeconds);
  out.push('');
  if (report.failed) out.push('RESULT: INVARIANT FAILED');
  if (unfinished !== undefined) out.push(`RESULT: ${unfinished}`);
  if (report.ok) out.push('RESULT: all invariants hold');
  return `${out.join('\n')}\n`;
}
