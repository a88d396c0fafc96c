/**
 * Per-key concurrency through the real worker on the emulators (fauxqs + dynalite, the default
 * idempotency table holding the slots): several invocations at once, as Lambda's pollers drive a
 * busy queue, never run more than the limit of one key, every job runs exactly once, and the
 * waits never reach the DLQ (the queue's maxReceiveCount is 10, each job waits many more times).
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { defineRateLimit } from '../../lib/runtime/limits/rate-limit.ts';
import { LimitStore } from '../../lib/runtime/limits/store.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { guardedWorker, useGuardedEmulators } from '../factories/guarded-emulators.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';

const env = useGuardedEmulators();

// The wait's jitter at its low end (guardedWorker): a waiting job comes back at once, so the test
// runs at the emulators' speed (production waits are spread over 0–1 s, doubling per wait).
const worker = (jobs: AnyJob[], queue: EmulatedQueue, dlq: EmulatedQueue, now?: () => number) =>
  guardedWorker(env, { queueName: 'reports', queue, dlq, jobs, ...(now ? { now } : {}) });

const schema = z.object({ tenantId: z.string(), reportId: z.number() });

describe('per-key concurrency on the emulators', () => {
  it('runs 200 jobs of one key with a limit of 2 through 4 concurrent pollers: never a third at once, each exactly once, none dead-lettered', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('reports', false);
    let running = 0;
    let maxRunning = 0;
    const runs = new Map<number, number>();
    const waiting: (() => void)[] = [];
    const job = defineJob({
      type: 'reports.build',
      queue: 'reports',
      schema,
      concurrency: { key: (data) => data.tenantId, limit: 2 },
      async run({ reportId }) {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        runs.set(reportId, (runs.get(reportId) ?? 0) + 1);
        // Holds its slot until a second job of the key runs too (or briefly, when none comes):
        // every chance of a third one is given while two are running.
        if (running >= 2) for (const wake of waiting.splice(0)) wake();
        else
          await new Promise<void>((resolve) => {
            waiting.push(resolve);
            setTimeout(resolve, 20);
          });
        running -= 1;
      },
    });
    const total = 200;
    await Promise.all(
      Array.from({ length: total }, (_, reportId) =>
        env.emulator.send(
          queue,
          createEnvelope({ type: job.type, source: '/test', data: { tenantId: 'tenant-1', reportId } }),
        ),
      ),
    );

    const pollers = 4;
    const handlers = Array.from({ length: pollers }, () => worker([job], queue, dlq));
    let resent = 0;
    const poll = async (index: number) => {
      const handler = handlers[index] as (typeof handlers)[number];
      // Until every job ran: a poll that finds nothing (the others hold the messages) tries again.
      while (runs.size < total) {
        const { response, delivered } = await env.emulator.deliver(queue, handler);
        expect(response.batchItemFailures).toEqual([]);
        resent += delivered;
      }
    };
    await Promise.all(Array.from({ length: pollers }, (_, index) => poll(index)));

    expect(maxRunning).toBe(2);
    expect(runs.size).toBe(total);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    // Far more deliveries than jobs: most were waits (each a re-sent copy, not an attempt).
    expect(resent).toBeGreaterThan(total);
    expect(await env.emulator.receive(dlq)).toEqual([]);
    expect(await env.emulator.receive(queue)).toEqual([]);
  }, 240_000);

  it('dead-letters a record whose concurrency key cannot be computed, on its first delivery, with the evidence', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('bad-key', false);
    let ran = 0;
    const job = defineJob({
      type: 'reports.bad-key',
      queue: 'reports',
      schema,
      concurrency: {
        key: (data) => (data.reportId === 1 ? (undefined as unknown as string) : data.tenantId),
        limit: 1,
      },
      run: async () => {
        ran += 1;
      },
    });
    await env.emulator.send(
      queue,
      createEnvelope({ type: job.type, source: '/t', data: { tenantId: 't', reportId: 1 } }),
    );
    const { response } = await env.emulator.deliver(queue, worker([job], queue, dlq));
    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toBe(0);
    const [dead] = await env.emulator.receive(dlq);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('ConcurrencyKeyError');
    expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
      /concurrency key of reports.bad-key \(limit reports.bad-key\).*must return a non-empty string, got undefined/,
    );
  });

  it('FIFO: a record over the limit waits in its group with a visibility delay (no attempt spent); the group keeps its order', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('fifo-limit', true);
    const ran: { reportId: number; attempt: number }[] = [];
    const job = defineJob({
      type: 'reports.fifo',
      queue: 'reports',
      schema,
      // Every group calls one partner: at most one run at a time, whatever the group.
      concurrency: { key: () => 'partner', limit: 1, name: 'partner-calls' },
      async run({ reportId }, ctx) {
        ran.push({ reportId, attempt: ctx.attempt });
      },
    });
    // Another instance holds the partner's only slot.
    const other = await new LimitStore({ tableName: env.tableName }).slots.acquire({
      name: 'partner-calls',
      key: 'partner',
      limit: 1,
      expiresAtMs: Date.now() + 60_000,
    });
    if (other.status !== 'acquired') throw new Error('the slot should be free');
    for (const reportId of [20, 21]) {
      await env.emulator.send(
        queue,
        createEnvelope({ type: job.type, source: '/t', data: { tenantId: 'b', reportId } }),
        'b',
      );
    }
    const handler = worker([job], queue, dlq);
    const first = await env.emulator.deliver(queue, handler);
    // 20 waits for the slot, 21 stays behind it: both come back, in order, nothing ran.
    expect(first.response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(
      first.messages.map((m) => m.MessageId),
    );
    expect(ran).toEqual([]);
    await other.slot.release();
    while (ran.length < 2) await env.emulator.deliver(queue, handler);
    expect(ran).toEqual([
      { reportId: 20, attempt: 1 },
      { reportId: 21, attempt: 1 },
    ]);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });

  it('rate limit: a wait too long for the run re-sends the record and hands its lease back without spending an attempt', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('rate', false);
    const clock = { now: Date.now() };
    // One token per 100 s: the second job's wait is far beyond a tenth of its 30 s run.
    const slow = defineRateLimit({ name: 'slow-partner', perSecond: 0.01, burst: 1, adaptive: false });
    const attempts: number[] = [];
    const job = defineJob({
      type: 'reports.rate',
      queue: 'reports',
      schema,
      rateLimits: [slow],
      async run({ reportId }, ctx) {
        attempts.push(ctx.attempt);
        await ctx.rateLimit(slow, { key: 'tenant-r' });
        return reportId;
      },
    });
    for (const reportId of [1, 2]) {
      await env.emulator.send(
        queue,
        createEnvelope({
          type: job.type,
          source: '/t',
          id: `r-${reportId}`,
          data: { tenantId: 't', reportId },
        }),
      );
    }
    const handler = worker([job], queue, dlq, () => clock.now);
    let delivered = 0;
    while (delivered < 2) delivered += (await env.emulator.deliver(queue, handler)).delivered;
    const store = new DynamoIdempotencyStore({ tableName: env.tableName });
    const records = await Promise.all(['r-1', 'r-2'].map((id) => store.readRecord(job.type, `/t\n${id}`)));
    const statuses = records.map((r) => r?.status).sort();
    // One took the token and completed; the other was handed back (attempt restored to 0: the next
    // delivery runs as attempt 1 again) and re-sent with a delay of at least the 100 s estimate.
    expect(statuses).toEqual(['COMPLETED', 'RELEASED']);
    expect(records.find((r) => r?.status === 'RELEASED')?.attempt).toBe(0);
    const attributes = await env.emulator.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
      }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });

  it('rate limit: a short wait happens inside the run (both jobs of the batch complete, nothing re-sent)', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('rate-short', false);
    // One token per 50 ms: the second job waits about 50 ms, well under a tenth of its 30 s.
    const quick = defineRateLimit({ name: 'quick-partner', perSecond: 20, burst: 1, adaptive: false });
    const job = defineJob({
      type: 'reports.rate-short',
      queue: 'reports',
      schema,
      rateLimits: [quick],
      async run({ reportId }, ctx) {
        await ctx.rateLimit(quick);
        return reportId;
      },
    });
    for (const reportId of [1, 2]) {
      await env.emulator.send(
        queue,
        createEnvelope({ type: job.type, source: '/t', data: { tenantId: 't', reportId } }),
      );
    }
    const messages = await env.emulator.receiveWithin(queue, 2_000);
    const more = messages.length < 2 ? await env.emulator.receiveWithin(queue, 2_000) : [];
    const records = [...messages, ...more].map((m) => recordFromMessage(m, queue.arn));
    expect(records.length).toBe(2);
    const response = await worker([job], queue, dlq)(sqsEvent(records), lambdaContext(60_000));
    expect(response.batchItemFailures).toEqual([]);
    const store = new DynamoIdempotencyStore({ tableName: env.tableName });
    const statuses = await Promise.all(
      records.map(async (r) => (await store.readRecord(job.type, `/t\n${JSON.parse(r.body).id}`))?.status),
    );
    expect(statuses).toEqual(['COMPLETED', 'COMPLETED']);
    const attributes = await env.emulator.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    expect(attributes.Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesDelayed: '0',
    });
  });
});
