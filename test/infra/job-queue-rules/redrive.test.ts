/** Rule group `redrive`: maxReceiveCount above maxAttempts, at most 1,000; a warning below 5. */
import { describe, expect, it } from 'vitest';
import { redriveRule } from '../../../lib/constructs/job-queue/rules/redrive.ts';
import { errors, warnings } from './helpers.ts';

describe('redrive rule', () => {
  it('accepts the default (maxAttempts + 5) and values between maxAttempts and 1,000', () => {
    expect(errors(redriveRule)).toEqual([]);
    expect(errors(redriveRule, { maxReceiveCount: 6 })).toEqual([]);
    expect(errors(redriveRule, { maxReceiveCount: 1000 })).toEqual([]);
  });

  it('refuses maxReceiveCount at or below maxAttempts, not whole, or above 1,000', () => {
    const atOrBelow = /must be a whole number above maxAttempts \(5\), or SQS dead-letters messages/;
    expect(errors(redriveRule, { maxReceiveCount: 5 })).toEqual([expect.stringMatching(atOrBelow)]);
    expect(errors(redriveRule, { maxReceiveCount: 2 })).toEqual([expect.stringMatching(atOrBelow)]);
    expect(errors(redriveRule, { maxReceiveCount: 7.5 })).toEqual([
      expect.stringMatching(/^maxReceiveCount: 7.5 /),
    ]);
    expect(errors(redriveRule, { maxReceiveCount: 1001 })).toEqual([
      'maxReceiveCount: 1001 is above 1000, the SQS maximum [sqs-dead-letter-queues]',
    ]);
  });

  it('says nothing derived from a missing maxAttempts', () => {
    expect(errors(redriveRule, { maxAttempts: undefined })).toEqual([]);
    expect(errors(redriveRule, { maxAttempts: 'x' })).toEqual([]);
  });

  it('warns (does not refuse) below 5', () => {
    expect(errors(redriveRule, { maxAttempts: 2, maxReceiveCount: 3 })).toEqual([]);
    expect(warnings(redriveRule, { maxAttempts: 2, maxReceiveCount: 3 })).toEqual([
      'sqs-jobs:lowMaxReceiveCount: maxReceiveCount 3 is below 5: throttled deliveries raise the receive count without running and can reach the DLQ [services-sqs-scaling]',
    ]);
    expect(warnings(redriveRule, { maxReceiveCount: 6 })).toEqual([]);
  });
});
