/**
 * `MemoryLimitStore` (sqs-jobs/testing): a real worker whose jobs declare `concurrency` or
 * `rateLimits` runs in a unit test without DynamoDB, and waits as in production: a record over
 * its limit is sent again with a delay and acknowledged, without spending an attempt. Only the
 * kit's public API is used, as a user's test would.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../lib/runtime/job.ts';
import { defineRateLimit } from '../../lib/runtime/limits/rate-limit.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { WorkerConfigError } from '../../lib/runtime/worker-errors.ts';
import {
  jobRecord,
  lambdaContext,
  MemoryIdempotencyStore,
  MemoryLimitStore,
  MemorySqs,
  queueUrl,
  sqsEvent,
} from '../../lib/testing/index.ts';

function worker(jobs: Parameters<typeof createWorker>[0]['jobs'], limits: MemoryLimitStore) {
  const sqs = new MemorySqs();
  const handler = createWorker({
    jobs,
    idempotency: new MemoryIdempotencyStore(),
    limits,
    sqs,
    queueName: 'reports',
    queueUrl: queueUrl('reports'),
    dlqUrl: queueUrl('reports-dlq'),
  });
  return { sqs, handler };
}

/** The copies the worker sent back to its own queue to wait (a record over a limit). */
function waiting(sqs: MemorySqs) {
  return sqs.sentTo(queueUrl('reports')).map((input) => ({
    id: JSON.parse(input.MessageBody ?? '{}').id as string,
    delaySeconds: input.DelaySeconds ?? 0,
  }));
}

describe('MemoryLimitStore with createWorker', () => {
  it('holds a tenant to its concurrency: a second run of the key waits while the first holds the slot', async () => {
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const runs: string[] = [];
    const build = defineJob({
      type: 'reports.build',
      queue: 'reports',
      schema: z.object({ tenant: z.string(), report: z.string() }),
      concurrency: { key: (data) => data.tenant, limit: 1 },
      async run({ report }) {
        runs.push(report);
        if (report === 'r-1') {
          started();
          await gate;
        }
      },
    });
    const limits = new MemoryLimitStore();
    const { sqs, handler } = worker([build], limits);

    const first = handler(
      sqsEvent([jobRecord(build, { tenant: 't-1', report: 'r-1' }, { id: 'r-1' })]),
      lambdaContext(),
    );
    await firstStarted;
    const second = await handler(
      sqsEvent([jobRecord(build, { tenant: 't-1', report: 'r-2' }, { id: 'r-2' })]),
      lambdaContext(),
    );
    // Another tenant is not held back.
    await handler(
      sqsEvent([jobRecord(build, { tenant: 't-2', report: 'r-3' }, { id: 'r-3' })]),
      lambdaContext(),
    );
    finish();
    await first;

    expect(second.batchItemFailures).toEqual([]);
    expect(runs).toEqual(['r-1', 'r-3']);
    expect(waiting(sqs)).toEqual([{ id: 'r-2', delaySeconds: expect.any(Number) }]);
    expect(sqs.sentTo(queueUrl('reports-dlq'))).toEqual([]);
    // The slot is free again once the run ended.
    expect((await limits.slots.read('reports.build', 't-1')).holders.size).toBe(0);
  });

  it('spends a rate limit: the run after the burst waits as long as the rate says', async () => {
    // One token every 10 minutes: the second run's wait is too long to sleep inside the run.
    const partner = defineRateLimit({ name: 'partner-api', perSecond: 1 / 600, burst: 1, adaptive: false });
    const runs: string[] = [];
    const sync = defineJob({
      type: 'partner.sync',
      queue: 'reports',
      schema: z.object({ orderId: z.string() }),
      rateLimits: [partner],
      async run({ orderId }, ctx) {
        await ctx.rateLimit(partner);
        runs.push(orderId);
      },
    });
    const limits = new MemoryLimitStore();
    const { sqs, handler } = worker([sync], limits);

    await handler(sqsEvent([jobRecord(sync, { orderId: 'o-1' }, { id: 'o-1' })]), lambdaContext());
    const second = await handler(
      sqsEvent([jobRecord(sync, { orderId: 'o-2' }, { id: 'o-2' })]),
      lambdaContext(),
    );

    expect(second.batchItemFailures).toEqual([]);
    expect(runs).toEqual(['o-1']);
    expect(waiting(sqs).map((copy) => copy.id)).toEqual(['o-2']);
    expect((await limits.buckets.read(partner, '*')).tokens).toBeLessThan(1);
  });

  it('lowers an adaptive rate on a throttling report, once per interval, as the DynamoDB store does', async () => {
    let now = 1_000_000;
    const limits = new MemoryLimitStore({ now: () => now });
    const partner = defineRateLimit({ name: 'partner-api', perSecond: 10, burst: 10 });
    expect(await limits.buckets.take(partner, 'tenant-7')).toEqual({ granted: true });
    await limits.buckets.throttled(partner, 'tenant-7');
    await limits.buckets.throttled(partner, 'tenant-7'); // the same overload episode
    expect(await limits.buckets.read(partner, 'tenant-7')).toMatchObject({ rate: 5, tokens: 0 });
    now += 200;
    // Empty after the decrease: a token comes at the lowered rate (plus its recovery).
    expect(await limits.buckets.take(partner, 'tenant-7')).toEqual({ granted: true });
    expect(await limits.buckets.take(partner, 'tenant-7')).toMatchObject({ granted: false });
  });
});

