/**
 * `ordered: true`: a job that needs order per key runs from a FIFO message group; a message of it
 * that arrives without one (sent to a standard queue) is dead-lettered with evidence on its first
 * delivery, never retried, never run.
 */
import { defineJob } from 'sqs-jobs';
import { JobClient } from 'sqs-jobs/client';
import { jobRecord, MemorySqs, queueUrl, sqsRecord } from 'sqs-jobs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { failedIds, workerHarness } from '../factories/worker.ts';

function orderedJob(ran: string[]) {
  return defineJob({
    type: 'booking.confirm',
    queue: 'booking',
    schema: z.object({ bookingId: z.string() }),
    ordered: true,
    async run({ bookingId }) {
      ran.push(bookingId);
    },
  });
}

describe('an ordered job', () => {
  it('runs from a FIFO message group', async () => {
    const ran: string[] = [];
    const harness = workerHarness({ jobs: [orderedJob(ran)], fifo: true });
    const { response } = await harness.invoke([
      jobRecord('booking.confirm', { bookingId: 'b-1' }, { partitionKey: 'user-7' }),
    ]);
    expect(failedIds(response)).toEqual([]);
    expect(ran).toEqual(['b-1']);
  });

  it('is dead-lettered, not run and not retried, when it arrives without a FIFO message group', async () => {
    const ran: string[] = [];
    const harness = workerHarness({ jobs: [orderedJob(ran)] });
    const standard = jobRecord(
      'booking.confirm',
      { bookingId: 'b-2' },
      { partitionKey: 'user-7', fifo: false },
    );
    // A standard queue may carry a MessageGroupId (fair queues) without any order: refused too.
    const fair = sqsRecord({ body: standard.body, groupId: 'user-7', queue: 'booking' });
    const { response } = await harness.invoke([standard, fair]);
    expect(failedIds(response)).toEqual([]);
    expect(ran).toEqual([]);
    const dead = harness.sqs.sentTo(harness.dlqUrl);
    expect(dead.map((m) => m.MessageBody)).toEqual([standard.body, fair.body]);
    for (const message of dead) {
      expect(message.MessageAttributes?.ErrorName?.StringValue).toBe('OrderedJobWithoutGroupError');
      expect(message.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
        /booking\.confirm needs order per key \(ordered: true\) but arrived without a FIFO message group/,
      );
    }
    expect(harness.sqs.visibilityChanges()).toEqual([]);
  });

  it('is refused by defineJob when ordered is not a boolean', () => {
    expect(() =>
      defineJob({
        type: 'x',
        queue: 'q',
        schema: z.object({}),
        ordered: 'yes' as unknown as boolean,
        async run() {},
      }),
    ).toThrow(/ordered must be a boolean, got "yes"/);
  });
});

describe('JobClient and an ordered job', () => {
  it('refuses to send it to a standard queue, saying why, and sends nothing', async () => {
    const sqs = new MemorySqs();
    const standard = new JobClient({ source: '/shop', queueUrls: { booking: queueUrl('booking') }, sqs });
    await expect(
      standard.send(orderedJob([]), { bookingId: 'b-1' }, { partitionKey: 'user-7' }),
    ).rejects.toThrow(
      /queue "booking" resolves to a standard queue .* but booking\.confirm needs order per key \(ordered: true\), which only a FIFO queue keeps/,
    );
    expect(sqs.calls).toEqual([]);

    const fifo = new JobClient({ source: '/shop', queueUrls: { booking: queueUrl('booking.fifo') }, sqs });
    await fifo.send(orderedJob([]), { bookingId: 'b-1' }, { partitionKey: 'user-7' });
    expect(sqs.batchEntries().map((entry) => entry.MessageGroupId)).toEqual(['user-7']);
  });
});
