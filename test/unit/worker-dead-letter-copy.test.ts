/**
 * What a user of the test kit (sqs-jobs/testing: jobRecord, MemoryIdempotencyStore) sees when a
 * job that fails for good reaches the worker as two messages: one DLQ message, and the copy
 * acknowledged as a duplicate with a log line naming the dead-lettered message. A record built
 * after the dead-lettering (a redrive) still runs.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PermanentError } from '../../lib/core/errors.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { MemoryIdempotencyStore } from '../../lib/testing/memory-store.ts';
import { jobRecord } from '../../lib/testing/sqs-events.ts';
import { workerHarness } from '../factories/worker.ts';

function declinedCharge() {
  let runs = 0;
  const job = defineJob({
    type: 'orders.charge',
    queue: 'jobs',
    schema: z.object({ orderId: z.string() }),
    run: async () => {
      runs += 1;
      throw new PermanentError('card declined');
    },
  });
  return { job, runs: () => runs };
}

describe('a job that fails for good, delivered as two messages', () => {
  it('is dead-lettered once; the copy is acknowledged as a duplicate naming the dead letter', async () => {
    const { job, runs } = declinedCharge();
    const h = workerHarness({ idempotency: new MemoryIdempotencyStore(), jobs: [job] });
    // Both sent before the worker saw either: a producer's resend after a lost response.
    const sentAtMs = Date.now() - 5_000;
    const first = jobRecord(job, { orderId: 'o-1' }, { id: 'charge-1', messageId: 'm-1', sentAtMs });
    const copy = jobRecord(job, { orderId: 'o-1' }, { id: 'charge-1', messageId: 'm-2', sentAtMs });

    await h.invoke([first]);
    const { response, logs, emf } = await h.invoke([copy]);

    expect(runs()).toBe(1);
    expect(h.sqs.sentTo(h.dlqUrl)).toHaveLength(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'duplicate delivery absorbed: a copy of a job already dead-lettered',
        outcome: 'duplicate',
        reason: 'copy-of-dead-letter',
        deadLetteredMessageId: 'm-1',
      }),
    );
    expect(emf).toContainEqual(expect.objectContaining({ JobDuplicateAbsorbed: 1 }));
  });

  it('a redrive of the dead letter (a record built after it) runs again', async () => {
    const { job, runs } = declinedCharge();
    const h = workerHarness({ idempotency: new MemoryIdempotencyStore(), jobs: [job] });
    await h.invoke([jobRecord(job, { orderId: 'o-2' }, { id: 'charge-2', messageId: 'm-1' })]);

    await h.invoke([jobRecord(job, { orderId: 'o-2' }, { id: 'charge-2', messageId: 'm-redrive' })]);

    expect(runs()).toBe(2);
    expect(h.sqs.sentTo(h.dlqUrl)).toHaveLength(2);
  });
});
