/**
 * A reused envelope `id` on a FIFO queue, within SQS's 5-minute deduplication interval, on the
 * emulators (fauxqs, dynalite) with JobClient as the producer: a resend of the same job is dropped
 * by SQS and runs once; a different job under the reused id is never silently dropped: the same
 * type with other data reaches the worker and is dead-lettered as `PayloadMismatchError` with
 * evidence, another type runs under its own identity.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import type { JobLogger } from '../../lib/core/logger.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { guardedWorker, useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();
const quiet: JobLogger = { debug() {}, info() {}, warn() {}, error() {} };

const worker = (jobs: AnyJob[], queue: EmulatedQueue, dlq: EmulatedQueue) =>
  guardedWorker(env, { queueName: 'invoices', queue, dlq, jobs });

describe('a reused envelope id on a FIFO queue', () => {
  it('drops a resend of the same job, and delivers a different job under the same id to a clear outcome', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('invoices', true);
    const issued: string[] = [];
    const voided: string[] = [];
    const issue = defineJob({
      type: 'billing.issue-invoice',
      queue: 'invoices',
      schema: z.object({ orderId: z.string() }),
      async run({ orderId }) {
        issued.push(orderId);
      },
    });
    const voidInvoice = defineJob({
      type: 'billing.void-invoice',
      queue: 'invoices',
      schema: z.object({ orderId: z.string() }),
      async run({ orderId }) {
        voided.push(orderId);
      },
    });
    const client = new JobClient({
      source: '/shop',
      queueUrls: { invoices: queue.url },
      sqs: env.emulator.sqs,
      logger: quiet,
    });
    const options = { id: 'order-1', partitionKey: 'user-7' };
    const first = await client.send(issue, { orderId: 'o-1' }, options);
    const resend = await client.send(issue, { orderId: 'o-1' }, options);
    const otherData = await client.send(issue, { orderId: 'o-2' }, options);
    const otherType = await client.send(voidInvoice, { orderId: 'o-1' }, options);
    // Every send reports success; only the resend of the very same job shares the first's message.
    expect(resend.messageId).toBe(first.messageId);
    expect(new Set([first.messageId, otherData.messageId, otherType.messageId]).size).toBe(3);

    const handler = worker([issue, voidInvoice], queue, dlq);
    const delivered: string[] = [];
    // fauxqs hands out one message per FIFO group per receive: deliver until the group is empty.
    for (;;) {
      const { messages, response } = await env.emulator.deliver(queue, handler);
      if (messages.length === 0) break;
      expect(response.batchItemFailures).toEqual([]);
      delivered.push(...messages.map((m) => m.MessageId ?? ''));
    }
    expect(delivered).toEqual([first.messageId, otherData.messageId, otherType.messageId]);
    expect(issued).toEqual(['o-1']);
    expect(voided).toEqual(['o-1']);

    const [dead, ...more] = await env.emulator.receiveWithin(dlq, 2_000);
    expect(more).toEqual([]);
    expect(JSON.parse(dead?.Body ?? '{}')).toMatchObject({
      id: 'order-1',
      type: 'billing.issue-invoice',
      data: { orderId: 'o-2' },
    });
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('PayloadMismatchError');
    expect(dead?.MessageAttributes?.SourceMessageId?.StringValue).toBe(otherData.messageId);
  });
});
