/**
 * Flow-control declarations and arithmetic: what `defineJob({ concurrency, rateLimits })` and
 * `defineRateLimit` refuse, and the token bucket's refill, recovery and decrease (pure functions), and the metrics of a wait.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../lib/runtime/job.ts';
import { BUCKET_RECORD_TTL_SECONDS } from '../../lib/runtime/limits/buckets.ts';
import { concurrencyKeyOf } from '../../lib/runtime/limits/concurrency.ts';
import { ConcurrencyKeyError } from '../../lib/runtime/limits/errors.ts';
import {
  decrease,
  defineRateLimit,
  freshBucket,
  MAX_REFILL_SECONDS,
  MIN_PER_SECOND,
  msUntilToken,
  refill,
} from '../../lib/runtime/limits/rate-limit.ts';
import { BatchMetrics, DirectEmf } from '../../lib/runtime/telemetry.ts';
import { createWorker } from '../../lib/runtime/worker.ts';

const base = { type: 'a.b', queue: 'q', schema: z.object({ tenantId: z.string() }), run: async () => {} };

describe('defineJob concurrency and rateLimits', () => {
  it('accepts a key function and a limit, and names every problem of a bad one', () => {
    expect(defineJob({ ...base, concurrency: { key: (d) => d.tenantId, limit: 2 } }).concurrency?.limit).toBe(
      2,
    );
    expect(() =>
      defineJob({ ...base, concurrency: { key: 'tenantId' as never, limit: 0, extra: 1 } as never }),
    ).toThrow(
      /unknown field concurrency.extra.*concurrency.key must be a function.*concurrency.limit must be an integer from 1 to 1000, got 0/,
    );
    expect(() => defineJob({ ...base, rateLimits: [{ name: 'x' }] as never })).toThrow(
      /rateLimits must be an array of rate limits made by defineRateLimit/,
    );
  });

  it('refuses an async key function at definition (concurrency and idempotency), saying why', () => {
    const asyncKey = async (d: { tenantId: string }) => d.tenantId;
    expect(() => defineJob({ ...base, concurrency: { key: asyncKey as never, limit: 2 } })).toThrow(
      "concurrency.key must be a synchronous function (data) => string, got an async function: a key is computed from the job's data alone, the same on every delivery (put what it needs in the data)",
    );
    expect(() => defineJob({ ...base, idempotency: { key: asyncKey as never } })).toThrow(
      /idempotency\.key must be a synchronous function \(data\) => string, got an async function/,
    );
  });

  it('a key function that returns a Promise without being async is named so when the record runs', () => {
    const promising = { key: (d: { tenantId: string }) => Promise.resolve(d.tenantId) as never, limit: 1 };
    expect(() => concurrencyKeyOf('a.b', promising, { tenantId: 't' })).toThrow(
      'concurrency.key(data) must return a non-empty string, got a Promise: the key function must be synchronous (put what it needs in the data)',
    );
  });

  it('a key function that throws or returns no string is a ConcurrencyKeyError (permanent)', () => {
    const options = { key: (d: { tenantId: string }) => d.tenantId, limit: 1 };
    expect(concurrencyKeyOf('a.b', options, { tenantId: 't' })).toBe('t');
    expect(() => concurrencyKeyOf('a.b', options, { tenantId: '' })).toThrow(ConcurrencyKeyError);
    const throwing = {
      key: () => {
        throw new TypeError('no tenant');
      },
      limit: 1,
      name: 'tenants',
    };
    expect(() => concurrencyKeyOf('a.b', throwing, {})).toThrow(
      'the concurrency key of a.b (limit tenants) could not be computed: concurrency.key(data) threw TypeError: no tenant',
    );
  });
});

describe('defineRateLimit', () => {
  it('fills the defaults: burst = perSecond, adaptive on (min 1 %, halve, recover 5 % of the rate per second)', () => {
    expect(defineRateLimit({ name: 'p', perSecond: 20 })).toEqual({
      kind: 'rate-limit',
      name: 'p',
      perSecond: 20,
      burst: 20,
      adaptive: { minPerSecond: 0.2, decreaseFactor: 0.5, recoveryPerSecond: 1, decreaseIntervalMs: 1000 },
    });
    expect(defineRateLimit({ name: 'p', perSecond: 0.5, adaptive: false })).toMatchObject({
      burst: 1,
      adaptive: undefined,
    });
  });

  it('refuses bad values, every problem in one message', () => {
    expect(() =>
      defineRateLimit({ name: '', perSecond: 0, burst: 0.5, adaptive: { decreaseFactor: 1 } }),
    ).toThrow(
      /name must be a non-empty string; perSecond must be a number > 0, got 0; burst must be a number >= 1, got 0.5; adaptive.decreaseFactor must be > 0 and < 1, got 1/,
    );
  });

  it('shows NaN and Infinity as given, not as JSON null', () => {
    expect(() => defineRateLimit({ name: 'n', perSecond: Number.NaN })).toThrow(
      'invalid rate limit "n": perSecond must be a number > 0, got NaN',
    );
    expect(() => defineRateLimit({ name: 'n', perSecond: 1, burst: Number.POSITIVE_INFINITY })).toThrow(
      'burst must be a number >= 1, got Infinity',
    );
    expect(() => defineJob({ ...base, concurrency: { key: (d) => d.tenantId, limit: Number.NaN } })).toThrow(
      'concurrency.limit must be an integer from 1 to 1000, got NaN',
    );
  });

  it('refuses a rate whose bucket takes more than a day to refill (its item lives a day): at least one a day', () => {
    // The rule rests on the bucket item's TTL: a bucket that refills within it loses nothing by expiring.
    expect(MAX_REFILL_SECONDS).toBe(BUCKET_RECORD_TTL_SECONDS);
    expect(defineRateLimit({ name: 'daily', perSecond: MIN_PER_SECOND }).burst).toBe(1);
    expect(() => defineRateLimit({ name: 'tiny', perSecond: 1e-9 })).toThrow(
      'invalid rate limit "tiny": perSecond 1e-9 refills a burst of 1 in 1000000000 s, more than a day (86400 s, how long a bucket is kept after its last use): use perSecond >= 1 / 86400 (one request a day), or a smaller burst',
    );
    expect(() => defineRateLimit({ name: 'bursty', perSecond: 0.001, burst: 100 })).toThrow(
      /perSecond 0.001 refills a burst of 100 in 100000 s, more than a day .* use perSecond >= 100 \/ 86400 \(100 a day\), or a smaller burst/,
    );
  });

  it('refuses two different limits under one name in a job and across a worker; the same one twice is fine', () => {
    const a = defineRateLimit({ name: 'partner', perSecond: 10 });
    const b = defineRateLimit({ name: 'partner', perSecond: 20 });
    const alike = defineRateLimit({ name: 'partner', perSecond: 10 });
    const conflict =
      'rate limit "partner" is declared twice with different settings ({"perSecond":10,"burst":10,"adaptive":{"minPerSecond":0.1,"decreaseFactor":0.5,"recoveryPerSecond":0.5,"decreaseIntervalMs":1000}} and {"perSecond":20,"burst":20,"adaptive":{"minPerSecond":0.2,"decreaseFactor":0.5,"recoveryPerSecond":1,"decreaseIntervalMs":1000}}): jobs that name it share one bucket, so declare it once (defineRateLimit in a module every job imports) or give each its own name';
    expect(() => defineJob({ ...base, rateLimits: [a, b] })).toThrow(conflict);
    expect(defineJob({ ...base, rateLimits: [a, alike, a] }).rateLimits).toHaveLength(3);
    const jobs = [
      defineJob({ ...base, type: 'x.one', rateLimits: [a] }),
      defineJob({ ...base, type: 'x.two', rateLimits: [b] }),
    ];
    expect(() => createWorker({ jobs, idempotency: false, limits: false })).toThrow(conflict);
  });
});

describe('token bucket arithmetic', () => {
  const limit = defineRateLimit({ name: 'p', perSecond: 10, burst: 10 });

  it('refills at the rate up to the burst, and tells the wait for the next token', () => {
    const empty = { ...freshBucket(limit, 0), tokens: 0 };
    expect(refill(limit, empty, 250).tokens).toBeCloseTo(2.5);
    expect(refill(limit, empty, 60_000).tokens).toBe(10);
    expect(msUntilToken(refill(limit, empty, 50))).toBeCloseTo(50);
    // A clock behind the bucket's counts as no time passed.
    expect(refill(limit, { ...empty, updatedAtMs: 1000 }, 0)).toMatchObject({ tokens: 0, updatedAtMs: 1000 });
  });

  it('decreases once per interval and empties the bucket; recovers additively, with a smaller burst while low', () => {
    const full = freshBucket(limit, 0);
    const once = decrease(limit, refill(limit, full, 1000), 1000);
    expect(once).toMatchObject({ rate: 5, tokens: 0, decreasedAtMs: 1000 });
    expect(decrease(limit, once, 1500)).toBe(once); // same overload episode
    expect(decrease(limit, once, 2000).rate).toBe(2.5);
    // 0.5 request/s regained per second: after 4 s the rate is 7; the capacity follows the rate.
    const later = refill(limit, once, 5000);
    expect(later.rate).toBeCloseTo(7);
    expect(later.tokens).toBeLessThanOrEqual(7);
    expect(refill(limit, once, 60_000).rate).toBe(10);
  });
});

describe('flow-control metrics', () => {
  it('JobLimitDelayed is a count and JobLimitWaitMs milliseconds summed per batch, per job type', () => {
    const batch = new BatchMetrics();
    batch.add('reports.build', 'JobLimitDelayed');
    batch.add('reports.build', 'JobLimitDelayed');
    batch.add('reports.build', 'JobLimitWaitMs', 40);
    batch.add('reports.build', 'JobLimitWaitMs', 60);
    const lines: string[] = [];
    batch.flush(new DirectEmf({}, (line) => lines.push(line)), 'reports');
    const blob = JSON.parse(lines[0] as string) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Metrics: { Name: string; Unit: string }[] }[] };
    };
    expect(blob).toMatchObject({
      Queue: 'reports',
      JobType: 'reports.build',
      JobLimitDelayed: 2,
      JobLimitWaitMs: 100,
    });
    expect(blob._aws.CloudWatchMetrics[0]?.Metrics).toEqual(
      expect.arrayContaining([
        { Name: 'JobLimitDelayed', Unit: 'Count' },
        { Name: 'JobLimitWaitMs', Unit: 'Milliseconds' },
      ]),
    );
  });
});
