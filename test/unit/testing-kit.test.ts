/**
 * The test kit users get (`sqs-jobs/testing`): `runJob` reports what one job did as the worker
 * would see it; `jobRecord` builds the records Lambda delivers; `MemoryIdempotencyStore` makes a
 * real worker absorb duplicates, refuse a reused key with other data, retry and skip done steps.
 */
import { defineJob, defineRateLimit, PermanentError, TransientError } from 'sqs-jobs';
import { jobRecord, MemoryIdempotencyStore, runJob } from 'sqs-jobs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { failedIds, workerHarness } from '../factories/worker.ts';

const reminder = defineJob({
  type: 'billing.remind',
  queue: 'billing',
  schema: z.object({ invoiceId: z.string() }),
  async run() {},
});

const invoice = defineJob({
  type: 'billing.issue-invoice',
  queue: 'billing',
  schema: z.object({ orderId: z.string(), amountCents: z.number().int() }),
  retry: { maxAttempts: 3 },
  async run({ orderId, amountCents }, ctx) {
    if (amountCents < 0) throw new PermanentError(`negative amount for ${orderId}`);
    if (orderId === 'flaky') throw new TransientError('partner answered 503');
    const invoiceId = await ctx.once('create', async () => `inv-${orderId}`);
    ctx.logger.info('invoice created', { invoiceId });
    ctx.enqueue(reminder, { invoiceId });
    ctx.enqueue(reminder, { invoiceId }, { partitionKey: 'other-group', delaySeconds: 60 });
    return { invoiceId, idempotencyKey: ctx.idempotencyKey('create'), lineage: ctx.lineage };
  },
});

