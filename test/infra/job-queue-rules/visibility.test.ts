/** Rule group `visibility`: ≥ 6 × function timeout + batching window, ≤ 12 hours [services-sqs-configure]. */
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ruleInput } from '../../../lib/constructs/job-queue/rules/index.ts';
import { visibilityRule } from '../../../lib/constructs/job-queue/rules/visibility.ts';
import { errors, props } from './helpers.ts';

describe('visibility rule', () => {
  it('defaults to 6 × the function timeout plus the batching window, which it accepts', () => {
    const s = ruleInput(
      props({ functionTimeout: Duration.seconds(60), maxBatchingWindow: Duration.seconds(2) }),
    ).settings;
    expect(s.visibilityTimeout?.toSeconds()).toBe(362);
    expect(
      errors(visibilityRule, {
        functionTimeout: Duration.seconds(60),
        maxBatchingWindow: Duration.seconds(2),
      }),
    ).toEqual([]);
    expect(
      errors(visibilityRule, {
        functionTimeout: Duration.seconds(30),
        visibilityTimeout: Duration.seconds(180),
      }),
    ).toEqual([]);
  });

  it('refuses less than 6 × the function timeout (plus the window)', () => {
    expect(
      errors(visibilityRule, {
        functionTimeout: Duration.seconds(30),
        visibilityTimeout: Duration.seconds(179),
      }),
    ).toEqual([
      'visibilityTimeout: 179 s is below 180 s (6 × functionTimeout 30 s) [services-sqs-configure]',
    ]);
    expect(
      errors(visibilityRule, {
        functionTimeout: Duration.seconds(30),
        maxBatchingWindow: Duration.seconds(10),
        visibilityTimeout: Duration.seconds(185),
      }),
    ).toEqual([
      'visibilityTimeout: 185 s is below 190 s (6 × functionTimeout 30 s + maxBatchingWindow 10 s) [services-sqs-configure]',
    ]);
  });

  it('refuses more than 12 hours', () => {
    expect(errors(visibilityRule, { visibilityTimeout: Duration.hours(13) })).toEqual([
      'visibilityTimeout: 46800 s is above 43200 s (12 hours), the SQS maximum; lower functionTimeout',
    ]);
  });

  it('says nothing when the function timeout is unknown (missing job limit)', () => {
    expect(errors(visibilityRule, { jobTimeoutSeconds: undefined })).toEqual([]);
  });
});
