/** Rule group `concurrency`: reserved concurrency and MaximumConcurrency [services-sqs-scaling]. */
import { describe, expect, it } from 'vitest';
import { concurrencyRule } from '../../../lib/constructs/job-queue/rules/concurrency.ts';
import { errors } from './helpers.ts';

describe('concurrency rule', () => {
  it('accepts 2–1000 and maxConcurrency equal to the reserved concurrency', () => {
    expect(errors(concurrencyRule, { maxConcurrency: 2 })).toEqual([]);
    expect(errors(concurrencyRule, { maxConcurrency: 1000 })).toEqual([]);
    expect(errors(concurrencyRule, { maxConcurrency: 10, reservedConcurrency: 10 })).toEqual([]);
  });

  it('refuses maxConcurrency outside 2–1000', () => {
    for (const mc of [1, 1001, 2.5]) {
      expect(errors(concurrencyRule, { maxConcurrency: mc })).toEqual([
        `maxConcurrency: ${mc} is outside 2–1000, the range Lambda accepts [services-sqs-scaling]`,
      ]);
    }
  });

  it('refuses maxConcurrency above the reserved concurrency, and a reserved concurrency below 1', () => {
    expect(errors(concurrencyRule, { maxConcurrency: 20, reservedConcurrency: 10 })).toEqual([
      'maxConcurrency: 20 is above reservedConcurrency (10): the surplus invocations are throttled and their messages return with a raised receive count [services-sqs-scaling]',
    ]);
    expect(errors(concurrencyRule, { reservedConcurrency: 0 })).toEqual([
      'reservedConcurrency: 0 must be a whole number of at least 1 (0 stops the worker)',
    ]);
  });
});
