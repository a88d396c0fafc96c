/**
 * Batch scheduling through createWorker: FIFO groups one at a time and in order, groups in
 * parallel, a failure holding back the rest of its group only; standard batches at full width
 * (every record at once, capped) or up to the `maxConcurrency` override; nothing carried from one
 * invocation to the next.
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import { isFifoRecord, MAX_DEFAULT_STANDARD_CONCURRENCY } from '../../lib/runtime/batch.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { failedIds, workerHarness } from '../factories/worker.ts';

const schema = z.object({ step: z.string(), mode: z.enum(['ok', 'transient', 'permanent']).default('ok') });
type Data = z.infer<typeof schema>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Records start/end of every run, and in-flight counts per group and overall. */
function tracker() {
  const events: string[] = [];
  const inFlight = new Map<string, number>();
  let total = 0;
  let maxTotal = 0;
  let maxPerGroup = 0;
  return {
    events,
    get maxTotal() {
      return maxTotal;
    },
    get maxPerGroup() {
      return maxPerGroup;
    },
    async around(group: string, step: string, work: () => Promise<void>) {
      inFlight.set(group, (inFlight.get(group) ?? 0) + 1);
      total += 1;
      maxTotal = Math.max(maxTotal, total);
      maxPerGroup = Math.max(maxPerGroup, inFlight.get(group) ?? 0);
      events.push(`start ${step}`);
      try {
        await work();
      } finally {
        events.push(`end ${step}`);
        inFlight.set(group, (inFlight.get(group) ?? 1) - 1);
        total -= 1;
      }
    },
  };
}

function stepJob(onRun: (data: Data, partitionKey: string | undefined) => Promise<void>) {
  return defineJob({
    type: 'booking.step',
    queue: 'booking',
    schema,
    retry: { maxAttempts: 5 },
    run: async (data, ctx) => {
      await onRun(data, ctx.partitionKey);
      if (data.mode === 'transient') throw new TransientError(`step ${data.step} hit a 503`);
      if (data.mode === 'permanent') throw new PermanentError(`step ${data.step} is invalid`);
    },
  });
}

/**
 * A gate every job waits at: `allStarted` resolves once `expected` jobs have started, and no job
 * gets past the gate before `open()`. Counts starts, finishes and the most jobs in flight.
 */
function gate(expected: number) {
  let opened!: () => void;
  const gateOpen = new Promise<void>((resolve) => {
    opened = resolve;
  });
  let reached!: () => void;
  const allStarted = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const state = {
    started: 0,
    finished: 0,
    inFlight: 0,
    maxInFlight: 0,
    allStarted,
    open: () => opened(),
    async run(_step: string) {
      state.started += 1;
      state.inFlight += 1;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      if (state.started === expected) reached();
      await gateOpen;
      state.inFlight -= 1;
      state.finished += 1;
    },
  };
  return state;
}

const standardRecords = (count: number) =>
  Array.from({ length: count }, (_, i) => sqsRecord({ body: jobBody('booking.step', { step: `s${i}` }) }));

const fifoRecord = (group: string, step: string, mode: Data['mode'] = 'ok') =>
  sqsRecord({ body: jobBody('booking.step', { step, mode }, { partitionKey: group }), groupId: group });

const ids = (records: readonly SQSRecord[]) => records.map((r) => r.messageId);