describe('runJob', () => {
  it('reports the result, the steps, the log lines and the children as the worker would send them', async () => {
    const done = await runJob(
      invoice,
      { orderId: 'o-1', amountCents: 500 },
      { jobId: 'job-1', source: '/shop', partitionKey: 'user-7', lineage: { correlationId: 'c-1' } },
    );
    expect(done.status).toBe('completed');
    if (done.status !== 'completed') return;
    expect(done.result.invoiceId).toBe('inv-o-1');
    expect(done.result.lineage).toMatchObject({
      rootJobId: 'job-1',
      correlationId: 'c-1',
      parentJobId: undefined,
    });
    expect(done.key).toBe('/shop\njob-1');
    expect(done.steps).toEqual([{ name: 'create', value: 'inv-o-1', ran: true }]);
    expect(done.logs).toEqual([
      { level: 'info', message: 'invoice created', extra: { invoiceId: 'inv-o-1' } },
    ]);
    expect(
      done.children.map((c) => [c.type, c.queue, c.partitionKey, c.delaySeconds, c.parentJobId]),
    ).toEqual([
      ['billing.remind', 'billing', 'user-7', undefined, 'job-1'],
      ['billing.remind', 'billing', 'other-group', 60, 'job-1'],
    ]);
    expect(new Set(done.children.map((c) => c.id)).size).toBe(2);

    // A re-run of the same job derives the same child ids and external idempotency key: no second child.
    const again = await runJob(
      invoice,
      { orderId: 'o-1', amountCents: 500 },
      { jobId: 'job-1', source: '/shop', partitionKey: 'user-7' },
    );
    expect(again.children.map((c) => c.id)).toEqual(done.children.map((c) => c.id));
    expect(again.status === 'completed' && again.result.idempotencyKey).toBe(done.result.idempotencyKey);
  });

  it('skips a step an earlier run completed, returning its recorded value', async () => {
    const retried = await runJob(
      invoice,
      { orderId: 'o-2', amountCents: 1 },
      { attempt: 2, completedSteps: { create: 'inv-recorded' } },
    );
    expect(retried.status === 'completed' && retried.result.invoiceId).toBe('inv-recorded');
    expect(retried.steps).toEqual([{ name: 'create', value: 'inv-recorded', ran: false }]);
    expect(retried.attempt).toBe(2);
  });

  it('classifies failures and says whether the worker would retry or dead-letter', async () => {
    const refused = await runJob(invoice, { orderId: 'o-3', amountCents: -1 });
    expect(refused).toMatchObject({ status: 'failed', ran: true, next: 'dead-letter' });
    expect(refused.status === 'failed' && refused.classification.kind).toBe('permanent');
    expect(refused.children).toEqual([]);

    const flaky = await runJob(invoice, { orderId: 'flaky', amountCents: 1 }, { attempt: 2 });
    expect(flaky).toMatchObject({ status: 'failed', next: 'retry', classification: { kind: 'transient' } });
    const lastTry = await runJob(invoice, { orderId: 'flaky', amountCents: 1 }, { attempt: 3 });
    expect(lastTry).toMatchObject({
      status: 'failed',
      next: 'dead-letter',
      classification: { kind: 'transient' },
    });
  });

  it('refuses data that does not match the schema without running the job', async () => {
    const invalid = await runJob(invoice, { orderId: 'o-4', amountCents: 1.5 });
    expect(invalid).toMatchObject({ status: 'failed', ran: false, next: 'dead-letter' });
    if (invalid.status !== 'failed') return;
    expect((invalid.error as Error).name).toBe('JobDataInvalidError');
    expect((invalid.error as Error).message).toContain('amountCents');
  });

  it('aborts ctx.signal at the time limit, or at the Lambda deadline when that comes first (transient JobTimeoutError)', async () => {
    const waits = defineJob({
      type: 'waits',
      queue: 'q',
      schema: z.object({}),
      run: (_data, ctx) =>
        new Promise<void>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        }),
    });
    const own = await runJob(waits, {}, { timeoutMs: 20 });
    expect(own).toMatchObject({ status: 'failed', next: 'retry', classification: { kind: 'transient' } });
    expect(own.status === 'failed' && (own.error as Error).name).toBe('JobTimeoutError');
    expect(own.status === 'failed' && (own.error as Error).message).toMatch(/job|timeoutSeconds/);
    const lambda = await runJob(waits, {}, { timeoutMs: 60_000, remainingMs: 20 });
    expect(lambda.status === 'failed' && (lambda.error as Error).message).toMatch(/Lambda|deadline/i);
  });

  it('names a step value the store would not keep (a retry reaching the step would be dead-lettered)', async () => {
    const dated = defineJob({
      type: 'dated',
      queue: 'q',
      schema: z.object({}),
      async run(_data, ctx) {
        await ctx.once('when', async () => new Map([['a', 1]]) as never);
      },
    });
    const outcome = await runJob(dated, {});
    expect(outcome.steps[0]?.notStoredReason).toMatch(/step 'when' returned a Map/);
  });
});

describe('jobRecord', () => {
  it('builds a FIFO record grouped by the partition key, or a standard one', () => {
    const fifo = jobRecord(
      invoice,
      { orderId: 'o', amountCents: 1 },
      { id: 'j-1', partitionKey: 'user-7', receiveCount: 3 },
    );
    expect(fifo.attributes.MessageGroupId).toBe('user-7');
    expect(fifo.attributes.ApproximateReceiveCount).toBe('3');
    expect(fifo.attributes.SequenceNumber).toBeDefined();
    expect(fifo.eventSourceARN).toMatch(/:jobs\.fifo$/);
    expect(JSON.parse(fifo.body)).toMatchObject({
      type: 'billing.issue-invoice',
      id: 'j-1',
      partitionkey: 'user-7',
    });

    const standard = jobRecord('billing.remind', { invoiceId: 'i' });
    expect(standard.attributes.MessageGroupId).toBeUndefined();
    expect(standard.eventSourceARN).toMatch(/:jobs$/);
  });

  it('refuses a FIFO record without a partition key, saying what to pass', () => {
    expect(() => jobRecord('billing.remind', { invoiceId: 'i' }, { fifo: true })).toThrow(
      /needs a partitionKey/,
    );
  });
});

