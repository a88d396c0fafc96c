/** Rule group `memory`: a whole number of MB, 128–10,240 [configuration-memory]. */
import { describe, expect, it } from 'vitest';
import { memoryRule } from '../../../lib/constructs/job-queue/rules/memory.ts';
import { errors } from './helpers.ts';

describe('memory rule', () => {
  it('accepts any whole number of MB from 128 to 10,240 (default 512)', () => {
    for (const mb of [undefined, 128, 129, 1769, 10_240]) {
      expect(errors(memoryRule, { memorySizeMb: mb })).toEqual([]);
    }
  });

  it('refuses a size Lambda would refuse at deploy: too small, too large, a fraction, not a number', () => {
    for (const mb of [20_000, 10_241, 127, 0, -512, 1000.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(errors(memoryRule, { memorySizeMb: mb })).toEqual([
        `memorySizeMb: ${mb} must be a whole number of MB from 128 to 10,240, what Lambda accepts (1-MB steps) [configuration-memory]`,
      ]);
    }
    expect(errors(memoryRule, { memorySizeMb: '1024' })).toEqual([
      "memorySizeMb: must be a number of MB, got string '1024'",
    ]);
  });
});
