/**
 * The kit's promise: what passes in `runJob` behaves the same in the real worker. Each case runs
 * one job both ways (runJob, and createWorker with the kit's memory stores) and asserts the same
 * outcome: the concurrency key, the idempotency key, the children and batches the worker refuses
 * after the run, a FIFO job without a partition key. And runJob's own options are checked as the
 * package's other options are. Only the kit's public API is used, as a user's test would.
 */
import { createWorker, defineJob, type JobDefinition } from 'sqs-jobs';
import {
  jobRecord,
  lambdaContext,
  MemoryIdempotencyStore,
  MemoryLimitStore,
  MemorySqs,
  queueUrl,
  runJob,
  sqsEvent,
} from 'sqs-jobs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

type WorkerJobs = Parameters<typeof createWorker>[0]['jobs'];

/** Runs `job` once in a real worker on queue `jobs`; the ErrorName of its dead letter, if any. */
async function workerDeadLetter<D>(
  job: JobDefinition<D>,
  data: D,
  others: WorkerJobs = [],
  queueUrls: Record<string, string> = { jobs: queueUrl('jobs') },
): Promise<string | undefined> {
  const sqs = new MemorySqs();
  const handler = createWorker({
    jobs: [job as unknown as WorkerJobs[number], ...others],
    idempotency: new MemoryIdempotencyStore(),
    limits: new MemoryLimitStore(),
    sqs,
    queueName: 'jobs',
    queueUrl: queueUrl('jobs'),
    dlqUrl: queueUrl('jobs-dlq'),
    queueUrls,
  });
  await handler(sqsEvent([jobRecord(job, data as never, { id: 'parity-1' })]), lambdaContext());
  const [deadLetter] = sqs.sentTo(queueUrl('jobs-dlq'));
  return deadLetter?.MessageAttributes?.ErrorName?.StringValue;
}

