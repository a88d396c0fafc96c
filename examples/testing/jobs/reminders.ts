/**
 * A user's job with limits: `billing.send-reminder` calls the partner's reminder API, which takes
 * one call per ten minutes per account (a rate limit), and sends at most one reminder per customer
 * at a time (a concurrency limit keyed by customer). Its worker keeps both in the idempotency table;
 * a unit test gives it `MemoryLimitStore` instead.
 */
import { defineJob, defineRateLimit } from 'sqs-jobs';
import { z } from 'zod';

export const reminderApi = defineRateLimit({
  name: 'partner-reminders',
  perSecond: 1 / 600,
  burst: 1,
  adaptive: false,
});

export const sendReminder = defineJob({
  type: 'billing.send-reminder',
  queue: 'reminders',
  schema: z.object({ customerId: z.string(), invoiceId: z.string() }),
  concurrency: { key: (data) => data.customerId, limit: 1 },
  rateLimits: [reminderApi],
  async run({ invoiceId }, ctx) {
    await ctx.rateLimit(reminderApi);
    return { reminded: invoiceId };
  },
});
