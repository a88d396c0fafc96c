/** Rule group `alarms`: the age-of-oldest-message threshold [sqs-available-cloudwatch-metrics]. */
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { alarmsRule } from '../../../lib/constructs/job-queue/rules/alarms.ts';
import { errors } from './helpers.ts';

describe('alarms rule', () => {
  it('accepts whole seconds from 1 up to below the retention period (default 15 minutes)', () => {
    for (const threshold of [undefined, Duration.seconds(1), Duration.hours(1), Duration.days(3)]) {
      expect(errors(alarmsRule, { ageOfOldestMessageAlarmThreshold: threshold })).toEqual([]);
    }
  });

  it('refuses a threshold that fires whenever the queue holds a message: 0, or below a second', () => {
    for (const threshold of [Duration.seconds(0), Duration.millis(500), Duration.millis(1500)]) {
      expect(errors(alarmsRule, { ageOfOldestMessageAlarmThreshold: threshold })).toEqual([
        `ageOfOldestMessageAlarmThreshold: ${threshold.toSeconds({ integral: false })} s must be a whole number of seconds, at least 1: ApproximateAgeOfOldestMessage is counted in seconds, and at 0 the alarm fires whenever the queue holds any message; give how long a job may wait before someone should look (default 15 minutes) [sqs-available-cloudwatch-metrics]`,
      ]);
    }
  });

  it('refuses a threshold no message reaches: the retention period or more', () => {
    expect(
      errors(alarmsRule, {
        ageOfOldestMessageAlarmThreshold: Duration.hours(2),
        retentionPeriod: Duration.hours(2),
      }),
    ).toEqual([
      'ageOfOldestMessageAlarmThreshold: 2 hours is not below retentionPeriod (2 hours): a message is deleted before it gets that old, so the alarm never fires [sqs-available-cloudwatch-metrics]',
    ]);
    expect(errors(alarmsRule, { ageOfOldestMessageAlarmThreshold: Duration.days(5) })).toHaveLength(1);
  });
});