describe('MemoryIdempotencyStore with createWorker', () => {
  it('absorbs a duplicate delivery: the job runs once, the duplicate is acknowledged', async () => {
    let runs = 0;
    const counted = defineJob({
      type: 'counted',
      queue: 'q',
      schema: z.object({ n: z.number() }),
      async run({ n }) {
        runs += 1;
        return { doubled: n * 2 };
      },
    });
    const store = new MemoryIdempotencyStore();
    const { invoke } = workerHarness({ jobs: [counted], idempotency: store });
    const first = await invoke([jobRecord(counted, { n: 2 }, { id: 'same' })]);
    const duplicate = await invoke([jobRecord(counted, { n: 2 }, { id: 'same', receiveCount: 2 })]);
    expect(failedIds(first.response)).toEqual([]);
    expect(failedIds(duplicate.response)).toEqual([]);
    expect(runs).toBe(1);
    expect(store.record('counted', '/tests\nsame')).toMatchObject({
      status: 'COMPLETED',
      attempt: 1,
      result: { doubled: 4 },
    });
  });

  it('dead-letters the same key with different data (PayloadMismatchError), with evidence', async () => {
    const counted = defineJob({
      type: 'counted',
      queue: 'q',
      schema: z.object({ n: z.number() }),
      async run() {},
    });
    const store = new MemoryIdempotencyStore();
    const harness = workerHarness({ jobs: [counted], idempotency: store });
    await harness.invoke([jobRecord(counted, { n: 1 }, { id: 'reused' })]);
    const other = await harness.invoke([jobRecord(counted, { n: 2 }, { id: 'reused' })]);
    expect(failedIds(other.response)).toEqual([]);
    const [dead] = harness.sqs.sentTo(harness.dlqUrl);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('PayloadMismatchError');
    expect(JSON.parse(dead?.MessageBody ?? '{}')).toMatchObject({ id: 'reused', data: { n: 2 } });
  });

  it('retries a transient failure with the next attempt, and a retry skips the steps already done', async () => {
    let charges = 0;
    let failNext = true;
    const charge = defineJob({
      type: 'charge',
      queue: 'q',
      schema: z.object({}),
      async run(_data, ctx) {
        await ctx.once('charge', async () => {
          charges += 1;
          return { chargeId: 'ch-1' };
        });
        if (failNext) {
          failNext = false;
          throw new TransientError('receipt service down');
        }
        return ctx.attempt;
      },
    });
    const store = new MemoryIdempotencyStore();
    const harness = workerHarness({ jobs: [charge], idempotency: store });
    const record = jobRecord(charge, {}, { id: 'c-1' });
    const first = await harness.invoke([record]);
    expect(failedIds(first.response)).toEqual([record.messageId]);
    expect(store.record('charge', '/tests\nc-1')).toMatchObject({ status: 'RELEASED', attempt: 1 });
    await harness.invoke([{ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: '2' } }]);
    expect(charges).toBe(1);
    expect(store.record('charge', '/tests\nc-1')).toMatchObject({
      status: 'COMPLETED',
      attempt: 2,
      result: 2,
    });
  });
});

describe('runJob and rate limits', () => {
  it('records the tokens a job takes and a throttled call, with the worker checks', async () => {
    const partner = defineRateLimit({ name: 'partner-api', perSecond: 5 });
    const job = defineJob({
      type: 'kit.rate-limited',
      queue: 'jobs',
      schema: z.object({ tenant: z.string() }),
      rateLimits: [partner],
      async run(data, ctx) {
        const permit = await ctx.rateLimit(partner, { key: data.tenant });
        await permit.throttled();
      },
    });
    const done = await runJob(job, { tenant: 't-1' });
    expect(done.status).toBe('completed');
    expect(done.rateLimits).toEqual([{ name: 'partner-api', key: 't-1', throttled: true }]);

    const undeclared = defineJob({
      type: 'kit.undeclared-limit',
      queue: 'jobs',
      schema: z.object({}),
      async run(_data, ctx) {
        await ctx.rateLimit(partner);
      },
    });
    const failed = await runJob(undeclared, {});
    expect(failed.status).toBe('failed');
    if (failed.status === 'failed') {
      expect(failed.classification.kind).toBe('permanent');
      expect(String(failed.error)).toContain('not in its rateLimits');
    }
  });
});

