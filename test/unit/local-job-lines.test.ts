/**
 * lib/local/job-lines.ts: which worker log lines are job events, and how one reads. The lines
 * below have the shape the worker writes (docs/contracts.md, "Logs"); the integration test
 * test/integration/local-dev-loop.test.ts reads real ones from a running worker.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatJobLine, jobEventOf } from '../../lib/local/job-lines.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';
import { captureText } from '../factories/worker.ts';

const at = () => new Date('2026-12-01T10:00:00.000Z');

describe('jobEventOf', () => {
  it('reads a retry: type, id, attempt, duration, delay, reason and the error', () => {
    const line = JSON.stringify({
      level: 'WARN',
      message: 'job failed; it will be retried',
      timestamp: '2026-12-01T10:00:01.250Z',
      messageId: 'm-1',
      jobType: 'billing.issue-invoice',
      jobId: 'inv-7',
      attempt: 2,
      outcome: 'retry',
      reason: 'timeout',
      delaySeconds: 4,
      durationMs: 2004,
      error: { name: 'TimeoutError', message: 'the API did not answer', stack: 'TimeoutError: ...' },
    });
    const event = jobEventOf('BillingWorker', line, at);
    expect(event).toEqual({
      kind: 'job',
      time: '2026-12-01T10:00:01.250Z',
      functionLogicalId: 'BillingWorker',
      type: 'billing.issue-invoice',
      jobId: 'inv-7',
      messageId: 'm-1',
      outcome: 'retry',
      attempt: 2,
      durationMs: 2004,
      reason: 'timeout',
      delaySeconds: 4,
      error: 'TimeoutError: the API did not answer',
    });
    expect(event && formatJobLine(event)).toBe(
      '10:00:01.250  retry          billing.issue-invoice  inv-7  attempt 2  2004 ms  (again in 4 s; timeout; TimeoutError: the API did not answer)',
    );
  });

  it('reads a record that was not a job by its message id', () => {
    const line = JSON.stringify({
      message: 'job dead-lettered',
      messageId: 'm-9',
      outcome: 'dead-lettered',
      attempts: 1,
      reason: 'EnvelopeError',
    });
    const event = jobEventOf('W', line, at);
    expect(event && formatJobLine(event)).toBe(
      '10:00:00.000  dead-lettered  (not a job)  message m-9  after 1 attempt(s)  (EnvelopeError)',
    );
  });

  it('ignores what is not a record outcome: the batch summary, a job’s own lines, plain text', () => {
    expect(
      jobEventOf('W', JSON.stringify({ message: 'batch processed', outcome: 'batch', completed: 3 })),
    ).toBeUndefined();
    expect(jobEventOf('W', JSON.stringify({ message: 'greeted', jobType: 't', jobId: '1' }))).toBeUndefined();
    expect(jobEventOf('W', 'outcome: completed')).toBeUndefined();
    expect(jobEventOf('W', '{"outcome": "completed", broken')).toBeUndefined();
  });
});

describe("a job's own line with an `outcome` key", () => {
  it('is no job event: only the runtime writes `outcome`, the job sees its key dropped with a warning', async () => {
    const payment = defineJob({
      type: 'billing.capture',
      queue: 'billing',
      schema: z.object({ paymentId: z.string() }),
      run: async ({ paymentId }, ctx) => {
        ctx.logger.info('payment captured', {
          paymentId,
          outcome: 'retry',
          reason: 'the bank asked for a second look',
          delaySeconds: 30,
        });
      },
    });
    const handler = createWorker({
      jobs: [payment],
      queueName: 'billing',
      queueUrl: queueUrl('billing'),
      dlqUrl: queueUrl('billing-dlq'),
      idempotency: false,
      logEachRecord: true,
      sqs: new FakeSqs(),
    });
    const record = sqsRecord({
      queue: 'billing',
      messageId: 'm-1',
      body: jobBody(payment.type, { paymentId: 'p-1' }, { id: 'pay-1' }),
    });
    const { text } = await captureText(async () => {
      await handler(sqsEvent([record]), lambdaContext() as never);
    });
    const lines = text.split('\n').filter((line) => line.startsWith('{'));
    const captured = lines.find((line) => line.includes('payment captured'));
    expect(JSON.parse(captured ?? '{}')).toMatchObject({
      paymentId: 'p-1',
      reason: 'the bank asked for a second look',
      delaySeconds: 30,
    });
    expect(lines.some((line) => line.includes('The key \\"outcome\\" is a reserved key'))).toBe(true);
    // What `sqs-jobs local` prints for the record: its completion, no phantom retry.
    const events = lines.map((line) => jobEventOf('BillingWorker', line, at)).filter((e) => e !== undefined);
    expect(events.map((event) => [event.outcome, event.jobId])).toEqual([['completed', 'pay-1']]);
  });
});
