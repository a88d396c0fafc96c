/**
 * Worker integration tests against the emulators with the default idempotency store: the SQS
 * emulator (emulated-sqs.ts) and dynalite with one idempotency table, and the AWS environment the
 * worker's DynamoDB client reads (endpoint, region, credentials), restored after the test file.
 *
 * @example
 * const env = useGuardedEmulators(); // registers beforeAll / afterAll
 * it('...', async () => { const queue = await env.emulator.createQueue('q', false); ... });
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, beforeAll } from 'vitest';
import { createWorker, type WorkerHandler, type WorkerOptions } from '../../lib/runtime/worker.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from './emulated-sqs.ts';

const ENV_KEYS = [
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
] as const;

/** What the hooks start; read inside tests (filled by `beforeAll`). */
export interface GuardedEmulators {
  readonly emulator: EmulatedSqs;
  readonly db: DynaliteHandle;
  /** The idempotency table (`JOBS_IDEMPOTENCY_TABLE`). */
  readonly tableName: string;
}

/** Registers the file's `beforeAll` / `afterAll` and returns their state. */
export function useGuardedEmulators(): GuardedEmulators {
  const state = {} as { emulator: EmulatedSqs; db: DynaliteHandle; tableName: string };
  const saved: Partial<Record<(typeof ENV_KEYS)[number], string | undefined>> = {};
  beforeAll(async () => {
    [state.emulator, state.db] = await Promise.all([startEmulatedSqs(), startDynalite()]);
    state.tableName = await state.db.createTable();
    for (const key of ENV_KEYS) saved[key] = process.env[key];
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: state.db.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
  });
  afterAll(async () => {
    for (const key of ENV_KEYS) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    await Promise.all([state.emulator?.stop(), state.db?.stop()]);
  });
  return state;
}

export interface GuardedWorkerOptions extends Omit<WorkerOptions, 'queueName' | 'env'> {
  /** `JOBS_QUEUE_NAME`: the queue name the jobs declare. */
  readonly queueName: string;
  readonly queue: EmulatedQueue;
  readonly dlq: EmulatedQueue;
  /** More environment, on top of the queue's and the idempotency table's. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The real worker on `queue` of these emulators, configured from its environment as in Lambda
 * (`JOBS_QUEUE_NAME`, `JOBS_QUEUE_URL`, `JOBS_DLQ_URL`, `JOBS_IDEMPOTENCY_TABLE`: the default
 * DynamoDB idempotency store): a silent Logger, Metrics without default dimensions, and the retry
 * jitter at its low end (`random: () => 0`: a retried or waiting job comes back at once, so tests
 * run at the emulators' speed). Any other `createWorker` option given is passed on as it is.
 */
export function guardedWorker(env: GuardedEmulators, options: GuardedWorkerOptions): WorkerHandler {
  const { queueName, queue, dlq, env: moreEnv, ...rest } = options;
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  return createWorker({
    sqs: env.emulator.sqs,
    random: () => 0,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    ...rest,
    env: {
      JOBS_QUEUE_NAME: queueName,
      JOBS_QUEUE_URL: queue.url,
      JOBS_DLQ_URL: dlq.url,
      JOBS_IDEMPOTENCY_TABLE: env.tableName,
      ...moreEnv,
    },
  });
}
