/**
 * The worker with its default idempotency guard (the DynamoDB store on JOBS_IDEMPOTENCY_TABLE)
 * on the embedded emulators: SQS (fauxqs) and DynamoDB (dynalite). The store's DynamoDB client
 * comes from the environment, as in Lambda, pointed at dynalite through AWS_ENDPOINT_URL_DYNAMODB.
 */
import { type AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { TransientError } from '../../lib/core/errors.ts';
import { jobRecordKey, stepRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { guardedWorker, useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();

const worker = (jobs: AnyJob[], queue: EmulatedQueue, dlq: EmulatedQueue) =>
  guardedWorker(env, { queueName: 'payments', queue, dlq, jobs });

const schema = z.object({ paymentId: z.string() });

describe('worker with the default DynamoDB idempotency store', () => {
  it('runs a job delivered twice only once', async () => {
    const queue = await env.emulator.createQueue('payments', false);
    const dlq = await env.emulator.createQueue('payments-dlq', false);
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
      await env.emulator.send(queue, envelope);
      const { response, delivered } = await env.emulator.deliver(queue, handler);
      expect(delivered).toBe(1);
      expect(response.batchItemFailures).toEqual([]);
    }
    expect(charges).toBe(1);
    expect(await env.emulator.receive(queue)).toEqual([]);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });

  it('counts attempts in the store and runs the retry after a transient failure', async () => {
    const queue = await env.emulator.createQueue('retries', false);
    const dlq = await env.emulator.createQueue('retries-dlq', false);
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
    await env.emulator.send(
      queue,
      createEnvelope({ type: 'payments.refund', source: '/checkout', data: { paymentId: 'p-2' } }),
    );
    const handler = worker([job], queue, dlq);

    const first = await env.emulator.deliver(queue, handler);
    expect(first.response.batchItemFailures).toHaveLength(1);
    // random 0 → backoff 0 s: visible again at once.
    const second = await env.emulator.deliver(queue, handler);
    expect(second.delivered).toBe(1);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(attempts).toEqual([1, 2]);
  });
});

/** The delivery of one envelope on a fresh queue pair; returns what SQS and the DLQ saw. */
async function deliverOnce(jobs: AnyJob[], envelope: ReturnType<typeof createEnvelope>) {
  const queue = await env.emulator.createQueue('keys', false);
  const dlq = await env.emulator.createQueue('keys-dlq', false);
  await env.emulator.send(queue, envelope);
  const { response, delivered } = await env.emulator.deliver(queue, worker(jobs, queue, dlq));
  expect(delivered).toBe(1);
  return { response, queue, dlq };
}

describe('idempotency keys that used to collide (Part 6)', () => {
  it("runs a job whose source and id, joined by a newline, read like another job's", async () => {
    const ran: string[] = [];
    const job = defineJob({
      type: 'payments.collide-source',
      queue: 'payments',
      schema,
      run: async (_data, ctx) => {
        ran.push(JSON.stringify([ctx.source, ctx.jobId]));
      },
    });
    const data = { paymentId: 'p-same' };
    const first = createEnvelope({ type: job.type, source: '/s', id: 'x\ny', data });
    const second = createEnvelope({ type: job.type, source: '/s\nx', id: 'y', data });
    for (const envelope of [first, second]) {
      const { response, queue, dlq } = await deliverOnce([job], envelope);
      expect(response.batchItemFailures).toEqual([]);
      expect(await env.emulator.receive(queue)).toEqual([]);
      expect(await env.emulator.receive(dlq)).toEqual([]);
    }
    expect(ran).toEqual([JSON.stringify(['/s', 'x\ny']), JSON.stringify(['/s\nx', 'y'])]);
  });

  for (const order of [
    ['c', 'c#step#charge'],
    ['c#step#charge', 'c'],
  ] as const) {
    it(`runs both a job with a step 'charge' and a job whose id ends in '#step#charge' (ids ${order.join(' then ')})`, async () => {
      const charged: string[] = [];
      const source = `/orders-${order[0] === 'c' ? 'a' : 'b'}`;
      const job = defineJob({
        type: 'payments.collide-step',
        queue: 'payments',
        schema,
        run: async (_data, ctx) => {
          const charge = await ctx.once('charge', async () => {
            charged.push(ctx.jobId);
            return `charge-of-${ctx.jobId}`;
          });
          expect(charge).toBe(`charge-of-${ctx.jobId}`);
        },
      });
      for (const id of order) {
        const envelope = createEnvelope({ type: job.type, source, id, data: { paymentId: 'p-3' } });
        const { response, queue, dlq } = await deliverOnce([job], envelope);
        expect(response.batchItemFailures).toEqual([]);
        expect(await env.emulator.receive(queue)).toEqual([]);
        expect(await env.emulator.receive(dlq)).toEqual([]);
      }
      expect(charged).toEqual([...order]);
    });
  }
});

describe('a record of the wrong kind under a key (Part 6)', () => {
  /** Writes `item` under `pk` as a foreign writer (or a build before keys were injective) would. */
  async function plant(pk: string, item: Record<string, AttributeValue>): Promise<void> {
    await env.db.client.send(
      new PutItemCommand({ TableName: env.tableName, Item: { pk: { S: pk }, ...item } }),
    );
  }
  const farFuture = { N: String(Math.floor(Date.now() / 1000) + 86_400) };

  it('dead-letters with evidence, at once, a job whose key holds a step record', async () => {
    const job = defineJob({ type: 'payments.kind-job', queue: 'payments', schema, run: async () => 'ran' });
    const envelope = createEnvelope({
      type: job.type,
      source: '/kinds',
      id: 'k-1',
      data: { paymentId: 'p' },
    });
    await plant(jobRecordKey(job.type, '/kinds\nk-1'), {
      recordType: { S: 'step' },
      status: { S: 'COMPLETED' },
      generation: { S: 'g' },
      valueStored: { BOOL: true },
      value: { S: '1' },
      expiresAt: farFuture,
    });
    const { response, queue, dlq } = await deliverOnce([job], envelope);
    expect(response.batchItemFailures).toEqual([]);
    expect(await env.emulator.receive(queue)).toEqual([]);
    const [dead] = await env.emulator.receive(dlq);
    expect(dead?.Body).toBe(JSON.stringify(envelope));
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('IdempotencyRecordError');
    expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
      /is a step record where a job record is expected/,
    );
  });

  it("dead-letters with evidence, at once, a job whose step key holds a job record (not 'valueStored missing' forever)", async () => {
    let charges = 0;
    const job = defineJob({
      type: 'payments.kind-step',
      queue: 'payments',
      schema,
      run: async (_data, ctx) => ctx.once('charge', async () => ++charges),
    });
    const envelope = createEnvelope({
      type: job.type,
      source: '/kinds',
      id: 'k-2',
      data: { paymentId: 'p' },
    });
    await plant(stepRecordKey(jobRecordKey(job.type, '/kinds\nk-2'), 'charge'), {
      recordType: { S: 'job' },
      status: { S: 'COMPLETED' },
      leaseToken: { S: 't' },
      leaseExpiresAtMs: { N: '0' },
      payloadHash: { S: 'h' },
      attempt: { N: '1' },
      generation: { S: 'g' },
      expiresAt: farFuture,
    });
    const { response, dlq } = await deliverOnce([job], envelope);
    expect(response.batchItemFailures).toEqual([]);
    expect(charges).toBe(0);
    const [dead] = await env.emulator.receive(dlq);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('IdempotencyRecordError');
    expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
      /is a job record where a step record is expected/,
    );
  });

  it('dead-letters with evidence, at once, a job whose record is malformed', async () => {
    const job = defineJob({ type: 'payments.kind-bad', queue: 'payments', schema, run: async () => 'ran' });
    const envelope = createEnvelope({
      type: job.type,
      source: '/kinds',
      id: 'k-3',
      data: { paymentId: 'p' },
    });
    await plant(jobRecordKey(job.type, '/kinds\nk-3'), {
      recordType: { S: 'job' },
      status: { S: 'IN_PROGRESS' },
      expiresAt: farFuture,
    });
    const { response, dlq } = await deliverOnce([job], envelope);
    expect(response.batchItemFailures).toEqual([]);
    const [dead] = await env.emulator.receive(dlq);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('IdempotencyRecordError');
    expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(/is malformed: leaseToken missing/);
  });
});
