/** Rule group `timeouts`: function timeout ≤ 15 minutes, job time limit below it. */
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ruleInput } from '../../../lib/constructs/job-queue/rules/index.ts';
import { timeoutsRule } from '../../../lib/constructs/job-queue/rules/timeouts.ts';
import { errors, props } from './helpers.ts';

describe('timeouts rule', () => {
  it('defaults the function timeout to max(30 s, 3 × job limit), at most 900 s', () => {
    expect(ruleInput(props({ jobTimeoutSeconds: 5 })).settings.functionTimeout?.toSeconds()).toBe(30);
    expect(ruleInput(props({ jobTimeoutSeconds: 20 })).settings.functionTimeout?.toSeconds()).toBe(60);
    expect(ruleInput(props({ jobTimeoutSeconds: 400 })).settings.functionTimeout?.toSeconds()).toBe(900);
    expect(errors(timeoutsRule, { jobTimeoutSeconds: 400 })).toEqual([]);
  });

  it('refuses a job limit at or above the function timeout', () => {
    expect(errors(timeoutsRule, { jobTimeoutSeconds: 30, functionTimeout: Duration.seconds(30) })).toEqual([
      'jobTimeoutSeconds: 30 s must be below functionTimeout (30 s), or a job that runs into its time limit is killed with the whole batch instead of being aborted and retried',
    ]);
    // The default cannot save a job limit of 15 minutes.
    expect(errors(timeoutsRule, { jobTimeoutSeconds: 900 })).toEqual([
      expect.stringMatching(/^jobTimeoutSeconds: 900 s must be below functionTimeout \(900 s\)/),
    ]);
  });

  it('refuses a function timeout above 15 minutes', () => {
    expect(errors(timeoutsRule, { functionTimeout: Duration.minutes(16) })).toEqual([
      'functionTimeout: 960 s is above 900 s, the Lambda maximum',
    ]);
  });

  it('says nothing derived from a missing job limit', () => {
    expect(errors(timeoutsRule, { jobTimeoutSeconds: undefined })).toEqual([]);
    expect(ruleInput(props({ jobTimeoutSeconds: undefined })).settings.functionTimeout).toBeUndefined();
  });
});