describe('runJob and batches', () => {
  it('records a batch the job starts, with the id the worker would give it, and refuses a bad spec as the worker does', async () => {
    const child = defineJob({
      type: 'kit.child',
      queue: 'jobs',
      schema: z.object({ n: z.number() }),
      run: async () => {},
    });
    const summary = defineJob({
      type: 'kit.summary',
      queue: 'jobs',
      schema: z.object({}),
      run: async () => {},
    });
    const fanOut = defineJob({
      type: 'kit.fan-out',
      queue: 'jobs',
      schema: z.object({ count: z.number(), openLimitSeconds: z.number().optional() }),
      async run({ count, openLimitSeconds }, ctx) {
        const children = Array.from({ length: count }, (_, n) => ({ job: child, data: { n } }));
        return ctx.startBatch({ children, completion: { job: summary, data: {} }, openLimitSeconds });
      },
    });
    const first = await runJob(fanOut, { count: 3 }, { jobId: 'run-1' });
    const again = await runJob(fanOut, { count: 3 }, { jobId: 'run-1' });
    expect(first.status).toBe('completed');
    expect(first.batches).toHaveLength(1);
    expect(first.batches[0]?.spec.children).toHaveLength(3);
    // A re-run of the same job starts the same batch.
    expect(again.batches[0]?.batchId).toBe(first.batches[0]?.batchId);

    const refused = await runJob(fanOut, { count: 3, openLimitSeconds: -1 }, { jobId: 'run-2' });
    expect(refused.status).toBe('failed');
    if (refused.status === 'failed') expect(refused.classification.kind).toBe('permanent');
  });

  it('gives a completion job the batch the test passes', async () => {
    const summary = defineJob({
      type: 'kit.summary-reader',
      queue: 'jobs',
      schema: z.object({}),
      async run(_data, ctx) {
        return { total: ctx.batch?.total, failed: ctx.batch?.deadLettered };
      },
    });
    const batch = { id: 'b-1', total: 2, succeeded: 1, deadLettered: 1, children: async function* () {} };
    const done = await runJob(summary, {}, { batch });
    expect(done.status === 'completed' && done.result).toEqual({ total: 2, failed: 1 });
  });
});

describe('runJob refuses a batch the worker would refuse', () => {
  // The messages are the worker's own: runJob starts the batch with the worker's code.
  it('a child or completion whose data fails its schema, or a missing completion: permanent, as the worker dead-letters it', async () => {
    const child = defineJob({
      type: 'kit.bchild',
      queue: 'jobs',
      schema: z.object({ n: z.number() }),
      run: async () => {},
    });
    const summary = defineJob({
      type: 'kit.bsummary',
      queue: 'jobs',
      schema: z.object({ day: z.string() }),
      run: async () => {},
    });
    const starter = (spec: (n: number) => unknown) =>
      defineJob({
        type: 'kit.bstart',
        queue: 'jobs',
        schema: z.object({}),
        async run(_data, ctx) {
          ctx.startBatch(spec(1) as never);
        },
      });
    const cases: Array<[string, (n: number) => unknown, RegExp]> = [
      [
        'child data',
        () => ({
          children: [{ job: child, data: { n: 'x' } }],
          completion: { job: summary, data: { day: 'd' } },
        }),
        /entry 0 \(kit\.bchild\): data\.n/,
      ],
      [
        'completion data',
        () => ({ children: [{ job: child, data: { n: 1 } }], completion: { job: summary, data: {} } }),
        /completion\.data fails the schema of kit\.bsummary/,
      ],
      [
        'no completion',
        () => ({ children: [{ job: child, data: { n: 1 } }] }),
        /completion must be \{ job, data, options\? \}/,
      ],
    ];
    for (const [name, spec, message] of cases) {
      const outcome = await runJob(starter(spec), {});
      expect(outcome.status, name).toBe('failed');
      if (outcome.status === 'failed') {
        expect(outcome.classification.kind, name).toBe('permanent');
        expect(outcome.next, name).toBe('dead-letter');
        expect(String(outcome.error), name).toMatch(message);
      }
    }
  });
});
