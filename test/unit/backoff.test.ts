import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffDelaySeconds,
  DEFAULT_RETRY_POLICY,
  MAX_VISIBILITY_TIMEOUT_SECONDS,
  type RetryPolicy,
} from '../../lib/core/backoff.ts';
import { seededRandom } from '../../lib/local/faults.ts';

const policy = (p: Partial<RetryPolicy>): RetryPolicy => ({ ...DEFAULT_RETRY_POLICY, ...p });
const ALMOST_ONE = 1 - Number.EPSILON;

describe('backoffDelaySeconds bounds', () => {
  it('is a whole number of seconds in [0, min(cap, base * 2^(attempt-1))]', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 200 })),
        fc.double({ min: 0, max: 1_000, noNaN: true }),
        fc.integer({ min: 0, max: MAX_VISIBILITY_TIMEOUT_SECONDS }),
        fc.double({ min: 0, max: ALMOST_ONE, noNaN: true }),
        (attempt, baseDelaySeconds, maxDelaySeconds, r) => {
          const delay = backoffDelaySeconds(
            attempt,
            policy({ baseDelaySeconds, maxDelaySeconds }),
            0,
            () => r,
          );
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(Math.min(maxDelaySeconds, baseDelaySeconds * 2 ** (attempt - 1)));
        },
      ),
    );
  });

  it.each([
    [0.5, 1],
    [1.5, 1],
    [3.7, 1],
    [0.75, 3],
  ])('stays whole with a fractional base %s s (attempt %s)', (baseDelaySeconds, attempt) => {
    for (const r of [0, 0.5, 0.9, ALMOST_ONE]) {
      const delay = backoffDelaySeconds(attempt, policy({ baseDelaySeconds }), 0, () => r);
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeLessThanOrEqual(baseDelaySeconds * 2 ** (attempt - 1));
    }
  });

  it('grows the upper bound exponentially: 1, 2, 4, 8, 16, 32 s for base 1', () => {
    const upper = [1, 2, 3, 4, 5, 6].map((attempt) =>
      backoffDelaySeconds(
        attempt,
        policy({ baseDelaySeconds: 1, maxDelaySeconds: 900 }),
        0,
        () => ALMOST_ONE,
      ),
    );
    expect(upper).toEqual([1, 2, 4, 8, 16, 32]);
  });

  it('reaches zero when the random draw is zero (full jitter, not equal jitter)', () => {
    expect(backoffDelaySeconds(10, policy({ baseDelaySeconds: 2 }), 0, () => 0)).toBe(0);
  });

  it('stops at maxDelaySeconds however many attempts failed', () => {
    for (const attempt of [11, 50, 1_000, Number.MAX_SAFE_INTEGER]) {
      const delay = backoffDelaySeconds(
        attempt,
        policy({ baseDelaySeconds: 2, maxDelaySeconds: 900 }),
        0,
        () => ALMOST_ONE,
      );
      expect(delay).toBe(900);
    }
  });

  it('treats attempt 0 or below like the first attempt', () => {
    const p = policy({ baseDelaySeconds: 4 });
    expect(backoffDelaySeconds(0, p, 0, () => ALMOST_ONE)).toBe(4);
    expect(backoffDelaySeconds(-3, p, 0, () => ALMOST_ONE)).toBe(4);
  });

  it('never exceeds 12 hours, the SQS visibility timeout limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: ALMOST_ONE, noNaN: true }),
        (attempt, minDelayMs, r) => {
          const delay = backoffDelaySeconds(
            attempt,
            policy({ baseDelaySeconds: 3_600, maxDelaySeconds: 43_200 }),
            minDelayMs * 1_000,
            () => r,
          );
          expect(delay).toBeLessThanOrEqual(MAX_VISIBILITY_TIMEOUT_SECONDS);
        },
      ),
    );
  });
});

describe('backoffDelaySeconds Retry-After floor', () => {
  it.each([
    ['rounds a floor up to whole seconds', 10_500, 11],
    ['keeps an exact floor', 30_000, 30],
    ['a zero floor changes nothing', 0, 0],
    ['a floor above maxDelaySeconds wins (the server asked for it)', 1_800_000, 1_800],
    ['a floor above 12 h is cut to 12 h', 50_000_000, MAX_VISIBILITY_TIMEOUT_SECONDS],
  ])('%s', (_name, minDelayMs, expected) => {
    const delay = backoffDelaySeconds(
      1,
      policy({ baseDelaySeconds: 2, maxDelaySeconds: 900 }),
      minDelayMs,
      () => 0,
    );
    expect(delay).toBe(expected);
  });

  it('keeps the jittered delay when it is above the floor', () => {
    expect(backoffDelaySeconds(6, policy({ baseDelaySeconds: 2 }), 5_000, () => ALMOST_ONE)).toBe(64);
  });
});

describe('backoffDelaySeconds jitter spread', () => {
  const SAMPLES = 20_000;

  function sample(attempt: number, p: RetryPolicy, seed: number): number[] {
    const random = seededRandom(seed);
    return Array.from({ length: SAMPLES }, () => backoffDelaySeconds(attempt, p, 0, random));
  }

  it('covers every whole second from 0 to the bound, evenly', () => {
    // attempt 5, base 2 s: bound 32 s, so 33 possible values.
    const delays = sample(5, policy({ baseDelaySeconds: 2, maxDelaySeconds: 900 }), 42);
    const counts = new Map<number, number>();
    for (const d of delays) counts.set(d, (counts.get(d) ?? 0) + 1);
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 33 }, (_, i) => i));
    const expected = SAMPLES / 33;
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(expected * 0.8);
      expect(count).toBeLessThan(expected * 1.2);
    }
    const mean = delays.reduce((a, b) => a + b, 0) / SAMPLES;
    expect(mean).toBeGreaterThan(15);
    expect(mean).toBeLessThan(17);
  });

  it('is not clustered at the cap once the exponential passes it', () => {
    // attempt 20, base 2 s: 2 * 2^19 s is far above the 900 s cap.
    const delays = sample(20, policy({ baseDelaySeconds: 2, maxDelaySeconds: 900 }), 7);
    const atCap = delays.filter((d) => d === 900).length / SAMPLES;
    expect(atCap).toBeLessThan(0.01);
    const quartiles = [0, 0, 0, 0];
    for (const d of delays) quartiles[Math.min(3, Math.floor(d / 225))]! += 1;
    for (const q of quartiles) {
      expect(q / SAMPLES).toBeGreaterThan(0.22);
      expect(q / SAMPLES).toBeLessThan(0.28);
    }
    expect(Math.min(...delays)).toBeLessThanOrEqual(5);
    expect(Math.max(...delays)).toBeGreaterThanOrEqual(895);
  });

  it('spreads a herd: 1,000 jobs failing together do not come back in the same second', () => {
    const random = seededRandom(3);
    const p = policy({ baseDelaySeconds: 2, maxDelaySeconds: 900 });
    const delays = Array.from({ length: 1_000 }, () => backoffDelaySeconds(8, p, 0, random));
    const perSecond = new Map<number, number>();
    for (const d of delays) perSecond.set(d, (perSecond.get(d) ?? 0) + 1);
    const busiestSecond = Math.max(...perSecond.values());
    // 257 possible seconds: uniform gives about 4 per second; a cluster would give hundreds.
    expect(busiestSecond).toBeLessThan(20);
  });
});