describe('MemoryLimitStore options', () => {
  const request = { name: 'reports.build', key: 'tenant-7', limit: 1, expiresAtMs: 60_000 };

  it('refuses a clock that is not a number of epoch ms (NaN would turn every limit off), naming the option', async () => {
    expect(() => new MemoryLimitStore({ now: () => Number.NaN })).toThrow(
      new RangeError(
        'MemoryLimitStore options.now must return a finite number of epoch milliseconds, got a number (NaN)',
      ),
    );
    expect(() => new MemoryLimitStore({ now: 5 as never })).toThrow(
      /options\.now must be a function returning epoch milliseconds .*got a number \(5\)/,
    );
    // A clock that goes bad later fails where it is read, not with the limit silently off.
    let ms = 1_000;
    const limits = new MemoryLimitStore({ now: () => ms });
    expect((await limits.slots.acquire(request)).status).toBe('acquired');
    ms = Number.NaN;
    await expect(limits.slots.acquire(request)).rejects.toThrow(RangeError);
    ms = 2_000;
    expect((await limits.slots.acquire(request)).status).toBe('full');
  });

  it('refuses null options, an unknown key and a negative lease margin, saying what to pass', () => {
    expect(() => new MemoryLimitStore(null as never)).toThrow(
      new TypeError(
        'MemoryLimitStore options must be an object { now?: () => epoch ms, leaseMarginMs?: number ≥ 0 } (or nothing), got null',
      ),
    );
    expect(() => new MemoryLimitStore({ clock: () => 1 } as never)).toThrow(
      /MemoryLimitStore options\.clock is not an option \(known: .*now/,
    );
    expect(() => new MemoryLimitStore({ leaseMarginMs: -1 })).toThrow(
      /options\.leaseMarginMs must be a finite number of milliseconds ≥ 0, got a number \(-1\)/,
    );
    expect(() => new MemoryLimitStore({ now: () => 0, leaseMarginMs: 0 })).not.toThrow();
  });
});

describe('createWorker limits option', () => {
  const limited = defineJob({
    type: 'reports.limited',
    queue: 'reports',
    schema: z.object({ tenant: z.string() }),
    concurrency: { key: (data) => data.tenant, limit: 1 },
    async run() {},
  });

  it('refuses a limits object that is not a limit store when the worker is made, saying what to pass (no record retried on a TypeError)', () => {
    const make = (limits: unknown) => () => worker([limited], limits as MemoryLimitStore);
    expect(make({})).toThrow(WorkerConfigError);
    expect(make({})).toThrow(
      'invalid worker configuration: limits must be a limit store: new LimitStore({ tableName }) (sqs-jobs), MemoryLimitStore (sqs-jobs/testing) in a unit test, or false for none; it has no slots.acquire, buckets.take, buckets.throttled. Leave it out to use a LimitStore on JOBS_IDEMPOTENCY_TABLE',
    );
    expect(make({ slots: { acquire: async () => ({}) }, buckets: {} })).toThrow(
      /it has no buckets\.take, buckets\.throttled/,
    );
    expect(make(null)).toThrow(/limits must be a limit store: .*; got null/);
    expect(make(new MemoryLimitStore())).not.toThrow();
  });
});
