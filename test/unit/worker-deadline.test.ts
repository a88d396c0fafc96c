/**
 * Time limits: a job's timeoutSeconds aborts it through ctx.signal and counts as transient; the
 * Lambda deadline minus the margin does the same; near the deadline, records are not started.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { BeginRequest } from '../../lib/runtime/idempotency/guard.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { DEADLINE_RELEASE_SECONDS } from '../../lib/runtime/record/index.ts';
import { JobTimeoutError } from '../../lib/runtime/worker-errors.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { jobBody, lambdaContext, sqsRecord } from '../factories/sqs.ts';
import { failedIds, workerHarness } from '../factories/worker.ts';

const schema = z.object({ n: z.number() });

/** A job that waits until its signal fires and reports what it saw. */
function waitForAbort(
  timeoutSeconds: number,
  seen: { reason?: unknown; aborted?: boolean },
  maxAttempts = 5,
) {
  return defineJob({
    type: 'slow.job',
    queue: 'jobs',
    schema,
    timeoutSeconds,
    retry: { maxAttempts },
    run: (_data, ctx) =>
      new Promise<void>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          seen.aborted = true;
          seen.reason = ctx.signal.reason;
          const error = new Error('aborted by signal');
          error.name = 'AbortError';
          reject(error);
        });
      }),
  });
}

const record = (n = 1, receiveCount = 1) => sqsRecord({ body: jobBody('slow.job', { n }), receiveCount });

describe('job time limit (timeoutSeconds)', () => {
  it('aborts ctx.signal at the limit and retries the record as transient', async () => {
    const seen: { reason?: unknown; aborted?: boolean } = {};
    const h = workerHarness({ jobs: [waitForAbort(0.05, seen)], random: () => 0.9999 });
    const r = record();
    const started = Date.now();
    const { response, emf } = await h.invoke([r]);

    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen.aborted).toBe(true);
    expect(seen.reason).toBeInstanceOf(JobTimeoutError);
    expect((seen.reason as JobTimeoutError).limit).toBe('job');
    expect(failedIds(response)).toEqual([r.messageId]);
    expect(h.sqs.visibilityChanges()[0]?.VisibilityTimeout).toBe(2);
    expect(emf[0]).toMatchObject({ JobRetried: 1 });
  });

  it('does not wait for a job that ignores its signal', async () => {
    const h = workerHarness({
      jobs: [
        defineJob({
          type: 'slow.job',
          queue: 'jobs',
          schema,
          timeoutSeconds: 0.05,
          run: () => new Promise<void>(() => {}),
        }),
      ],
    });
    const r = record();
    const started = Date.now();
    const { response } = await h.invoke([r]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(failedIds(response)).toEqual([r.messageId]);
  });

  it('dead-letters a timeout on the last attempt with JobTimeoutError as evidence', async () => {
    const h = workerHarness({ jobs: [waitForAbort(0.05, {}, 2)] });
    const { response } = await h.invoke([record(1, 2)]);
    expect(response.batchItemFailures).toEqual([]);
    const attributes = h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.ErrorName?.StringValue).toBe('JobTimeoutError');
    expect(attributes?.ErrorReason?.StringValue).toBe('attempts-used-up: JobTimeoutError');
  });
});

describe('Lambda deadline', () => {
  it('aborts a running job at the deadline minus the margin when that comes before its own limit', async () => {
    const seen: { reason?: unknown } = {};
    const h = workerHarness({ jobs: [waitForAbort(30, seen)], deadlineMarginMs: 1_000 });
    const started = Date.now();
    const { response } = await h.invoke([record()], lambdaContext(1_200));
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(1_000);
    expect((seen.reason as JobTimeoutError).limit).toBe('lambda');
    expect(response.batchItemFailures).toHaveLength(1);
  });

  it('does not start a record when no more than the margin is left, and spends no attempt', async () => {
    const runs: number[] = [];
    const guard = new FakeGuard();
    const h = workerHarness({
      idempotency: guard,
      deadlineMarginMs: 3_000,
      jobs: [defineJob({ type: 'slow.job', queue: 'jobs', schema, run: async ({ n }) => void runs.push(n) })],
    });
    const records = [record(1), record(2)];
    const { response, logs } = await h.invoke(records, lambdaContext(2_500));

    expect(runs).toEqual([]);
    expect(guard.begins).toEqual([]);
    expect(failedIds(response)).toEqual(records.map((r) => r.messageId));
    expect(h.sqs.visibilityChanges().map((c) => c.VisibilityTimeout)).toEqual([
      DEADLINE_RELEASE_SECONDS,
      DEADLINE_RELEASE_SECONDS,
    ]);
    expect(logs.filter((l) => l.outcome === 'deferred')).toHaveLength(2);
  });

  it('stops starting records once the deadline gets near in the middle of a batch', async () => {
    const runs: number[] = [];
    const context = lambdaContext(60_000);
    const h = workerHarness({
      maxConcurrency: 1,
      deadlineMarginMs: 3_000,
      jobs: [
        defineJob({
          type: 'slow.job',
          queue: 'jobs',
          schema,
          run: async ({ n }) => {
            runs.push(n);
            if (n === 2) context.setRemainingMs(1_000);
          },
        }),
      ],
    });
    const records = [record(1), record(2), record(3), record(4)];
    const { response } = await h.invoke(records, context);
    expect(runs).toEqual([1, 2]);
    expect(failedIds(response)).toEqual([records[2]?.messageId, records[3]?.messageId]);
  });

  it('gives the idempotency lease the earlier of both limits plus the margin', async () => {
    const guard = new FakeGuard();
    const h = workerHarness({
      idempotency: guard,
      deadlineMarginMs: 2_000,
      jobs: [defineJob({ type: 'slow.job', queue: 'jobs', schema, timeoutSeconds: 10, run: async () => {} })],
    });
    const before = Date.now();
    await h.invoke([record()], lambdaContext(60_000));
    await h.invoke([record()], lambdaContext(5_000));
    const [long, short] = guard.begins as [BeginRequest, BeginRequest];
    // Job limit 10 s first: 10 s + 2 s margin.
    expect(long.leaseExpiresAtMs - before).toBeGreaterThanOrEqual(12_000);
    expect(long.leaseExpiresAtMs - Date.now()).toBeLessThanOrEqual(12_000);
    // Lambda first: (5 s - 2 s) + 2 s.
    expect(short.leaseExpiresAtMs - before).toBeGreaterThanOrEqual(4_900);
    expect(short.leaseExpiresAtMs - Date.now()).toBeLessThanOrEqual(5_000);
  });
});
