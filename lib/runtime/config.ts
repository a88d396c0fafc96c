import { shownValue } from '../core/shown-value.ts';
/**
 * The environment contract of a worker Lambda (docs/contracts.md, "Environment of a worker
 * Lambda"): read once, explicit options first, every problem reported together.
 */

/** What a worker needs to know about where it runs. */
export interface WorkerConfig {
  /** Logical queue name: the `Queue` metric dimension. From `JOBS_QUEUE_NAME`. */
  readonly queueName: string;
  /** URL of the consumed queue, for ChangeMessageVisibility. From `JOBS_QUEUE_URL`. */
  readonly queueUrl: string;
  /** URL of the queue's dead-letter queue. From `JOBS_DLQ_URL`. */
  readonly dlqUrl: string;
  /** Written into DLQ evidence. From `JOBS_HANDLER_VERSION`, else `AWS_LAMBDA_FUNCTION_VERSION`, else `"unknown"`. */
  readonly handlerVersion: string;
  /** Idempotency table name from `JOBS_IDEMPOTENCY_TABLE`; undefined when unset. */
  readonly idempotencyTable: string | undefined;
  /**
   * What the queue the worker consumes was built for (`JobQueue`), to check the worker's jobs
   * against; each undefined when its variable is unset (older stacks, tests, other deployers):
   * then nothing is checked.
   */
  readonly queueLimits: QueueLimits;
}

/**
 * The limits of the consumed queue, set by `JobQueue` from its `jobs` (or its explicit props).
 * A job that needs more would be cut short by the queue, without evidence: see
 * {@link queueLimitProblems}.
 */
export interface QueueLimits {
  /**
   * The queue's `maxAttempts`, from `JOBS_MAX_ATTEMPTS`: the attempts budget below its redrive
   * policy's `maxReceiveCount`. A job with a higher `retry.maxAttempts` would be moved to the DLQ
   * by SQS (at `maxReceiveCount`) without the worker's evidence.
   */
  readonly maxAttempts: number | undefined;
  /**
   * The queue's job time limit in seconds, from `JOBS_JOB_TIMEOUT_SECONDS`: the function timeout
   * and the visibility timeout are sized from it. A job with a higher `timeoutSeconds` would be
   * stopped at the Lambda deadline on every run.
   */
  readonly jobTimeoutSeconds: number | undefined;
  /**
   * Whether the queue's role may clear a parked FIFO group (DynamoDB DeleteItem), from
   * `JOBS_GROUP_PARKING` (`true`/`false`): JobQueue grants it only where a job can park
   * (lib/constructs/job-queue/grants.ts, `mayParkGroups`). See {@link groupParkingProblems}.
   */
  readonly groupParking: boolean | undefined;
}

/** Explicit values that win over the environment. */
export interface WorkerConfigOverrides {
  readonly queueName?: string;
  readonly queueUrl?: string;
  readonly dlqUrl?: string;
  readonly handlerVersion?: string;
}

/** Environment variables read by {@link readWorkerConfig}. */
export const WORKER_ENV = {
  queueName: 'JOBS_QUEUE_NAME',
  queueUrl: 'JOBS_QUEUE_URL',
  dlqUrl: 'JOBS_DLQ_URL',
  idempotencyTable: 'JOBS_IDEMPOTENCY_TABLE',
  handlerVersion: 'JOBS_HANDLER_VERSION',
  maxAttempts: 'JOBS_MAX_ATTEMPTS',
  jobTimeoutSeconds: 'JOBS_JOB_TIMEOUT_SECONDS',
  groupParking: 'JOBS_GROUP_PARKING',
} as const;

/** Result of {@link readWorkerConfig}: the config, or every problem found. */
export type WorkerConfigResult =
  | { readonly ok: true; readonly config: WorkerConfig }
  | { readonly ok: false; readonly problems: readonly string[] };

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * Resolves the worker configuration: each field from `overrides`, else from `env`.
 * Never throws; a missing queue name, queue URL or DLQ URL is reported as a problem.
 */
