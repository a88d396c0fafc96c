/** Rule group `durations`: whole seconds, a function timeout of 1 s or more, a retention of 60 s – 14 days. */
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { durationsRule } from '../../../lib/constructs/job-queue/rules/durations.ts';
import { errors } from './helpers.ts';

describe('durations rule', () => {
  it('accepts whole seconds in range, and the defaults', () => {
    expect(errors(durationsRule)).toEqual([]);
    expect(
      errors(durationsRule, {
        functionTimeout: Duration.seconds(1),
        maxBatchingWindow: Duration.seconds(1),
        visibilityTimeout: Duration.hours(1),
        retentionPeriod: Duration.seconds(60),
      }),
    ).toEqual([]);
    expect(errors(durationsRule, { retentionPeriod: Duration.days(14) })).toEqual([]);
  });

  it('refuses a fraction of a second, naming the prop (CDK would name none)', () => {
    expect(
      errors(durationsRule, {
        functionTimeout: Duration.millis(20_500),
        maxBatchingWindow: Duration.millis(1500),
        visibilityTimeout: Duration.millis(400_500),
        retentionPeriod: Duration.millis(360_500),
      }),
    ).toEqual([
      'functionTimeout: 20.5 s must be a whole number of seconds (CloudFormation takes seconds)',
      'maxBatchingWindow: 1.5 s must be a whole number of seconds (CloudFormation takes seconds)',
      'visibilityTimeout: 400.5 s must be a whole number of seconds (CloudFormation takes seconds)',
      'retentionPeriod: 360.5 s must be a whole number of seconds (CloudFormation takes seconds)',
    ]);
  });

  it('refuses a function timeout of 0 and a retention outside 60 seconds – 14 days', () => {
    expect(errors(durationsRule, { functionTimeout: Duration.seconds(0) })).toEqual([
      'functionTimeout: 0 seconds must be at least 1 second [configuration-timeout]',
    ]);
    for (const retention of [Duration.seconds(30), Duration.days(15)]) {
      expect(errors(durationsRule, { retentionPeriod: retention })).toEqual([
        `retentionPeriod: ${retention.toHumanString()} is outside 60 seconds – 14 days, what SQS accepts [quotas-messages]`,
      ]);
    }
  });
});