describe('FIFO batches', () => {
  it('runs each group one at a time in event order while interleaved groups run in parallel', async () => {
    const t = tracker();
    const h = workerHarness({
      fifo: true,
      jobs: [stepJob((data, group) => t.around(group ?? '', data.step, () => sleep(15)))],
    });
    const records = [
      fifoRecord('A', 'A1'),
      fifoRecord('B', 'B1'),
      fifoRecord('A', 'A2'),
      fifoRecord('C', 'C1'),
      fifoRecord('B', 'B2'),
      fifoRecord('A', 'A3'),
    ];
    const { response } = await h.invoke(records);

    expect(response.batchItemFailures).toEqual([]);
    for (const group of ['A', 'B', 'C']) {
      const own = t.events.filter((e) => e.split(' ')[1]?.startsWith(group));
      const expected = records
        .filter((r) => r.attributes.MessageGroupId === group)
        .flatMap((r) => {
          const step = (JSON.parse(r.body) as { data: Data }).data.step;
          return [`start ${step}`, `end ${step}`];
        });
      expect(own).toEqual(expected);
    }
    expect(t.maxPerGroup).toBe(1);
    expect(t.maxTotal).toBe(3);
  });

  it('stops a group at its failed record and reports the rest of that group failed, unrun', async () => {
    const ran: string[] = [];
    const h = workerHarness({
      fifo: true,
      random: () => 0.9999,
      jobs: [stepJob(async (data) => void ran.push(data.step))],
    });
    const records = [
      fifoRecord('A', 'A1'),
      fifoRecord('B', 'B1'),
      fifoRecord('A', 'A2', 'transient'),
      fifoRecord('B', 'B2'),
      fifoRecord('A', 'A3'),
      fifoRecord('A', 'A4'),
    ];
    const { response } = await h.invoke(records);

    expect(failedIds(response)).toEqual(ids([records[2], records[4], records[5]] as SQSRecord[]));
    expect(ran).toContain('A1');
    expect(ran).toContain('A2');
    expect(ran).not.toContain('A3');
    expect(ran).not.toContain('A4');
    expect(ran.filter((s) => s.startsWith('B'))).toEqual(['B1', 'B2']);
    // The whole group comes back together after the failed record's backoff, in order.
    const changes = h.sqs.visibilityChanges();
    expect(changes.map((c) => c.ReceiptHandle)).toEqual([
      records[2]?.receiptHandle,
      records[4]?.receiptHandle,
      records[5]?.receiptHandle,
    ]);
    expect(new Set(changes.map((c) => c.VisibilityTimeout))).toEqual(new Set([2]));
  });

  it('lets one group fail while another succeeds', async () => {
    const h = workerHarness({ fifo: true, jobs: [stepJob(async () => {})] });
    const records = [
      fifoRecord('user-1', 'u1-a', 'transient'),
      fifoRecord('user-2', 'u2-a'),
      fifoRecord('user-1', 'u1-b'),
      fifoRecord('user-2', 'u2-b'),
    ];
    const { response } = await h.invoke(records);
    expect(failedIds(response)).toEqual(ids([records[0], records[2]] as SQSRecord[]));
  });

  it('does not hold back a group after a dead-lettered record: it is handled', async () => {
    const ran: string[] = [];
    const h = workerHarness({ fifo: true, jobs: [stepJob(async (data) => void ran.push(data.step))] });
    const records = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2', 'permanent'), fifoRecord('A', 'A3')];
    const { response } = await h.invoke(records);
    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['A1', 'A2', 'A3']);
    expect(h.sqs.sentTo(h.dlqUrl).map((m) => m.MessageGroupId)).toEqual(['A']);
  });

  it('does not hold back a group after a malformed record either', async () => {
    const ran: string[] = [];
    const h = workerHarness({ fifo: true, jobs: [stepJob(async (data) => void ran.push(data.step))] });
    const records = [sqsRecord({ body: 'not json', groupId: 'A' }), fifoRecord('A', 'A2')];
    const { response } = await h.invoke(records);
    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['A2']);
  });

  it('carries nothing from one invocation to the next on a warm handler', async () => {
    const ran: string[] = [];
    let failFirst = true;
    const h = workerHarness({
      fifo: true,
      jobs: [
        stepJob(async (data) => {
          ran.push(data.step);
          if (data.step === 'A1' && failFirst) {
            failFirst = false;
            throw new TransientError('first try fails');
          }
        }),
      ],
    });
    const first = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2'), fifoRecord('B', 'B1')];
    const one = await h.invoke(first);
    expect(failedIds(one.response)).toEqual(ids([first[0], first[1]] as SQSRecord[]));

    // Redelivery of group A plus new work: nothing from the first call blocks or leaks into this one.
    const second = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2'), fifoRecord('C', 'C1')];
    const two = await h.invoke(second);
    expect(two.response).toStrictEqual({ batchItemFailures: [] });
    expect(ran.filter((s) => s === 'A2')).toHaveLength(1);
    expect(ran.filter((s) => s === 'A1')).toHaveLength(2);
  });
});

