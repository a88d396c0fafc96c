/** Rule group `environment`: the variables the construct sets cannot be given in `environment`. */
import { describe, expect, it } from 'vitest';
import { environmentRule } from '../../../lib/constructs/job-queue/rules/environment.ts';
import { errors } from './helpers.ts';

describe('environment rule', () => {
  it("accepts the user's own variables, and NODE_OPTIONS without sourceMaps", () => {
    expect(
      errors(environmentRule, {
        environment: { STRIPE_KEY_PARAM: '/stripe', NODE_OPTIONS: '--max-old-space-size=900' },
      }),
    ).toEqual([]);
  });

  it('refuses each variable the construct sets, one line each, naming what to do instead', () => {
    expect(
      errors(environmentRule, {
        environment: {
          JOBS_QUEUE_URL: 'x',
          POWERTOOLS_SERVICE_NAME: 'y',
          JOBS_HANDLER_VERSION: 'v1',
          JOBS_QUEUE_URL_BILLING: 'https://sqs/billing',
        },
      }),
    ).toEqual([
      "environment: JOBS_QUEUE_URL is set by the construct and cannot be overridden; it is this queue's URL",
      'environment: POWERTOOLS_SERVICE_NAME is set by the construct and cannot be overridden; it is `sqs-jobs-<name>`: choose the `name` prop',
      'environment: JOBS_HANDLER_VERSION is set by the construct and cannot be overridden; give the `handlerVersion` prop',
      'environment: JOBS_QUEUE_URL_BILLING is set by the construct and cannot be overridden; use the `enqueueTargets` prop or `addEnqueueTarget`, which also grant the send',
    ]);
  });

  it('refuses NODE_OPTIONS when sourceMaps sets it', () => {
    expect(
      errors(environmentRule, {
        sourceMaps: true,
        environment: { NODE_OPTIONS: '--max-old-space-size=900' },
      }),
    ).toEqual([
      'environment: NODE_OPTIONS is set by the construct when sourceMaps is true; drop sourceMaps and add --enable-source-maps to your NODE_OPTIONS',
    ]);
  });
});
