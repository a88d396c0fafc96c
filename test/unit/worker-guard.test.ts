/**
 * The worker against the idempotency seam (lib/runtime/idempotency/guard.ts), with an in-memory
 * guard: what it asks, and what it does with each answer.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { payloadHash } from '../../lib/core/canonical-json.ts';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import type { BeginOutcome, Lease } from '../../lib/runtime/idempotency/guard.ts';
import { deriveIdempotencyKey } from '../../lib/runtime/idempotency/keys.ts';
import { defineJob, type JobContext, type JobIdempotencyOptions } from '../../lib/runtime/job.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { failedIds, workerHarness } from '../factories/worker.ts';

const schema = z.object({ paymentId: z.string(), amount: z.number() });
type Data = z.infer<typeof schema>;

function paymentJob(
  run: (data: Data, ctx: JobContext) => Promise<unknown>,
  idempotency?: JobIdempotencyOptions<Data>,
  maxAttempts = 5,
) {
  return defineJob({
    type: 'payments.capture',
    queue: 'payments',
    schema,
    retry: { maxAttempts },
    ...(idempotency ? { idempotency } : {}),
    run,
  });
}

const body = (data: Data, id = 'job-1') => jobBody('payments.capture', data, { id, source: '/checkout' });
const data: Data = { paymentId: 'p-1', amount: 10 };

describe('what the worker asks the guard', () => {
  it('keys by source and id, hashes the canonical payload, and names the message', async () => {
    const guard = new FakeGuard();
    const h = workerHarness({ idempotency: guard, jobs: [paymentJob(async () => 'captured')] });
    const record = sqsRecord({ body: body(data) });
    await h.invoke([record]);
    expect(guard.begins).toHaveLength(1);
    expect(guard.begins[0]).toMatchObject({
      jobType: 'payments.capture',
      key: '/checkout\njob-1',
      payloadHash: payloadHash({ amount: 10, paymentId: 'p-1' }),
      onLeaseExpired: 'rerun',
      messageId: record.messageId,
    });
    expect(guard.leaseCalls).toEqual([
      { op: 'complete', key: 'payments.capture\n/checkout\njob-1', result: 'captured' },
    ]);
  });

  it('uses the job key function when the job has one', async () => {
    const guard = new FakeGuard();
    const h = workerHarness({
      idempotency: guard,
      jobs: [
        paymentJob(async () => {}, { key: (d) => `payment:${d.paymentId}`, onLeaseExpired: 'dead-letter' }),
      ],
    });
    await h.invoke([sqsRecord({ body: body(data) })]);
    expect(guard.begins[0]).toMatchObject({ key: 'payment:p-1', onLeaseExpired: 'dead-letter' });
  });

  it('skips the guard for a job with idempotency.enabled false', async () => {
    const guard = new FakeGuard();
    let runs = 0;
    const h = workerHarness({
      idempotency: guard,
      jobs: [paymentJob(async () => void runs++, { enabled: false })],
    });
    await h.invoke([sqsRecord({ body: body(data) }), sqsRecord({ body: body(data) })]);
    expect(guard.begins).toEqual([]);
    expect(runs).toBe(2);
  });
});

describe('what the worker does with each answer', () => {
  it('completed: a duplicate delivery is acknowledged, not run, and counted as absorbed', async () => {
    const guard = new FakeGuard();
    let runs = 0;
    const h = workerHarness({ idempotency: guard, jobs: [paymentJob(async () => void runs++)] });
    await h.invoke([sqsRecord({ body: body(data) })]);
    const { response, emf } = await h.invoke([sqsRecord({ body: body(data) })]);
    expect(runs).toBe(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(emf[0]).toMatchObject({ JobDuplicateAbsorbed: 1 });
  });

  it('dead-lettered: a redelivery of a message already in the DLQ is acknowledged, not run or sent again', async () => {
    const guard = new FakeGuard().script(() => ({ status: 'dead-lettered' }));
    let runs = 0;
    const h = workerHarness({ idempotency: guard, jobs: [paymentJob(async () => void runs++)] });
    const { response, emf } = await h.invoke([sqsRecord({ body: body(data), receiveCount: 2 })]);
    expect(runs).toBe(0);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
    expect(emf[0]).toMatchObject({ JobDuplicateAbsorbed: 1 });
  });

  it('busy: reported failed with the visibility the guard asked for, no run, no attempt', async () => {
    const guard = new FakeGuard().script(() => ({ status: 'busy', retryAfterMs: 4_200 }));
    let runs = 0;
    const h = workerHarness({ idempotency: guard, jobs: [paymentJob(async () => void runs++)] });
    const record = sqsRecord({ body: body(data), receiveCount: 5 });
    const { response } = await h.invoke([record]);
    expect(runs).toBe(0);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(h.sqs.visibilityChanges()[0]?.VisibilityTimeout).toBe(5);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
    expect(guard.leaseCalls).toEqual([]);
  });

  it('lease-expired: dead-lettered as LeaseExpiredError, not run, lease ended as permanent', async () => {
    const guard = new FakeGuard();
    guard.script(() => ({
      status: 'lease-expired',
      lease: guard.lease('k', { attempt: 3, firstFailureAtMs: Date.parse('2026-11-29T06:00:00Z') }),
      previousAttempt: 2,
    }));
    let runs = 0;
    const h = workerHarness({
      idempotency: guard,
      jobs: [paymentJob(async () => void runs++, { onLeaseExpired: 'dead-letter' })],
    });
    const { response } = await h.invoke([sqsRecord({ body: body(data) })]);
    expect(runs).toBe(0);
    expect(response.batchItemFailures).toEqual([]);
    const attributes = h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.ErrorName?.StringValue).toBe('LeaseExpiredError');
    expect(attributes?.ErrorMessage?.StringValue).toMatch(/onLeaseExpired: 'dead-letter'/);
    expect(attributes?.Attempts?.StringValue).toBe('2');
    expect(attributes?.FirstFailureAt?.StringValue).toBe('2026-11-29T06:00:00.000Z');
    expect(guard.leaseCalls.map((c) => c.op === 'fail' && c.kind)).toEqual(['permanent']);
  });

  it('lease-expired with a failing DLQ send: reported failed and the lease left as it is', async () => {
    const guard = new FakeGuard();
    guard.script(() => ({
      status: 'lease-expired',
      lease: guard.lease('k', { attempt: 2 }),
      previousAttempt: 1,
    }));
    const h = workerHarness({
      idempotency: guard,
      jobs: [paymentJob(async () => {}, { onLeaseExpired: 'dead-letter' })],
    });
    h.sqs.failWhen((call) => (call.action === 'SendMessage' ? new Error('DLQ down') : undefined));
    const record = sqsRecord({ body: body(data) });
    const { response } = await h.invoke([record]);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(guard.leaseCalls).toEqual([]);
  });

  it('counts attempts by the lease, not by ApproximateReceiveCount', async () => {
    const guard = new FakeGuard().seed('payments.capture', '/checkout\njob-1', {
      attempt: 4,
      firstFailureAtMs: Date.parse('2026-11-29T05:00:00Z'),
    });
    const attempts: number[] = [];
    const h = workerHarness({
      idempotency: guard,
      jobs: [
        paymentJob(async (_d, ctx) => {
          attempts.push(ctx.attempt);
          throw new TransientError('gateway 502');
        }),
      ],
    });
    const { response } = await h.invoke([sqsRecord({ body: body(data), receiveCount: 1 })]);
    expect(attempts).toEqual([5]);
    expect(response.batchItemFailures).toEqual([]);
    const attributes = h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.Attempts?.StringValue).toBe('5');
    expect(attributes?.ErrorReason?.StringValue).toBe('attempts-used-up: TransientError');
    expect(attributes?.FirstFailureAt?.StringValue).toBe('2026-11-29T05:00:00.000Z');
    expect(guard.leaseCalls.map((c) => c.op === 'fail' && c.kind)).toEqual(['permanent']);
  });

  it('transient with attempts left: lease released as transient, backoff from the lease attempt', async () => {
    const guard = new FakeGuard().seed('payments.capture', '/checkout\njob-1', { attempt: 2 });
    const h = workerHarness({
      idempotency: guard,
      random: () => 0.9999,
      jobs: [
        paymentJob(async () => {
          throw new TransientError('gateway 502');
        }),
      ],
    });
    const record = sqsRecord({ body: body(data), receiveCount: 9 });
    const { response } = await h.invoke([record]);
    expect(failedIds(response)).toEqual([record.messageId]);
    // Attempt 3 (from the lease): ceiling 2 * 2^2 = 8 s.
    expect(h.sqs.visibilityChanges()[0]?.VisibilityTimeout).toBe(8);
    expect(guard.leaseCalls.map((c) => c.op === 'fail' && c.kind)).toEqual(['transient']);
  });

  it('permanent: the DLQ send comes first, then the lease is ended as permanent', async () => {
    const order: string[] = [];
    const guard = new FakeGuard({ journal: order });
    const h = workerHarness({
      idempotency: guard,
      jobs: [
        paymentJob(async () => {
          throw new PermanentError('card declined');
        }),
      ],
    });
    h.sqs.failWhen((call) => {
      order.push(`sqs:${call.action}`);
      return undefined;
    });
    await h.invoke([sqsRecord({ body: body(data) })]);
    expect(order).toEqual(['sqs:SendMessage', 'lease:fail']);
  });

  it('DLQ send failing: reported failed and the lease released as transient, keeping the attempt count', async () => {
    const guard = new FakeGuard();
    const h = workerHarness({
      idempotency: guard,
      jobs: [
        paymentJob(async () => {
          throw new PermanentError('card declined');
        }),
      ],
    });
    h.sqs.failWhen((call) => (call.action === 'SendMessage' ? new Error('DLQ unreachable') : undefined));
    const record = sqsRecord({ body: body(data) });
    const { response } = await h.invoke([record]);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(guard.leaseCalls.map((c) => c.op === 'fail' && c.kind)).toEqual(['transient']);
  });

  it('guard says the key was used with another payload: dead-lettered', async () => {
    const guard = new FakeGuard().script(
      () => new PermanentError('idempotency key reused with a different payload'),
    );
    const h = workerHarness({ idempotency: guard, jobs: [paymentJob(async () => {})] });
    const { response } = await h.invoke([sqsRecord({ body: body(data) })]);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
      /different payload/,
    );
  });

  it('guard unavailable: retried with backoff, never dead-lettered on its account', async () => {
    const guard = new FakeGuard().script(() =>
      Object.assign(new Error('Rate exceeded'), {
        name: 'ProvisionedThroughputExceededException',
        $fault: 'client',
      }),
    );
    let runs = 0;
    const h = workerHarness({
      idempotency: guard,
      jobs: [paymentJob(async () => void runs++, undefined, 3)],
    });
    const record = sqsRecord({ body: body(data), receiveCount: 7 });
    const { response } = await h.invoke([record]);
    expect(runs).toBe(0);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
  });
});

describe('a bug while processing one record', () => {
  it('fails that record alone, with a backoff, and the others go on', async () => {
    // A guard answering something outside the contract stands in for any bug inside the pipeline.
    const guard = new FakeGuard().script((request) =>
      request.key.endsWith('job-bad') ? ({ status: 'no-such-status' } as unknown as BeginOutcome) : undefined,
    );
    let runs = 0;
    const h = workerHarness({ idempotency: guard, jobs: [paymentJob(async () => void runs++)] });
    const bad = sqsRecord({ body: body(data, 'job-bad') });
    const { response, logs } = await h.invoke([sqsRecord({ body: body(data, 'job-ok') }), bad]);
    expect(failedIds(response)).toEqual([bad.messageId]);
    expect(runs).toBe(1);
    expect(h.sqs.visibilityChanges()).toHaveLength(1);
    expect(logs.some((l) => l.level === 'ERROR' && l.messageId === bad.messageId)).toBe(true);
  });
});

describe('ctx.once and ctx.idempotencyKey', () => {
  it('delegate to the lease: a completed step is not repeated on the retry', async () => {
    const guard = new FakeGuard();
    let charges = 0;
    let fail = true;
    const keys: string[] = [];
    const h = workerHarness({
      idempotency: guard,
      jobs: [
        paymentJob(async (_d, ctx) => {
          keys.push(ctx.idempotencyKey('charge'));
          await ctx.once('charge', async () => ++charges);
          if (fail) {
            fail = false;
            throw new TransientError('lost response after charging');
          }
        }),
      ],
    });
    await h.invoke([sqsRecord({ body: body(data) })]);
    await h.invoke([sqsRecord({ body: body(data), receiveCount: 2 })]);
    expect(charges).toBe(1);
    expect(keys).toEqual([
      'payments.capture\n/checkout\njob-1#charge',
      'payments.capture\n/checkout\njob-1#charge',
    ]);
  });

  it('without a guard: once runs the step, idempotencyKey is stable per job and step', async () => {
    let charges = 0;
    const keys: string[] = [];
    const h = workerHarness({
      jobs: [
        paymentJob(async (_d, ctx) => {
          keys.push(ctx.idempotencyKey('charge'), ctx.idempotencyKey('refund'));
          await ctx.once('charge', async () => ++charges);
        }),
      ],
    });
    await h.invoke([sqsRecord({ body: body(data) })]);
    await h.invoke([sqsRecord({ body: body(data) })]);
    await h.invoke([sqsRecord({ body: body(data, 'job-2') })]);
    expect(charges).toBe(3);
    const [charge1, refund1, charge2, , charge3] = keys;
    expect(charge1).toBe(charge2);
    expect(charge1).not.toBe(refund1);
    expect(charge1).not.toBe(charge3);
    // The same value the DynamoDB store's lease gives, so switching idempotency on or off keeps it.
    expect(charge1).toBe(deriveIdempotencyKey('payments.capture', '/checkout\njob-1', 'charge'));
  });
});

describe('fencing: a run whose lease was taken over', () => {
  const fencedLease = (): Lease => ({
    attempt: 1,
    firstFailureAtMs: undefined,
    complete: async () => 'fenced',
    fail: async () => 'fenced',
    once: (_step, fn) => fn(),
    idempotencyKey: (step) => `k-${step}`,
  });

  it.each([
    ['completing', async () => 'done'],
    [
      'releasing after a transient failure',
      async () => {
        throw new TransientError('503');
      },
    ],
  ])('says so in the logs and in the JobLeaseFenced metric when %s', async (_case, run) => {
    const guard = new FakeGuard().script(() => ({ status: 'acquired', lease: fencedLease() }));
    const h = workerHarness({ idempotency: guard, jobs: [paymentJob(run)] });
    const { logs, emf } = await h.invoke([sqsRecord({ body: body(data) })]);
    expect(emf.find((blob) => blob.JobType === 'payments.capture')).toMatchObject({ JobLeaseFenced: 1 });
    expect(logs.some((line) => String(line.message).includes('taken over by another run'))).toBe(true);
  });
});
