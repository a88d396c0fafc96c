/**
 * The billing job under vitest: one run with a test context (`runJob`), then the real worker
 * with the in-memory idempotency store and SQS client, where a duplicate delivery is absorbed.
 */
import { createWorker, TransientError } from 'sqs-jobs';
import {
  jobRecord,
  lambdaContext,
  MemoryIdempotencyStore,
  MemorySqs,
  queueUrl,
  runJob,
  sqsEvent,
  sqsRecord,
} from 'sqs-jobs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { billingJobs, issueInvoice } from '../jobs/billing.ts';
import { partner } from '../jobs/partner.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('billing.issue-invoice', () => {
  it('creates the invoice with a stable idempotency key and chains the email', async () => {
    const create = vi.spyOn(partner, 'createInvoice').mockResolvedValue({ id: 'inv-1' });
    const outcome = await runJob(issueInvoice, { orderId: 'o-1', amountCents: 1200 }, { jobId: 'job-1' });

    expect(outcome.status).toBe('completed');
    expect(outcome.status === 'completed' && outcome.result).toEqual({ invoiceId: 'inv-1' });
    expect(outcome.children).toMatchObject([{ type: 'emails.send-invoice', data: { invoiceId: 'inv-1' } }]);
    const [, options] = create.mock.calls[0] ?? [];
    const again = await runJob(issueInvoice, { orderId: 'o-1', amountCents: 1200 }, { jobId: 'job-1' });
    // The same job run again sends the partner the same key and enqueues the same child id.
    expect(create.mock.calls[1]?.[1].idempotencyKey).toBe(options?.idempotencyKey);
    expect(again.children[0]?.id).toBe(outcome.children[0]?.id);
  });

  it('does not call the partner again on a retry after the invoice was created', async () => {
    const create = vi.spyOn(partner, 'createInvoice');
    const outcome = await runJob(
      issueInvoice,
      { orderId: 'o-2', amountCents: 500 },
      { attempt: 2, completedSteps: { 'create-invoice': { id: 'inv-2' } } },
    );
    expect(create).not.toHaveBeenCalled();
    expect(outcome.steps).toEqual([{ name: 'create-invoice', value: { id: 'inv-2' }, ran: false }]);
  });

  it('dead-letters an order with nothing to invoice, and retries a partner outage', async () => {
    const refused = await runJob(issueInvoice, { orderId: 'o-3', amountCents: 0 });
    expect(refused).toMatchObject({
      status: 'failed',
      next: 'dead-letter',
      classification: { kind: 'permanent' },
    });

    vi.spyOn(partner, 'createInvoice').mockRejectedValue(new TransientError('partner answered 503'));
    const outage = await runJob(issueInvoice, { orderId: 'o-4', amountCents: 100 });
    expect(outage).toMatchObject({ status: 'failed', next: 'retry', classification: { kind: 'transient' } });
  });
});

describe('the billing worker', () => {
  const worker = () => {
    const store = new MemoryIdempotencyStore();
    const sqs = new MemorySqs();
    const handler = createWorker({
      jobs: billingJobs,
      idempotency: store,
      sqs,
      queueName: 'billing',
      queueUrl: queueUrl('billing'),
      dlqUrl: queueUrl('billing-dlq'),
      queueUrls: { emails: queueUrl('emails') },
    });
    return { handler, store, sqs };
  };

  it('runs a job delivered twice once: one invoice, one email', async () => {
    const create = vi.spyOn(partner, 'createInvoice').mockResolvedValue({ id: 'inv-5' });
    const { handler, sqs } = worker();
    const delivery = jobRecord(issueInvoice, { orderId: 'o-5', amountCents: 900 }, { id: 'order-5' });
    const first = await handler(sqsEvent([delivery]), lambdaContext());
    const duplicate = await handler(sqsEvent([{ ...delivery, messageId: 'redelivered' }]), lambdaContext());

    expect(first.batchItemFailures).toEqual([]);
    expect(duplicate.batchItemFailures).toEqual([]);
    expect(create).toHaveBeenCalledTimes(1);
    expect(sqs.batchEntries()).toHaveLength(1);
  });

  it('dead-letters a body that is no job, with the evidence', async () => {
    const { handler, sqs } = worker();
    await handler(sqsEvent([sqsRecord({ body: '{"orderId":"o-6"}' })]), lambdaContext());
    const [deadLetter] = sqs.sentTo(queueUrl('billing-dlq'));
    expect(deadLetter?.MessageBody).toBe('{"orderId":"o-6"}');
    expect(deadLetter?.MessageAttributes?.ErrorName?.StringValue).toBe('EnvelopeError');
  });
});
