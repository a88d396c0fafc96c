/** Rule group `enqueue-targets`: target names map back from JOBS_QUEUE_URL_<NAME>. */
import { App, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { enqueueTargetsRule } from '../../../lib/constructs/job-queue/rules/enqueue-targets.ts';
import { errors } from './helpers.ts';

describe('enqueue-targets rule', () => {
  const queue = new sqs.Queue(new Stack(new App(), 'Rules'), 'Target');

  it('accepts logical names', () => {
    expect(errors(enqueueTargetsRule, { enqueueTargets: { 'mail-out': queue, payments: queue } })).toEqual(
      [],
    );
  });

  it('refuses names that would not survive JOBS_QUEUE_URL_<NAME>', () => {
    expect(errors(enqueueTargetsRule, { enqueueTargets: { 'bad name': queue, Mail_Out: queue } })).toEqual([
      "enqueueTargets: 'bad name' is not a valid logical queue name (lowercase letters, digits, '-')",
      "enqueueTargets: 'Mail_Out' is not a valid logical queue name (lowercase letters, digits, '-')",
    ]);
  });
});
