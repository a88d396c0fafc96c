/** Rule group `message-size`: 1 KiB – 1 MiB [quotas-messages]. */
import { describe, expect, it } from 'vitest';
import { messageSizeRule } from '../../../lib/constructs/job-queue/rules/message-size.ts';
import { errors } from './helpers.ts';

describe('message-size rule', () => {
  it('accepts 1,024 to 1,048,576 bytes (default 1 MiB)', () => {
    expect(errors(messageSizeRule)).toEqual([]);
    expect(errors(messageSizeRule, { maxMessageSizeBytes: 1024 })).toEqual([]);
    expect(errors(messageSizeRule, { maxMessageSizeBytes: 1_048_576 })).toEqual([]);
  });

  it('refuses sizes outside the range', () => {
    for (const size of [1023, 1_048_577]) {
      expect(errors(messageSizeRule, { maxMessageSizeBytes: size })).toEqual([
        `maxMessageSizeBytes: ${size} is outside 1024–1048576 bytes [quotas-messages]`,
      ]);
    }
  });

  it('refuses a size that is not a whole number of bytes', () => {
    for (const size of [2000.5, Number.NaN]) {
      expect(errors(messageSizeRule, { maxMessageSizeBytes: size })).toEqual([
        `maxMessageSizeBytes: ${size} must be a whole number of bytes [quotas-messages]`,
      ]);
    }
  });
});
