/**
 * `emails.send-receipt` on the standard `emails` queue: independent work, run in parallel and
 * kept to one side effect per job by the idempotency table, not by order.
 */
import { defineJob } from 'sqs-jobs';
import * as z from 'zod/mini';

/** What a job's run returns: stored in the idempotency table as the job's result. */
export interface ReceiptResult {
  readonly jobId: string;
  readonly source: string;
  readonly orderId: string;
  readonly receiptId: string;
}

export const sendReceipt = defineJob({
  type: 'emails.send-receipt',
  queue: 'emails',
  schema: z.object({ orderId: z.string().check(z.minLength(1), z.maxLength(128)) }),
  // The JobQueue derives maxAttempts and the worker's time limits from these (lib/stack.ts: jobs).
  retry: { maxAttempts: 8, baseDelaySeconds: 2, maxDelaySeconds: 300 },
  timeoutSeconds: 10,
  async run({ orderId }, ctx): Promise<ReceiptResult> {
    // A real job would call a mail API here, with ctx.idempotencyKey('send') as its
    // Idempotency-Key header and ctx.signal as its abort signal; `once` keeps a retry of a
    // half-done job from sending twice.
    const receiptId = await ctx.once(
      'send',
      async () => `receipt-${ctx.idempotencyKey('send').slice(0, 16)}`,
    );
    ctx.logger.info('receipt sent', { orderId, receiptId });
    return { jobId: ctx.jobId, source: ctx.source, orderId, receiptId };
  },
});
