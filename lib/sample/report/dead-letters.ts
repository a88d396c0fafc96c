/**
 * The dead letters of a run by cause: how many, how many were meant to fail, an example error
 * and, from a message's body (the original envelope), an example job with its chain.
 */
import type { DeadLetterFact, ReportFacts } from './facts.ts';
import type { RunReport } from './run-report.ts';

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

/** A dead letter's cause: its `ErrorName`, with its `ErrorReason` when that says more. */
function causeOf(dl: DeadLetterFact): string {
  const name = dl.errorName ?? 'unknown error';
  return dl.errorReason && dl.errorReason !== name ? `${name} (${dl.errorReason})` : name;
}

/** `text` on one line, cut to `max` characters with an ellipsis. */
const shorten = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
};

/**
 * The dead letters of `facts` by cause (most first, then by name), with the counts of those
 * without a deliberate or injected cause, of those without the worker's evidence and of second
 * copies of one job.
 */
export function summariseDeadLetters(facts: ReportFacts): RunReport['deadLetters'] {
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
  const jobs = facts.deadLetters.flatMap((dl) => (dl.jobKey === undefined ? [] : [dl.jobKey]));
  const copies = jobs.length - new Set(jobs).size;
  return { total: facts.deadLetters.length, byCause, unexplained, withoutEvidence, copies };
}