describe('runJob fails where the worker dead-letters', () => {
  it('a concurrency key that throws or is empty: ConcurrencyKeyError, not run, dead-lettered', async () => {
    for (const [name, key] of [
      [
        'throws',
        () => {
          throw new Error('boom');
        },
      ],
      ['empty', () => ''],
      ['not a string', () => 42 as unknown as string],
    ] as const) {
      let ran = false;
      const job = defineJob({
        type: 'kit.limited',
        queue: 'jobs',
        schema: z.object({ tenant: z.string() }),
        concurrency: { key, limit: 1 },
        async run() {
          ran = true;
        },
      });
      const outcome = await runJob(job, { tenant: 't-1' });
      expect(outcome.status, name).toBe('failed');
      if (outcome.status !== 'failed') continue;
      expect((outcome.error as Error).name, name).toBe('ConcurrencyKeyError');
      expect(outcome.next, name).toBe('dead-letter');
      expect(outcome.ran, name).toBe(false);
      expect(ran, name).toBe(false);
      // The real worker, with the kit's limit store: the same error name on the dead letter.
      expect(await workerDeadLetter(job, { tenant: 't-1' }), name).toBe('ConcurrencyKeyError');
      expect(ran, name).toBe(false);
    }
  });

  it('an idempotency key that throws: JobIdentityError, as the worker', async () => {
    const job = defineJob({
      type: 'kit.keyed',
      queue: 'jobs',
      schema: z.object({ orderId: z.string() }),
      idempotency: {
        key: () => {
          throw new Error('no key');
        },
      },
      async run() {},
    });
    const outcome = await runJob(job, { orderId: 'o-1' });
    expect(outcome.status === 'failed' && (outcome.error as Error).name).toBe('JobIdentityError');
    expect(await workerDeadLetter(job, { orderId: 'o-1' })).toBe('JobIdentityError');
  });

  it('a batch whose completion job is on a FIFO queue without a partition key: ChildRejectedError, as the worker', async () => {
    const child = defineJob({
      type: 'kit.part',
      queue: 'jobs',
      schema: z.object({ n: z.number() }),
      run: async () => {},
    });
    const summary = defineJob({
      type: 'kit.total',
      queue: 'totals',
      ordered: true,
      schema: z.object({}),
      run: async () => {},
    });
    const fanOut = defineJob({
      type: 'kit.split',
      queue: 'jobs',
      schema: z.object({}),
      async run(_data, ctx) {
        ctx.startBatch({
          children: [{ job: child, data: { n: 1 } }],
          completion: { job: summary, data: {} },
        });
      },
    });
    // From the job definitions (summary is `ordered`: its queue is FIFO).
    const outcome = await runJob(fanOut, {});
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect((outcome.error as Error).name).toBe('ChildRejectedError');
    expect(String(outcome.error)).toMatch(/partition/i);
    expect(outcome.next).toBe('dead-letter');
    // With the worker's queue URLs, the same for a FIFO queue whose jobs do not say `ordered`.
    const plain = defineJob({
      type: 'kit.total2',
      queue: 'totals',
      schema: z.object({}),
      run: async () => {},
    });
    const fanOut2 = defineJob({
      type: 'kit.split2',
      queue: 'jobs',
      schema: z.object({}),
      async run(_data, ctx) {
        ctx.startBatch({ children: [], completion: { job: plain, data: {} } });
      },
    });
    const urls = { jobs: queueUrl('jobs'), totals: queueUrl('totals.fifo') };
    const exact = await runJob(fanOut2, {}, { queueUrls: urls });
    expect(exact.status === 'failed' && String(exact.error)).toMatch(/ChildRejectedError.*partition/is);
    // And with a partition key the same batch passes.
    const grouped = await runJob(fanOut2, {}, { queueUrls: urls, partitionKey: 'g-1' });
    expect(grouped.status).toBe('completed');
  });

  it('a child enqueued to a queue the worker has no URL for: ChildRejectedError, as the worker', async () => {
    const audit = defineJob({ type: 'kit.audit', queue: 'audit', schema: z.object({}), run: async () => {} });
    const parent = defineJob({
      type: 'kit.parent',
      queue: 'jobs',
      schema: z.object({}),
      async run(_data, ctx) {
        ctx.enqueue(audit, {});
      },
    });
    const outcome = await runJob(parent, {}, { queueUrls: { jobs: queueUrl('jobs') } });
    expect(outcome.status === 'failed' && (outcome.error as Error).name).toBe('ChildRejectedError');
    expect(outcome.status === 'failed' && String(outcome.error)).toMatch(/audit/);
    expect(await workerDeadLetter(parent, {}, [audit])).toBe('ChildRejectedError');
    // Without queueUrls the kit makes one per queue named: the child is sent.
    expect((await runJob(parent, {})).status).toBe('completed');
  });
});

describe("a worker on the kit's MemoryIdempotencyStore and ctx.startBatch", () => {
  it('dead-letters the starting job with a message that is true (no batches in memory) and says what to use in a test', async () => {
    const child = defineJob({ type: 'kit.piece', queue: 'jobs', schema: z.object({}), run: async () => {} });
    const fanOut = defineJob({
      type: 'kit.fan',
      queue: 'jobs',
      schema: z.object({}),
      async run(_data, ctx) {
        ctx.startBatch({ children: [{ job: child, data: {} }], completion: { job: child, data: {} } });
      },
    });
    const sqs = new MemorySqs();
    const handler = createWorker({
      jobs: [fanOut, child],
      idempotency: new MemoryIdempotencyStore(),
      sqs,
      queueName: 'jobs',
      queueUrl: queueUrl('jobs'),
      dlqUrl: queueUrl('jobs-dlq'),
      queueUrls: { jobs: queueUrl('jobs') },
    });
    await handler(sqsEvent([jobRecord(fanOut, {})]), lambdaContext());
    const [deadLetter] = sqs.sentTo(queueUrl('jobs-dlq'));
    expect(deadLetter?.MessageAttributes?.ErrorName?.StringValue).toBe('ChildRejectedError');
    const message = deadLetter?.MessageAttributes?.ErrorMessage?.StringValue ?? '';
    expect(message).toMatch(/MemoryIdempotencyStore keeps no batches/);
    expect(message).toMatch(/runJob \(sqs-jobs\/testing\)/);
    expect(message).not.toMatch(/a worker with idempotency on/);
    // And runJob, as the message says, checks and records the batch.
    const outcome = await runJob(fanOut, {});
    expect(outcome.status).toBe('completed');
    expect(outcome.batches).toHaveLength(1);
  });
});

