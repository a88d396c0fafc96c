/**
 * A job with limits under vitest: `runJob` evaluates the concurrency key and records the rate
 * tokens as the worker does; the real worker with `MemoryLimitStore` holds a run over its rate back
 * (sent again with a delay, no attempt spent), as on DynamoDB.
 */
import { createWorker } from 'sqs-jobs';
import {
  jobRecord,
  lambdaContext,
  MemoryIdempotencyStore,
  MemoryLimitStore,
  MemorySqs,
  queueUrl,
  runJob,
  sqsEvent,
} from 'sqs-jobs/testing';
import { describe, expect, it } from 'vitest';
import { sendReminder } from '../jobs/reminders.ts';

describe('billing.send-reminder', () => {
  it('takes a token of the partner limit, and dead-letters a reminder without a customer (its concurrency key)', async () => {
    const sent = await runJob(sendReminder, { customerId: 'c-1', invoiceId: 'inv-1' });
    expect(sent.status).toBe('completed');
    expect(sent.rateLimits).toEqual([{ name: 'partner-reminders', key: undefined, throttled: false }]);

    const noCustomer = await runJob(sendReminder, { customerId: '', invoiceId: 'inv-2' });
    expect(noCustomer).toMatchObject({ status: 'failed', next: 'dead-letter', ran: false });
    expect(noCustomer.status === 'failed' && (noCustomer.error as Error).name).toBe('ConcurrencyKeyError');
  });
});

describe('the reminders worker with MemoryLimitStore', () => {
  it('holds the second reminder back until the partner limit has a token: sent again with a delay, not failed', async () => {
    const sqs = new MemorySqs();
    const handler = createWorker({
      jobs: [sendReminder],
      idempotency: new MemoryIdempotencyStore(),
      limits: new MemoryLimitStore(),
      sqs,
      queueName: 'reminders',
      queueUrl: queueUrl('reminders'),
      dlqUrl: queueUrl('reminders-dlq'),
    });
    const first = await handler(
      sqsEvent([jobRecord(sendReminder, { customerId: 'c-1', invoiceId: 'inv-1' }, { id: 'r-1' })]),
      lambdaContext(),
    );
    const second = await handler(
      sqsEvent([jobRecord(sendReminder, { customerId: 'c-2', invoiceId: 'inv-2' }, { id: 'r-2' })]),
      lambdaContext(),
    );

    expect(first.batchItemFailures).toEqual([]);
    expect(second.batchItemFailures).toEqual([]);
    // The second run waits: a copy on the worker's own queue, delayed, and nothing dead-lettered.
    const [copy] = sqs.sentTo(queueUrl('reminders'));
    expect(JSON.parse(copy?.MessageBody ?? '{}').id).toBe('r-2');
    expect(copy?.DelaySeconds).toBeGreaterThan(0);
    expect(sqs.sentTo(queueUrl('reminders-dlq'))).toEqual([]);
  });
});