describe('standard batches', () => {
  it.each([1, 3, 10])(
    'keeps at most maxConcurrency=%i records in flight and runs them all',
    async (limit) => {
      const t = tracker();
      const h = workerHarness({
        maxConcurrency: limit,
        jobs: [stepJob((data) => t.around('all', data.step, () => sleep(10)))],
      });
      const records = Array.from({ length: 14 }, (_, i) =>
        sqsRecord({ body: jobBody('booking.step', { step: `s${i}` }) }),
      );
      const { response } = await h.invoke(records);
      expect(response.batchItemFailures).toEqual([]);
      expect(t.events.filter((e) => e.startsWith('end'))).toHaveLength(14);
      expect(t.maxTotal).toBe(limit);
    },
  );

  it('runs all 100 records of a standard batch at once by default: every job starts before any finishes', async () => {
    const g = gate(100);
    const h = workerHarness({ jobs: [stepJob((data) => g.run(data.step))] });
    const records = standardRecords(100);
    const invocation = h.invoke(records);
    await g.allStarted;
    expect(g.started).toBe(100);
    expect(g.finished).toBe(0);
    g.open();
    const { response } = await invocation;
    expect(response.batchItemFailures).toEqual([]);
    expect(g.finished).toBe(100);
    expect(g.maxInFlight).toBe(100);
  });

  it('runs fair-queue records (a MessageGroupId on a standard queue) all at once, not one per group', async () => {
    const g = gate(100);
    const h = workerHarness({ jobs: [stepJob((data) => g.run(data.step))] });
    const records = Array.from({ length: 100 }, (_, i) =>
      sqsRecord({
        body: jobBody('booking.step', { step: `s${i}` }, { partitionKey: `tenant-${i % 2}` }),
        groupId: `tenant-${i % 2}`,
        queue: 'jobs',
      }),
    );
    const invocation = h.invoke(records);
    await g.allStarted;
    expect(g.finished).toBe(0);
    g.open();
    expect((await invocation).response.batchItemFailures).toEqual([]);
  });

  it('holds a standard batch to maxConcurrency when given (the override)', async () => {
    const g = gate(7);
    const h = workerHarness({ maxConcurrency: 7, jobs: [stepJob((data) => g.run(data.step))] });
    const invocation = h.invoke(standardRecords(100));
    await g.allStarted;
    g.open();
    expect((await invocation).response.batchItemFailures).toEqual([]);
    expect(g.finished).toBe(100);
    expect(g.maxInFlight).toBe(7);
  });

  it(`caps the default width at MAX_DEFAULT_STANDARD_CONCURRENCY (${MAX_DEFAULT_STANDARD_CONCURRENCY})`, async () => {
    const g = gate(MAX_DEFAULT_STANDARD_CONCURRENCY);
    const h = workerHarness({ jobs: [stepJob((data) => g.run(data.step))] });
    const invocation = h.invoke(standardRecords(MAX_DEFAULT_STANDARD_CONCURRENCY + 100));
    await g.allStarted;
    g.open();
    expect((await invocation).response.batchItemFailures).toEqual([]);
    expect(g.finished).toBe(MAX_DEFAULT_STANDARD_CONCURRENCY + 100);
    expect(g.maxInFlight).toBe(MAX_DEFAULT_STANDARD_CONCURRENCY);
  });

  it('does not serialize a fair (standard) queue by MessageGroupId', async () => {
    const t = tracker();
    const h = workerHarness({ jobs: [stepJob((data) => t.around('tenant', data.step, () => sleep(10)))] });
    const records = Array.from({ length: 4 }, (_, i) =>
      sqsRecord({ body: jobBody('booking.step', { step: `s${i}` }), groupId: 'tenant-1', queue: 'jobs' }),
    );
    await h.invoke(records);
    expect(t.maxPerGroup).toBe(4);
  });

  it('keeps running the other records after one fails', async () => {
    const ran: string[] = [];
    const h = workerHarness({ maxConcurrency: 1, jobs: [stepJob(async (data) => void ran.push(data.step))] });
    const records = [
      sqsRecord({ body: jobBody('booking.step', { step: 's1', mode: 'transient' }) }),
      sqsRecord({ body: jobBody('booking.step', { step: 's2' }) }),
    ];
    const { response } = await h.invoke(records);
    expect(failedIds(response)).toEqual([records[0]?.messageId]);
    expect(ran).toEqual(['s1', 's2']);
  });
});

describe('isFifoRecord', () => {
  const base = sqsRecord({ body: '{}' });
  it.each([
    { name: 'FIFO source ARN', record: sqsRecord({ body: '{}', groupId: 'g' }), fifo: true },
    { name: 'standard source ARN', record: base, fifo: false },
    {
      name: 'fair standard queue with a group',
      record: sqsRecord({ body: '{}', groupId: 'g', queue: 'q' }),
      fifo: false,
    },
    {
      name: 'no ARN, group and sequence number',
      record: { ...sqsRecord({ body: '{}', groupId: 'g' }), eventSourceARN: '' },
      fifo: true,
    },
    { name: 'no ARN, no group', record: { ...base, eventSourceARN: '' }, fifo: false },
  ])('$name → $fifo', ({ record, fifo }) => {
    expect(isFifoRecord(record)).toBe(fifo);
  });
});
