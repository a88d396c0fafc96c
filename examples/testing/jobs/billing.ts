/**
 * A user's jobs: `billing.issue-invoice` creates the invoice at the partner (once, even when the
 * job runs again) and chains the email that sends it.
 */
import { defineJob, PermanentError } from 'sqs-jobs';
import { z } from 'zod';
import { partner } from './partner.ts';

export const sendInvoiceEmail = defineJob({
  type: 'emails.send-invoice',
  queue: 'emails',
  schema: z.object({ invoiceId: z.string() }),
  async run() {},
});

export const issueInvoice = defineJob({
  type: 'billing.issue-invoice',
  queue: 'billing',
  schema: z.object({ orderId: z.string().min(1), amountCents: z.number().int() }),
  retry: { maxAttempts: 4 },
  timeoutSeconds: 10,
  async run({ orderId, amountCents }, ctx) {
    if (amountCents <= 0) throw new PermanentError(`order ${orderId}: nothing to invoice`);
    const invoice = await ctx.once('create-invoice', () =>
      partner.createInvoice(
        { orderId, amountCents },
        { idempotencyKey: ctx.idempotencyKey('create-invoice'), signal: ctx.signal },
      ),
    );
    ctx.enqueue(sendInvoiceEmail, { invoiceId: invoice.id });
    return { invoiceId: invoice.id };
  },
});

/** The jobs of the billing queue's worker (`createWorker({ jobs: billingJobs })` in its Lambda entry). */
export const billingJobs = [issueInvoice];
