/** Rule group `jobs`: maxAttempts and jobTimeoutSeconds from the job definitions. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JobDefinitionLike } from '../../../lib/constructs/job-queue/props.ts';
import { ruleInput } from '../../../lib/constructs/job-queue/rules/index.ts';
import { jobNeeds, jobsRule } from '../../../lib/constructs/job-queue/rules/jobs.ts';
import { defineJob } from '../../../lib/runtime/job.ts';
import { defineRateLimit } from '../../../lib/runtime/limits/rate-limit.ts';
import { errors, props } from './helpers.ts';

/** A job as `defineJob` returns it, as far as JobQueue reads it. */
function job(type: string, maxAttempts: number, timeoutSeconds: number, queue = 'jobs') {
  return { type, queue, retry: { maxAttempts, baseDelaySeconds: 2, maxDelaySeconds: 900 }, timeoutSeconds };
}

const fromJobs = { maxAttempts: undefined, jobTimeoutSeconds: undefined } as const;

describe('jobs rule', () => {
  it('derives maxAttempts and jobTimeoutSeconds from the highest values of the jobs', () => {
    const jobs = [job('a', 3, 40), job('b', 8, 5), job('c', 8, 12)];
    expect(errors(jobsRule, { ...fromJobs, jobs })).toEqual([]);
    expect(jobNeeds(jobs)).toEqual({
      maxAttempts: { value: 8, type: 'b' },
      jobTimeoutSeconds: { value: 40, type: 'a' },
    });
    const { settings } = ruleInput(props({ ...fromJobs, jobs }));
    expect(settings.maxAttempts).toBe(8);
    expect(settings.jobTimeoutSeconds).toBe(40);
    expect(settings.maxReceiveCount).toBe(13);
    expect(settings.functionTimeout?.toSeconds()).toBe(120);
    expect(settings.visibilityTimeout?.toSeconds()).toBe(720);
  });

  it('refuses two jobs that give one rate limit name different settings (they would share one bucket)', () => {
    const spec = { queue: 'jobs', schema: z.object({ id: z.string() }), run: async () => {} };
    const slow = defineRateLimit({ name: 'partner', perSecond: 1, adaptive: false });
    const fast = defineRateLimit({ name: 'partner', perSecond: 50, adaptive: false });
    const jobs = [
      defineJob({ ...spec, type: 'jobs.a', rateLimits: [slow] }),
      defineJob({ ...spec, type: 'jobs.b', rateLimits: [fast] }),
      defineJob({ ...spec, type: 'jobs.c', rateLimits: [slow] }),
    ];
    expect(errors(jobsRule, { ...fromJobs, jobs })).toEqual([
      'jobs: rate limit "partner" is declared twice with different settings ({"perSecond":1,"burst":1,"adaptive":false} and {"perSecond":50,"burst":50,"adaptive":false}): jobs that name it share one bucket, so declare it once (defineRateLimit in a module every job imports) or give each its own name',
    ]);
    expect(errors(jobsRule, { ...fromJobs, jobs: [jobs[0], jobs[2]] })).toEqual([]);
  });

  it('takes what defineJob returns as it is (its defaults applied: 5 attempts, 30 s)', () => {
    const spec = { queue: 'jobs', schema: z.object({ id: z.string() }), run: async () => {} };
    const jobs: JobDefinitionLike[] = [
      defineJob({ ...spec, type: 'jobs.defaults' }),
      defineJob({ ...spec, type: 'jobs.patient', retry: { maxAttempts: 8 }, timeoutSeconds: 12 }),
    ];
    expect(errors(jobsRule, { ...fromJobs, jobs })).toEqual([]);
    const { settings } = ruleInput(props({ ...fromJobs, jobs }));
    expect([settings.maxAttempts, settings.jobTimeoutSeconds]).toEqual([8, 30]);
  });

  it('accepts explicit values at or above what the jobs need', () => {
    expect(errors(jobsRule, { jobs: [job('a', 5, 10)], maxAttempts: 5, jobTimeoutSeconds: 10 })).toEqual([]);
    expect(errors(jobsRule, { jobs: [job('a', 5, 10)], maxAttempts: 9, jobTimeoutSeconds: 20 })).toEqual([]);
    const { settings } = ruleInput(props({ jobs: [job('a', 5, 10)], maxAttempts: 9 }));
    expect(settings.maxAttempts).toBe(9);
  });

  it('refuses explicit values below what a job needs, naming the job', () => {
    expect(
      errors(jobsRule, { jobs: [job('a', 2, 3), job('b', 6, 12)], maxAttempts: 5, jobTimeoutSeconds: 10 }),
    ).toEqual([
      "maxAttempts: 5 is below 6, the retry.maxAttempts of job 'b': the redrive policy derived from it can move that job to the DLQ before the worker has used its attempts",
      "jobTimeoutSeconds: 10 is below 12, the timeoutSeconds of job 'b': the function timeout derived from it can kill that job's runs with the whole batch",
    ]);
  });

  it('refuses an empty list, a non-array, malformed entries and a type given twice', () => {
    expect(errors(jobsRule, { ...fromJobs, jobs: [] })).toEqual([
      'jobs: is empty: give the job definitions the worker runs, or leave jobs out and set maxAttempts and jobTimeoutSeconds',
    ]);
    expect(errors(jobsRule, { jobs: 'payments' })).toEqual([
      "jobs: must be an array of job definitions (what defineJob returns), got string 'payments'",
    ]);
    expect(
      errors(jobsRule, {
        jobs: [job('a', 5, 10), { type: 'b', retry: {}, timeoutSeconds: 1 }, job('a', 5, 10)],
      }),
    ).toEqual([
      'jobs[1]: not a job definition: needs type (a string), retry.maxAttempts (a whole number of at least 1) and timeoutSeconds (above 0); make it with defineJob',
      "jobs: type 'a' is given twice",
    ]);
  });

  it("refuses a job whose queue is another queue's", () => {
    expect(errors(jobsRule, { jobs: [job('payments.capture', 5, 10, 'payments')] })).toEqual([
      "jobs: 'payments.capture' is sent to queue 'payments', not to 'jobs': its messages never reach this worker",
    ]);
    // A structural job without `queue` is fine.
    expect(errors(jobsRule, { jobs: [{ type: 'x', retry: { maxAttempts: 1 }, timeoutSeconds: 1 }] })).toEqual(
      [],
    );
  });
});
