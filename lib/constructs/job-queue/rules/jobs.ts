/**
 * `jobs`: the job definitions the worker runs, the one source of `maxAttempts` and
 * `jobTimeoutSeconds`. The queue's values must cover every job: a `maxAttempts` below a job's
 * `retry.maxAttempts` lets the redrive policy (`maxReceiveCount`, derived from it) move that
 * job to the DLQ before the worker has used its attempts, and a `jobTimeoutSeconds` below a
 * job's `timeoutSeconds` lets the function timeout derived from it kill the whole batch. Two
 * jobs naming one rate limit must give it the same settings (lib/core/rate-limit-conflicts.ts).
 */
import { isNamedRateLimit, rateLimitConflicts } from '../../../core/rate-limit-conflicts.ts';
import { describeValue, isValidJobTimeout, isValidMaxAttempts } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

/** The highest value some job needs, and the job that needs it. */
export interface JobNeed {
  readonly value: number;
  /** The job type with that value (the first one, when several have it). */
  readonly type: string;
}

interface WellFormedJob {
  readonly type: string;
  readonly queue?: unknown;
  readonly retry: { readonly maxAttempts: number };
  readonly timeoutSeconds: number;
}

function isWellFormed(job: unknown): job is WellFormedJob {
  if (typeof job !== 'object' || job === null) return false;
  const j = job as Partial<Record<string, unknown>>;
  const retry = j.retry as Partial<Record<string, unknown>> | undefined;
  return (
    typeof j.type === 'string' &&
    j.type.length > 0 &&
    typeof retry === 'object' &&
    retry !== null &&
    isValidMaxAttempts(retry.maxAttempts) &&
    isValidJobTimeout(j.timeoutSeconds)
  );
}

/**
 * What the well-formed jobs need: the highest `retry.maxAttempts` and `timeoutSeconds`.
 * Malformed entries are skipped (the rule reports them); undefined when no job is well formed.
 */
export function jobNeeds(jobs: unknown): { maxAttempts?: JobNeed; jobTimeoutSeconds?: JobNeed } {
  if (!Array.isArray(jobs)) return {};
  let maxAttempts: JobNeed | undefined;
  let jobTimeoutSeconds: JobNeed | undefined;
  for (const job of jobs) {
    if (!isWellFormed(job)) continue;
    if (maxAttempts === undefined || job.retry.maxAttempts > maxAttempts.value)
      maxAttempts = { value: job.retry.maxAttempts, type: job.type };
    if (jobTimeoutSeconds === undefined || job.timeoutSeconds > jobTimeoutSeconds.value)
      jobTimeoutSeconds = { value: job.timeoutSeconds, type: job.type };
  }
  return { maxAttempts, jobTimeoutSeconds };
}

export const jobsRule: JobQueueRule = ({ props }) => {
  const jobs: unknown = props.jobs;
  if (jobs === undefined) return [];
  if (!Array.isArray(jobs)) {
    return [
      error(`jobs: must be an array of job definitions (what defineJob returns), got ${describeValue(jobs)}`),
    ];
  }
  if (jobs.length === 0) {
    return [
      error(
        'jobs: is empty: give the job definitions the worker runs, or leave jobs out and set maxAttempts and jobTimeoutSeconds',
      ),
    ];
  }
  const findings: JobQueueFinding[] = [];
  const seen = new Set<string>();
  jobs.forEach((job: unknown, i) => {
    if (!isWellFormed(job)) {
      findings.push(
        error(
          `jobs[${i}]: not a job definition: needs type (a string), retry.maxAttempts (a whole number of at least 1) and timeoutSeconds (above 0); make it with defineJob`,
        ),
      );
      return;
    }
    if (seen.has(job.type)) findings.push(error(`jobs: type '${job.type}' is given twice`));
    seen.add(job.type);
    if (typeof props.name === 'string' && typeof job.queue === 'string' && job.queue !== props.name) {
      findings.push(
        error(
          `jobs: '${job.type}' is sent to queue '${job.queue}', not to '${props.name}': its messages never reach this worker`,
        ),
      );
    }
  });

  // Two different rate limits under one name would share one bucket (what createWorker refuses at
  // the worker's start, said here at synth).
  const limits = jobs.flatMap((job: unknown) => {
    const declared = (job as { rateLimits?: unknown } | null)?.rateLimits;
    return Array.isArray(declared) ? declared.filter(isNamedRateLimit) : [];
  });
  for (const conflict of rateLimitConflicts(limits)) findings.push(error(`jobs: ${conflict}`));

  const needs = jobNeeds(jobs);
  if (
    isValidMaxAttempts(props.maxAttempts) &&
    needs.maxAttempts &&
    props.maxAttempts < needs.maxAttempts.value
  ) {
    findings.push(
      error(
        `maxAttempts: ${props.maxAttempts} is below ${needs.maxAttempts.value}, the retry.maxAttempts of job '${needs.maxAttempts.type}': the redrive policy derived from it can move that job to the DLQ before the worker has used its attempts`,
      ),
    );
  }
  if (
    isValidJobTimeout(props.jobTimeoutSeconds) &&
    needs.jobTimeoutSeconds &&
    props.jobTimeoutSeconds < needs.jobTimeoutSeconds.value
  ) {
    findings.push(
      error(
        `jobTimeoutSeconds: ${props.jobTimeoutSeconds} is below ${needs.jobTimeoutSeconds.value}, the timeoutSeconds of job '${needs.jobTimeoutSeconds.type}': the function timeout derived from it can kill that job's runs with the whole batch`,
      ),
    );
  }
  return findings;
};
