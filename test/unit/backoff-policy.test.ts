import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, resolveRetryPolicy } from '../../lib/core/backoff.ts';
import { JobError } from '../../lib/core/errors.ts';
import { DEFAULT_JOB_TIMEOUT_SECONDS, defineJob, type JobSpec } from '../../lib/runtime/job.ts';

function thrown(fn: () => unknown): JobError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(JobError);
    return err as JobError;
  }
  throw new Error('expected a JobError, nothing was thrown');
}

describe('resolveRetryPolicy', () => {
  it('fills every field from the defaults: 5 attempts, 2 s base, 900 s cap', () => {
    expect(resolveRetryPolicy(undefined)).toEqual({
      maxAttempts: 5,
      baseDelaySeconds: 2,
      maxDelaySeconds: 900,
    });
    expect(resolveRetryPolicy({})).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('keeps given fields and defaults the rest', () => {
    expect(resolveRetryPolicy({ maxAttempts: 3 })).toEqual({ ...DEFAULT_RETRY_POLICY, maxAttempts: 3 });
  });

  it('treats a field given as undefined like a missing one', () => {
    const fromConfig: Partial<RetryPolicy> = { maxAttempts: undefined, maxDelaySeconds: 60 };
    expect(resolveRetryPolicy(fromConfig)).toEqual({ ...DEFAULT_RETRY_POLICY, maxDelaySeconds: 60 });
  });

  it('returns a frozen policy', () => {
    expect(Object.isFrozen(resolveRetryPolicy({ maxAttempts: 2 }))).toBe(true);
  });

  it.each([
    ['maxAttempts 1 (never retried)', { maxAttempts: 1 }],
    ['maxAttempts 100', { maxAttempts: 100 }],
    ['baseDelaySeconds 0', { baseDelaySeconds: 0 }],
    ['maxDelaySeconds 0', { maxDelaySeconds: 0 }],
    ['maxDelaySeconds 43,200 (12 h)', { maxDelaySeconds: 43_200 }],
  ])('accepts the edge %s', (_name, partial) => {
    expect(() => resolveRetryPolicy(partial)).not.toThrow();
  });

  it.each([
    ['maxAttempts 0', { maxAttempts: 0 }, 'maxAttempts must be an integer from 1 to 100, got 0'],
    ['maxAttempts 101', { maxAttempts: 101 }, 'maxAttempts must be an integer from 1 to 100, got 101'],
    ['maxAttempts 2.5', { maxAttempts: 2.5 }, 'maxAttempts must be an integer from 1 to 100, got 2.5'],
    ['maxAttempts NaN', { maxAttempts: Number.NaN }, 'maxAttempts must be an integer from 1 to 100, got NaN'],
    ['baseDelaySeconds -1', { baseDelaySeconds: -1 }, 'baseDelaySeconds must be a number >= 0, got -1'],
    [
      'baseDelaySeconds Infinity',
      { baseDelaySeconds: Number.POSITIVE_INFINITY },
      'baseDelaySeconds must be a number >= 0, got Infinity',
    ],
    [
      'maxDelaySeconds 43,201',
      { maxDelaySeconds: 43_201 },
      'maxDelaySeconds must be from 0 to 43200 (12 h, the SQS visibility limit), got 43201',
    ],
    [
      'maxDelaySeconds -5',
      { maxDelaySeconds: -5 },
      'maxDelaySeconds must be from 0 to 43200 (12 h, the SQS visibility limit), got -5',
    ],
  ])('refuses %s with a message naming the field and value', (_name, partial, message) => {
    const error = thrown(() => resolveRetryPolicy(partial, 'payments.capture'));
    expect(error.message).toBe(`invalid retry policy of payments.capture: ${message}`);
  });

  it('lists every invalid field in one message', () => {
    const error = thrown(() =>
      resolveRetryPolicy(
        { maxAttempts: 0, baseDelaySeconds: -1, maxDelaySeconds: 50_000 },
        'booking.confirm',
      ),
    );
    expect(error.message).toMatch(/^invalid retry policy of booking\.confirm: /);
    expect(error.message).toContain('maxAttempts must be');
    expect(error.message).toContain('baseDelaySeconds must be');
    expect(error.message).toContain('maxDelaySeconds must be');
  });
});

describe('defineJob', () => {
  const spec: JobSpec<{ bookingId: string }, void> = {
    type: 'booking.confirm',
    queue: 'booking',
    schema: z.object({ bookingId: z.string() }),
    run: async () => {},
  };

  it('fills timeoutSeconds (30 s) and the retry defaults, and freezes the definition', () => {
    const job = defineJob(spec);
    expect(job.timeoutSeconds).toBe(DEFAULT_JOB_TIMEOUT_SECONDS);
    expect(job.timeoutSeconds).toBe(30);
    expect(job.retry).toEqual(DEFAULT_RETRY_POLICY);
    expect(job.type).toBe('booking.confirm');
    expect(job.queue).toBe('booking');
    expect(Object.isFrozen(job)).toBe(true);
  });

  it('keeps a partial retry policy merged with the defaults', () => {
    expect(defineJob({ ...spec, retry: { maxAttempts: 8 } }).retry).toEqual({
      ...DEFAULT_RETRY_POLICY,
      maxAttempts: 8,
    });
  });

  it.each([
    ['type empty', { type: '' }, 'type must be a non-empty string'],
    ['queue empty', { queue: '' }, 'queue must be a non-empty string'],
    [
      'timeoutSeconds 0',
      { timeoutSeconds: 0 },
      'timeoutSeconds must be > 0 and <= 900 (the Lambda maximum), got 0',
    ],
    [
      'timeoutSeconds 901',
      { timeoutSeconds: 901 },
      'timeoutSeconds must be > 0 and <= 900 (the Lambda maximum), got 901',
    ],
    [
      'timeoutSeconds NaN',
      { timeoutSeconds: Number.NaN },
      'timeoutSeconds must be > 0 and <= 900 (the Lambda maximum), got NaN',
    ],
    [
      'schema not a Standard Schema',
      { schema: { parse: () => ({}) } as unknown as JobSpec<unknown, void>['schema'] },
      'schema must be a Standard Schema validator (zod, valibot, ...)',
    ],
    [
      'run not a function',
      { run: 'reserve' as unknown as JobSpec<unknown, void>['run'] },
      'run must be a function (data, ctx) => Promise<result>',
    ],
    [
      'a misspelt field',
      { timeOutSeconds: 5 } as unknown as Partial<JobSpec<unknown, void>>,
      'unknown field timeOutSeconds (known: type, queue, schema, retry, timeoutSeconds, idempotency, onDeadLetter, raw, ordered, formerTypes, concurrency, rateLimits, run)',
    ],
    [
      'a misspelt retry field',
      { retry: { maxAtempts: 3 } } as unknown as Partial<JobSpec<unknown, void>>,
      'unknown field maxAtempts (known: maxAttempts, baseDelaySeconds, maxDelaySeconds)',
    ],
    [
      'an idempotency key that is not a function',
      { idempotency: { key: 'orderId' } } as unknown as Partial<JobSpec<unknown, void>>,
      'idempotency.key must be a function (data) => string',
    ],
    [
      'an unknown lease-expired policy',
      { idempotency: { onLeaseExpired: 'never' } } as unknown as Partial<JobSpec<unknown, void>>,
      `idempotency.onLeaseExpired must be 'rerun' or 'dead-letter', got "never"`,
    ],
    [
      'retry invalid',
      { retry: { maxAttempts: 0 } },
      'invalid retry policy of booking.confirm: maxAttempts must be an integer from 1 to 100, got 0',
    ],
  ])('refuses %s naming the problem', (_name, override, problem) => {
    const error = thrown(() => defineJob({ ...spec, ...override } as JobSpec<unknown, void>));
    expect(error.message).toContain(problem);
    expect(error.message).toMatch(/^invalid job definition "/);
  });

  it('refuses a spec that is not an object with a message saying what it needs', () => {
    expect(thrown(() => defineJob(null as unknown as JobSpec<unknown, void>)).message).toBe(
      'defineJob needs a job spec { type, queue, schema, run, ... }, got null',
    );
  });

  it('lists every problem in one message', () => {
    const error = thrown(() =>
      defineJob({ ...spec, queue: '', timeoutSeconds: 0, retry: { maxDelaySeconds: 99_999 } } as JobSpec<
        unknown,
        void
      >),
    );
    expect(error.message).toMatch(/^invalid job definition "booking\.confirm": /);
    expect(error.message).toContain('queue must be a non-empty string');
    expect(error.message).toContain('timeoutSeconds must be');
    expect(error.message).toContain('maxDelaySeconds must be');
  });
});
