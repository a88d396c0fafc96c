/**
 * One line per job for `sqs-jobs local`: what happened to each job as the workers run it, read
 * from the workers' own log lines. Every line a worker writes about a record's outcome carries an
 * `outcome` key with the job's identity keys (docs/contracts.md, "Logs"): `completed` (written when
 * `JOBS_LOG_EACH_RECORD=true`, which `sqs-jobs local` sets for its functions), `retry`,
 * `dead-lettered`, `duplicate` and `deferred`. Anything else (the batch summary, plain text) is not
 * a job event. A job's own `ctx.logger` lines cannot be taken for one: `outcome` is a key the
 * runtime owns (lib/runtime/job-logger.ts `OUTCOME_LOG_KEY`), dropped from a job's line with a
 * warning, so a job logging `{ outcome: 'retry' }` prints no phantom retry.
 */
import { OUTCOME_LOG_KEY } from '../runtime/job-logger.ts';

/** Outcomes a worker logs for a record (docs/contracts.md, "Logs"). */
export const JOB_OUTCOMES = ['completed', 'retry', 'dead-lettered', 'duplicate', 'deferred'] as const;

/** An outcome of {@link JOB_OUTCOMES}. */
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/** One job event, as printed by `sqs-jobs local --json` (one JSON object per line). */
export interface JobEvent {
  /** Always `job`: tells these lines from other JSON on the same stream. */
  readonly kind: 'job';
  /** The worker's log time (ISO 8601), or when the line was read when the log has none. */
  readonly time: string;
  /** Logical id of the function that ran it. */
  readonly functionLogicalId: string;
  /** Envelope `type`; absent when the record could not be read as a job. */
  readonly type?: string;
  /** Envelope `id`, the job's key within its `source`. */
  readonly jobId?: string;
  /** SQS message id of the record. */
  readonly messageId?: string;
  readonly outcome: JobOutcome;
  /** The attempt this run was (1 = first); for `dead-lettered`, the attempts used. */
  readonly attempt?: number;
  /** Time the job's `run` took, in milliseconds (`completed`, `retry`). */
  readonly durationMs?: number;
  /** Why it was retried or dead-lettered (e.g. `transient: timeout`). */
  readonly reason?: string;
  /** Seconds until the retry (`retry`). */
  readonly delaySeconds?: number;
  /** The error's `name: message` (`retry`, `dead-lettered`). */
  readonly error?: string;
}

const isOutcome = (value: unknown): value is JobOutcome =>
  typeof value === 'string' && (JOB_OUTCOMES as readonly string[]).includes(value);

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** `name: message` of a logged error (Powertools logs errors as `{ name, message, stack }`). */
function errorText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return text(value);
  const { name, message } = value as { name?: unknown; message?: unknown };
  const m = text(message);
  if (m === undefined) return text(name);
  return text(name) === undefined ? m : `${String(name)}: ${m}`;
}

/**
 * The job event of one line a function wrote, or `undefined` when the line is not a worker's
 * record outcome (not JSON, no `outcome`, or the batch summary).
 * @param now the time used when the line has no `timestamp`.
 */
export function jobEventOf(
  functionLogicalId: string,
  line: string,
  now: () => Date = () => new Date(),
): JobEvent | undefined {
  if (!line.startsWith('{') || !line.includes(`"${OUTCOME_LOG_KEY}"`)) return undefined;
  let log: Record<string, unknown>;
  try {
    log = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const outcome = log[OUTCOME_LOG_KEY];
  if (!isOutcome(outcome)) return undefined;
  const event: Record<string, unknown> = {
    kind: 'job',
    time: text(log.timestamp) ?? now().toISOString(),
    functionLogicalId,
    type: text(log.jobType),
    jobId: text(log.jobId),
    messageId: text(log.messageId),
    outcome,
    attempt: count(log.attempt) ?? count(log.attempts),
    durationMs: count(log.durationMs),
    reason: text(log.reason),
    delaySeconds: count(log.delaySeconds),
    error: errorText(log.error),
  };
  for (const key of Object.keys(event)) if (event[key] === undefined) delete event[key];
  return event as unknown as JobEvent;
}

/** Width of the outcome column: the longest outcome. */
const OUTCOME_WIDTH = Math.max(...JOB_OUTCOMES.map((o) => o.length));

/**
 * A job event as one readable line: time, outcome, type, job id, attempt, duration, then why
 * (retry delay, reason, error) when there is one. E.g.
 * `12:04:05.120  completed      greetings.greet  greet-1  attempt 1  12 ms`.
 */
export function formatJobLine(event: JobEvent): string {
  const time = /T(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(event.time)?.[1] ?? event.time;
  const parts = [
    time,
    event.outcome.padEnd(OUTCOME_WIDTH),
    event.type ?? '(not a job)',
    event.jobId ?? `message ${event.messageId ?? '?'}`,
  ];
  if (event.attempt !== undefined) {
    parts.push(
      event.outcome === 'dead-lettered' ? `after ${event.attempt} attempt(s)` : `attempt ${event.attempt}`,
    );
  }
  if (event.durationMs !== undefined) parts.push(`${Math.round(event.durationMs)} ms`);
  const why = [
    event.delaySeconds === undefined ? undefined : `again in ${event.delaySeconds} s`,
    event.reason,
    event.error,
  ].filter((p) => p !== undefined);
  return `${parts.join('  ')}${why.length > 0 ? `  (${why.join('; ')})` : ''}`;
}
