/**
 * A batch id names one batch: a start under an existing id with other children or another
 * completion job is refused (`InvalidBatch`) and sends nothing, for a producer and for a job's
 * `ctx.startBatch` alike (both start through `startBatchWith`); the same spec again sends the same
 * child ids (absorbed as duplicates by the children's idempotency).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type BatchSpec, type BatchStarter, startBatchWith } from '../../lib/client/batch-start.ts';
import type { BatchEntry } from '../../lib/client/prepare.ts';
import { defineJob } from '../../lib/runtime/job.ts';

const child = defineJob({
  type: 'dd.child',
  queue: 'work',
  schema: z.object({ i: z.number() }),
  async run() {},
});
const summary = defineJob({ type: 'dd.summary', queue: 'work', schema: z.object({}), async run() {} });

function ports() {
  const items = new Map<string, Record<string, AttributeValue>>();
  const sentChildren: BatchEntry[][] = [];
  const send = {
    async sendBatch(entries: BatchEntry[]) {
      sentChildren.push(entries);
      return { failed: [] };
    },
    async sendEnvelope() {},
    checkEnvelope: () => ({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/work' }),
    async checkBatch() {},
  };
  const table = {
    tableName: 'jobs',
    async putIfAbsent(item: Record<string, AttributeValue>) {
      const pk = item.pk?.S as string;
      const existing = items.get(pk);
      if (existing === undefined) items.set(pk, item);
      return existing;
    },
  };
  return { send, table, sentChildren, schedule: async () => {} };
}

const spec = (values: number[], completionData: object = {}): BatchSpec => ({
  children: values.map((i) => ({ job: child, data: { i } })),
  completion: { job: summary, data: completionData },
});

/** A job's start (ctx.startBatch): its lineage and partition key go on every child. */
const jobStarter = (now: number): BatchStarter => ({
  batchId: 'derived-from-the-job',
  source: '/worker',
  now,
  lineageOf: () => ({ parent: { id: 'start-1', rootId: 'start-1', job: 'dd.start#start-1' } }),
  partitionKey: 'tenant-1',
  parentJob: 'dd.start#start-1',
});

describe('a batch started again under its id', () => {
  it("a job's re-run with the same count but other child data: InvalidBatch, nothing sent", async () => {
    const p = ports();
    await startBatchWith(spec([1, 2]), jobStarter(1_000), p.send, p.table, p.schedule);
    await expect(
      startBatchWith(spec([100, 200]), jobStarter(2_000), p.send, p.table, p.schedule),
    ).rejects.toMatchObject({
      code: 'InvalidBatch',
      senderFault: true,
      message: expect.stringMatching(
        /batch derived-from-the-job exists with other children or another completion job \(same count, 2/,
      ),
    });
    await expect(
      startBatchWith(spec([1, 2], { other: true }), jobStarter(2_000), p.send, p.table, p.schedule),
    ).rejects.toMatchObject({ code: 'InvalidBatch' });
    expect(p.sentChildren).toHaveLength(1);
  });

  it('the same spec again (a later time): created false, the same child ids sent again', async () => {
    const p = ports();
    const first = await startBatchWith(spec([1, 2]), jobStarter(1_000), p.send, p.table, p.schedule);
    const again = await startBatchWith(spec([1, 2]), jobStarter(9_000), p.send, p.table, p.schedule);
    expect(first.created).toBe(true);
    expect(again).toEqual({ batchId: 'derived-from-the-job', total: 2, created: false });
    const ids = p.sentChildren.map((entries) => entries.map((e) => e.options?.id));
    expect(ids[1]).toEqual(ids[0]);
  });
});
