/**
 * AFTER: the same consumer on sqs-jobs, producers unchanged. The job takes the producers' raw
 * messages (`raw`): `from: 'sns'` reads an SNS notification (raw delivery off) and a plain JSON
 * body (raw delivery on, or a direct `SendMessage`) alike, and `id: { field: 'orderId' }` makes
 * the order id the job's identity, so a producer retry and an SNS redelivery are absorbed as
 * `makeIdempotent` on `orderId` absorbed them. Envelopes sent later with `JobClient` run the same
 * job. The schema replaces the hand-written check: a message that fails it, or has no
 * `orderId`, goes to the DLQ at once with evidence saying what was missing.
 */
import { createWorker, defineJob } from 'sqs-jobs';
import { z } from 'zod';
import { chargeOrder } from './orders.ts';

export const chargeOrderJob = defineJob({
  type: 'orders.charge',
  queue: 'orders',
  schema: z.object({ orderId: z.string().min(1), totalCents: z.number().int() }),
  raw: { from: 'sns', id: { field: 'orderId' } },
  async run(order) {
    return chargeOrder(order);
  },
});

/** The Lambda handler; its queue, DLQ and idempotency table come from the JobQueue's environment. */
export const handler = createWorker({ jobs: [chargeOrderJob] });
