/**
 * The billing job under jest (ESM: `node --experimental-vm-modules`, TypeScript through
 * @swc/jest): the same kit as under vitest.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createWorker } from 'sqs-jobs';
import {
  jobRecord,
  lambdaContext,
  MemoryIdempotencyStore,
  MemorySqs,
  queueUrl,
  runJob,
  sqsEvent,
} from 'sqs-jobs/testing';
import { billingJobs, issueInvoice } from '../jobs/billing.ts';
import { partner } from '../jobs/partner.ts';

afterEach(() => {
  jest.restoreAllMocks();
});

describe('billing.issue-invoice (jest)', () => {
  it('creates the invoice and chains the email', async () => {
    jest.spyOn(partner, 'createInvoice').mockResolvedValue({ id: 'inv-1' });
    const outcome = await runJob(issueInvoice, { orderId: 'o-1', amountCents: 1200 });
    expect(outcome.status).toBe('completed');
    expect(outcome.children.map((child) => child.type)).toEqual(['emails.send-invoice']);
  });

  it('refuses an order with nothing to invoice, permanently', async () => {
    const refused = await runJob(issueInvoice, { orderId: 'o-3', amountCents: -5 });
    expect(refused.status === 'failed' && refused.classification.kind).toBe('permanent');
  });

  it('runs a job delivered twice once in the real worker', async () => {
    const create = jest.spyOn(partner, 'createInvoice').mockResolvedValue({ id: 'inv-5' });
    const sqs = new MemorySqs();
    const handler = createWorker({
      jobs: billingJobs,
      idempotency: new MemoryIdempotencyStore(),
      sqs,
      queueName: 'billing',
      queueUrl: queueUrl('billing'),
      dlqUrl: queueUrl('billing-dlq'),
      queueUrls: { emails: queueUrl('emails') },
    });
    const delivery = jobRecord(issueInvoice, { orderId: 'o-5', amountCents: 900 }, { id: 'order-5' });
    await handler(sqsEvent([delivery]), lambdaContext());
    const duplicate = await handler(sqsEvent([{ ...delivery, messageId: 'again' }]), lambdaContext());
    expect(duplicate.batchItemFailures).toEqual([]);
    expect(create).toHaveBeenCalledTimes(1);
    expect(sqs.batchEntries()).toHaveLength(1);
  });
});
