/**
 * Through the local runtime: an invocation that dies after its side effect and before its
 * acknowledgement (the local runtime's lost-response fault) is delivered again, and the
 * idempotency store absorbs the repeat: one side effect.
 */
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobClient } from '../../lib/client/job-client.ts';
import type { InvocationReport } from '../../lib/local/event-source-mapping.ts';
import { sampleJobs } from '../../lib/sample/jobs.ts';
import { type SampleStack, startSampleStack } from '../../lib/sample/workload.ts';
import { waitFor } from '../factories/wait-for.ts';

let stack: SampleStack;
/** Every settled invocation, in order: what happened to a message is read from these events. */
const invocations: InvocationReport[] = [];

beforeAll(async () => {
  // The deployed visibility timeout (180 s): no run, however slow the machine, outlives it and is
  // delivered twice. The test makes the lost batch visible itself once the runtime settled it.
  // The default client timeout (5 s): a 1 s one can be outlasted by the payment call on a loaded
  // machine, and the retry would reach the payment API a second time.
  stack = await startSampleStack({
    onInvocation: (report) => invocations.push(report),
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('lost response on the local runtime', () => {
  it('redelivers the batch whose response was lost; idempotency absorbs it; one side effect', async () => {
    const { runtime, service, target, repository, metrics } = stack;
    await repository.putUser({ userId: 'u-lost', email: 'lost@example.com', name: 'Lost' });
    await repository.putBooking({
      bookingId: 'b-lost',
      userId: 'u-lost',
      sku: 'sku-01',
      quantity: 1,
      amountCents: 4_200,
      ordinal: 1,
      status: 'PENDING',
    });
    runtime.loseNextResponses('payments', 1);
    const client = new JobClient({
      source: '/test/lost-response',
      queueUrls: target.queueUrls,
      sqs: runtime.sqs,
    });
    const sent = await client.send(
      sampleJobs.capturePayment,
      { userId: 'u-lost', bookingId: 'b-lost' },
      { id: 'capture-b-lost' },
    );
    const ofMessage = () => invocations.filter((r) => r.messageIds.includes(sent.messageId));

    // The first delivery runs the job to completion (the payment is recorded) and loses its
    // response: nothing is acknowledged, the message stays on the queue.
    const [lost] = await waitFor(ofMessage, (reports) => reports.length >= 1);
    expect(lost?.outcome).toBe('lost');
    expect(lost?.failedMessageIds).toEqual([sent.messageId]);
    expect((await repository.getBooking('u-lost', 'b-lost')).paymentId).toMatch(/^pay_/);
    // What the visibility timeout does 180 s later: only a message left on the queue comes back.
    await runtime.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: runtime.queue('payments').url,
        ReceiptHandle: lost?.receiptHandles[0],
        VisibilityTimeout: 0,
      }),
    );

    // Second delivery of the same message: absorbed by the idempotency store, then deleted.
    const [, again] = await waitFor(ofMessage, (reports) => reports.length >= 2);
    expect(again?.outcome).toBe('success');
    await runtime.waitUntilDrained({ queues: ['payments'], timeoutMs: 30_000 });
    expect(ofMessage()).toHaveLength(2);
    const payments = Object.values(runtime.stats().functions).find((f) => f.lostResponses === 1);
    expect(payments?.recordsReceived).toBe(2);
    expect(payments?.recordsDeleted).toBe(1);
    await waitFor(
      () => metrics.JobDuplicateAbsorbed ?? 0,
      (n) => n >= 1,
    );
    expect(metrics.JobDuplicateAbsorbed).toBe(1);
    expect(metrics.JobCompleted).toBe(1);

    const stats = service.stats();
    expect(stats.sideEffectsByReference).toEqual({ 'payment:b-lost': 1 });
    expect(Object.values(stats.sideEffectsByKey)).toEqual([1]);
    // The repeat never reached the payment API: the store answered it.
    expect(stats.requestsByOperation.payment).toBe(1);
    const dlq = await runtime.queueDepth(runtime.queue('payments').deadLetterQueue?.url ?? '');
    expect(dlq.visible + dlq.notVisible).toBe(0);
  }, 90_000);
});