export function readWorkerConfig(
  overrides: WorkerConfigOverrides,
  env: Readonly<Record<string, string | undefined>> = process.env,
): WorkerConfigResult {
  const problems: string[] = [];
  const required = (field: 'queueName' | 'queueUrl' | 'dlqUrl'): string => {
    const value = nonEmpty(overrides[field]) ?? nonEmpty(env[WORKER_ENV[field]]);
    if (value === undefined)
      problems.push(`${field} is not set (option ${field} or env ${WORKER_ENV[field]})`);
    return value ?? '';
  };
  const queueName = required('queueName');
  const queueUrl = required('queueUrl');
  const dlqUrl = required('dlqUrl');
  const limit = (field: 'maxAttempts' | 'jobTimeoutSeconds', integer: boolean): number | undefined => {
    const raw = nonEmpty(env[WORKER_ENV[field]]);
    if (raw === undefined) return undefined;
    const value = Number(raw.trim());
    if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      problems.push(
        `env ${WORKER_ENV[field]} must be ${integer ? 'a whole number' : 'a number'} > 0 (set by JobQueue), got ${shownValue(raw)}`,
      );
      return undefined;
    }
    return value;
  };
  const parking = nonEmpty(env[WORKER_ENV.groupParking])?.trim();
  if (parking !== undefined && parking !== 'true' && parking !== 'false') {
    problems.push(
      `env ${WORKER_ENV.groupParking} must be true or false (set by JobQueue), got ${shownValue(parking)}`,
    );
  }
  const queueLimits: QueueLimits = {
    maxAttempts: limit('maxAttempts', true),
    jobTimeoutSeconds: limit('jobTimeoutSeconds', false),
    groupParking: parking === 'true' ? true : parking === 'false' ? false : undefined,
  };
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    config: {
      queueName,
      queueUrl,
      dlqUrl,
      handlerVersion:
        nonEmpty(overrides.handlerVersion) ??
        nonEmpty(env[WORKER_ENV.handlerVersion]) ??
        nonEmpty(env.AWS_LAMBDA_FUNCTION_VERSION) ??
        'unknown',
      idempotencyTable: nonEmpty(env[WORKER_ENV.idempotencyTable]),
      queueLimits,
    },
  };
}

/** What {@link queueLimitProblems} needs of a job. */
export interface JobLimits {
  readonly type: string;
  readonly retry: { readonly maxAttempts: number };
  readonly timeoutSeconds: number;
}

/**
 * The jobs of a worker that need more than its queue was built for, one sentence each, naming
 * the job and the fix; empty when all fit or the limits are unknown (their variables unset).
 * Why it matters: the queue's `maxReceiveCount` sits just above its `maxAttempts`, so a job
 * allowed more attempts is moved to the DLQ by SQS's redrive policy, without the worker's
 * evidence; and the function timeout is sized from the queue's job time limit, so a job allowed
 * more time is stopped at the Lambda deadline on every run.
 */
export function queueLimitProblems(
  jobs: Iterable<JobLimits>,
  limits: QueueLimits,
  queueName: string,
): string[] {
  const problems: string[] = [];
  const fix = "add it to the JobQueue's jobs (JobQueue then sizes the queue for it) and deploy";
  for (const job of jobs) {
    if (limits.maxAttempts !== undefined && job.retry.maxAttempts > limits.maxAttempts) {
      problems.push(
        `job ${job.type} has retry.maxAttempts ${job.retry.maxAttempts} but queue ${queueName} was built for ${limits.maxAttempts} (${WORKER_ENV.maxAttempts}; its maxReceiveCount would move the job to the DLQ without evidence before its attempts are used): ${fix}`,
      );
    }
    if (limits.jobTimeoutSeconds !== undefined && job.timeoutSeconds > limits.jobTimeoutSeconds) {
      problems.push(
        `job ${job.type} has timeoutSeconds ${job.timeoutSeconds} but queue ${queueName} was built for a job time limit of ${limits.jobTimeoutSeconds} s (${WORKER_ENV.jobTimeoutSeconds}; its function timeout and visibility timeout are sized from it, so the run would be stopped at the Lambda deadline): ${fix}`,
      );
    }
  }
  return problems;
}

/**
 * A worker that parks FIFO groups (`onDeadLetter: 'park'`, `parks` names who) on a queue built
 * without group parking (`JOBS_GROUP_PARKING=false`): its role may not send the DeleteItem that
 * clears a park, so a parked group would stay parked after its blocker completes. One sentence
 * naming the fix; empty when parking is allowed, unknown (unset), or nothing parks on a FIFO queue.
 */
export function groupParkingProblems(
  parks: readonly string[],
  limits: QueueLimits,
  queueName: string,
  fifo: boolean,
): string[] {
  if (!fifo || parks.length === 0 || limits.groupParking !== false) return [];
  return [
    `onDeadLetter: 'park' (${parks.join(', ')}) but queue ${queueName} was built without group parking (${WORKER_ENV.groupParking}=false: its role may not DeleteItem, so a parked group could never be cleared): set onDeadLetter: 'park' on the JobQueue, or add the parking jobs to its jobs, and deploy`,
  ];
}
