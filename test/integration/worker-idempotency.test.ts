/**
 * The worker with its default idempotency guard (the DynamoDB store on JOBS_IDEMPOTENCY_TABLE)
 * on the embedded emulators: SQS (fauxqs) and DynamoDB (dynalite). The store's DynamoDB client
 * comes from the environment, as in Lambda, pointed at dynalite through AWS_ENDPOINT_URL_DYNAMODB.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/runtime/envelope.ts';
import { TransientError } from '../../lib/runtime/errors.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

const ENV_KEYS = [
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
] as const;
const saved: Partial<Record<(typeof ENV_KEYS)[number], string | undefined>> = {};

let emulator: EmulatedSqs;
let db: DynaliteHandle;
let tableName: string;

beforeAll(async () => {
  [emulator, db] = await Promise.all([startEmulatedSqs(), startDynalite()]);
  tableName = await db.createTable();
  for (const key of ENV_KEYS) saved[key] = process.env[key];
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
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
  await Promise.all([emulator?.stop(), db?.stop()]);
});

function worker(jobs: AnyJob[], queue: EmulatedQueue, dlq: EmulatedQueue) {
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  return createWorker({
    jobs,
    sqs: emulator.sqs,
    random: () => 0,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {
      JOBS_QUEUE_NAME: 'payments',
      JOBS_QUEUE_URL: queue.url,
      JOBS_DLQ_URL: dlq.url,
      JOBS_IDEMPOTENCY_TABLE: tableName,
    },
  });
}

const schema = z.object({ paymentId: z.string() });

describe('worker with the default DynamoDB idempotency store', () => {
  it('runs a job delivered twice only once', async () => {
    const queue = await emulator.createQueue('payments', false);
    const dlq = await emulator.createQueue('payments-dlq', false);
    let charges = 0;
    const job = defineJob({
      type: 'payments.capture',
      queue: 'payments',
      schema,
      run: async () => ++charges,
    });
    const envelope = createEnvelope({
      type: 'payments.capture',
      source: '/checkout',
      data: { paymentId: 'p-1' },
    });
    // The same job twice, the second after the first completed: a producer retry, or SQS
    // at-least-once delivery. (Two copies in one batch race for the lease: the unit tests cover `busy`.)
    const handler = worker([job], queue, dlq);
    for (let copy = 0; copy < 2; copy++) {
      await emulator.send(queue, envelope);
      const { response, delivered } = await emulator.deliver(queue, handler);
      expect(delivered).toBe(1);
      expect(response.batchItemFailures).toEqual([]);
    }
    expect(charges).toBe(1);
    expect(await emulator.receive(queue)).toEqual([]);
    expect(await emulator.receive(dlq)).toEqual([]);
  });

  it('counts attempts in the store and runs the retry after a transient failure', async () => {
    const queue = await emulator.createQueue('retries', false);
    const dlq = await emulator.createQueue('retries-dlq', false);
    const attempts: number[] = [];
    const job = defineJob({
      type: 'payments.refund',
      queue: 'payments',
      schema,
      retry: { maxAttempts: 3, baseDelaySeconds: 1 },
      run: async (_data, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new TransientError('bank API 503');
      },
    });
    await emulator.send(
      queue,
      createEnvelope({ type: 'payments.refund', source: '/checkout', data: { paymentId: 'p-2' } }),
    );
    const handler = worker([job], queue, dlq);

    const first = await emulator.deliver(queue, handler);
    expect(first.response.batchItemFailures).toHaveLength(1);
    // random 0 → backoff 0 s: visible again at once.
    const second = await emulator.deliver(queue, handler);
    expect(second.delivered).toBe(1);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(attempts).toEqual([1, 2]);
  });
});