describe('runJob options', () => {
  it('refuses an attempt the worker never sees, a timeout ≤ 0 and an unknown key, naming the fix', async () => {
    const job = defineJob({ type: 'kit.any', queue: 'jobs', schema: z.object({}), run: async () => {} });
    await expect(runJob(job, {}, { attempt: 0 })).rejects.toThrow(
      /options\.attempt must be an integer ≥ 1.*got a number \(0\)/,
    );
    await expect(runJob(job, {}, { attempt: -1 })).rejects.toThrow(/options\.attempt must be an integer ≥ 1/);
    await expect(runJob(job, {}, { attempt: 1.5 })).rejects.toThrow(/options\.attempt/);
    await expect(runJob(job, {}, { timeoutMs: -5 })).rejects.toThrow(
      /options\.timeoutMs must be a number of milliseconds > 0/,
    );
    await expect(runJob(job, {}, { jobid: 'x' } as never)).rejects.toThrow(
      /options\.jobid is not an option \(known: .*\); did you mean jobId\?/,
    );
    await expect(runJob(job, {}, { lineage: { parentId: 'p' } } as never)).rejects.toThrow(
      /options\.lineage\.parentId is not an option.*did you mean parentJobId\?/,
    );
    // Every problem at once.
    await expect(runJob(job, {}, { attempt: 0, timeoutMs: 0 })).rejects.toThrow(/attempt.*timeoutMs/);
    expect((await runJob(job, {}, { attempt: 3, timeoutMs: 10 })).status).toBe('completed');
  });

  it('refuses completedSteps that is not name → value and a batch that is not a BatchContext, naming what to pass (not a transient TypeError in the job)', async () => {
    const summary = defineJob({
      type: 'kit.batch-reader',
      queue: 'jobs',
      schema: z.object({}),
      async run(_data, ctx) {
        await ctx.once('read', async () => 1);
        let seen = 0;
        for await (const _child of ctx.batch?.children() ?? []) seen += 1;
        return seen;
      },
    });
    await expect(runJob(summary, {}, { completedSteps: null } as never)).rejects.toThrow(
      /options\.completedSteps must be an object of step name → the value its earlier run returned .*got null/,
    );
    await expect(runJob(summary, {}, { completedSteps: ['read'] } as never)).rejects.toThrow(
      /options\.completedSteps must be an object.*got an array/,
    );
    await expect(runJob(summary, {}, { batch: {} } as never)).rejects.toThrow(
      /options\.batch\.id must be a non-empty string.*options\.batch\.total must be an integer ≥ 0, got undefined.*options\.batch\.children must be a function returning an async iterable/,
    );
    await expect(runJob(summary, {}, { batch: 'b-1' } as never)).rejects.toThrow(
      /options\.batch must be \{ id: string, total, succeeded, deadLettered: integers ≥ 0, children\(\)/,
    );
    const counts = { id: 'b-1', total: 1, succeeded: 1, deadLettered: 1 };
    await expect(runJob(summary, {}, { batch: { ...counts, children: [] } } as never)).rejects.toThrow(
      /succeeded \+ deadLettered \(2\) must be at most total \(1\).*options\.batch\.children must be a function.*got an array/,
    );
    // The shapes the errors name run.
    const done = await runJob(
      summary,
      {},
      {
        completedSteps: { read: 1 },
        batch: { ...counts, total: 2, children: async function* () {} },
      },
    );
    expect(done.status === 'completed' && done.result).toBe(0);
  });
});
