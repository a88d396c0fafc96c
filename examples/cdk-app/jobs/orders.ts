/**
 * `orders.record-step` on the FIFO `orders` queue: the steps of one order (placed → paid →
 * shipped) are sent with the customer id as partition key (`MessageGroupId`), so one customer's
 * steps run one at a time, in order, while different customers run in parallel. The last step
 * chains a receipt email onto the standard `emails` queue.
 */
import { defineJob, PermanentError } from 'sqs-jobs';
// zod/mini: zod's schemas, tree-shakable (classic `zod` adds ~450 KiB to each worker bundle).
import * as z from 'zod/mini';
import { sendReceipt } from './emails.ts';

export const ORDER_STEPS = ['placed', 'paid', 'shipped'] as const;

/** What a job's run returns: stored in the idempotency table as the job's result. */
export interface OrderStepResult {
  readonly jobId: string;
  readonly source: string;
  readonly customerId: string;
  readonly orderId: string;
  readonly step: (typeof ORDER_STEPS)[number];
}

export const recordOrderStep = defineJob({
  type: 'orders.record-step',
  queue: 'orders',
  // Ids only: the worker would reload the order itself.
  schema: z.object({
    orderId: z.string().check(z.minLength(1), z.maxLength(128)),
    step: z.enum(ORDER_STEPS),
  }),
  retry: { maxAttempts: 5, baseDelaySeconds: 1, maxDelaySeconds: 30 },
  timeoutSeconds: 10,
  async run({ orderId, step }, ctx): Promise<OrderStepResult> {
    const customerId = ctx.partitionKey;
    if (customerId === undefined)
      throw new PermanentError('orders are sent with the customer id as partition key');
    // Sent only if this run succeeds; a re-run enqueues the same child (same id), not a second one.
    if (step === 'shipped') ctx.enqueue(sendReceipt, { orderId });
    ctx.logger.info('order step recorded', { customerId, orderId, step });
    return { jobId: ctx.jobId, source: ctx.source, customerId, orderId, step };
  },
});
