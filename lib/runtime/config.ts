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
    },
  };
}
