/** Rule group `recurringJobs`: schedule, time zone, job type, data, partition key, retry bounds [schedule-types]. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recurringJobsRule } from '../../../lib/constructs/job-queue/rules/recurring-jobs.ts';
import { defineJob } from '../../../lib/runtime/job.ts';
import { errors } from './helpers.ts';

const nightly = {
  name: 'nightly',
  job: 'any.type',
  schedule: 'cron(0 23 ? * MON-FRI *)',
  timeZone: 'America/New_York',
};

describe('recurringJobs rule', () => {
  it('accepts a weekday cron in a time zone and a rate; without jobs any job type (the worker is not known)', () => {
    expect(
      errors(recurringJobsRule, {
        recurringJobs: [nightly, { name: 'sweep', job: 'other.type', schedule: 'rate(15 minutes)' }],
      }),
    ).toEqual([]);
  });

  it('checks the job type against jobs when they are given', () => {
    const jobs = [{ type: 'a.run', queue: 'jobs', retry: { maxAttempts: 2 }, timeoutSeconds: 5 }];
    expect(errors(recurringJobsRule, { jobs, recurringJobs: [{ ...nightly, job: 'a.run' }] })).toEqual([]);
    expect(errors(recurringJobsRule, { jobs, recurringJobs: [nightly] })).toEqual([
      "recurringJobs['nightly']: job 'any.type' is not one of this queue's jobs (a.run): the worker would dead-letter every firing; add its definition to jobs, or use one of these types",
    ]);
  });

  it('refuses what is not a list, and a job that is neither a definition nor a type (the size of a firing is checked with its real Input: test/infra/recurring-job-input.test.ts)', () => {
    expect(errors(recurringJobsRule, { recurringJobs: 'nightly' })).toEqual([
      'recurringJobs: must be an array of { name, job, schedule, timeZone, data }',
    ]);
    expect(errors(recurringJobsRule, { recurringJobs: [{ ...nightly, job: '' }] })).toEqual([
      "recurringJobs['nightly']: job must be a job definition (defineJob) or its type string, e.g. job: 'billing.issue-invoices'",
    ]);
  });

  it('refuses a schedule EventBridge might read otherwise than we checked it, saying what to write (it is sent as written)', () => {
    expect(
      errors(recurringJobsRule, {
        recurringJobs: [
          { ...nightly, schedule: 'cron(0  23 ? * MON-FRI *)' },
          { ...nightly, name: 'weekend', schedule: 'cron(0 8 ? * SAT-SUN *)' },
          { ...nightly, name: 'hourly', schedule: 'cron(0/60 * * * ? *)' },
        ],
      }),
    ).toEqual([
      `recurringJobs['nightly']: schedule: "cron(0  23 ? * MON-FRI *)" is not spaced as in AWS's examples, the form sqs-jobs checks and sends: one space between parts, none after '(' or before ')', nothing around the expression, no tab or line break: write cron(0 23 ? * MON-FRI *)`,
      `recurringJobs['weekend']: schedule: cron(0 8 ? * SAT-SUN *): day-of-week field: "SAT-SUN" runs from 7 down to 1: EventBridge cron ranges run from low to high (no wrap-around); to wrap around write SAT,SUN; for SUN through SAT write SUN-SAT`,
      `recurringJobs['hourly']: schedule: cron(0/60 * * * ? *): minutes field: "0/60" has step 60: a step is at most 59 in the minutes field (0–59, 60 values); step 60 would fire at 0 only, and EventBridge refuses such steps (*/60 in minutes): write 0`,
    ]);
  });

  it('refuses a field it does not know, naming it, the known fields and what was likely meant', () => {
    expect(
      errors(recurringJobsRule, {
        recurringJobs: [{ ...nightly, scheduleExpressionTimezone: 'UTC', enable: false }],
      }),
    ).toEqual([
      "recurringJobs['nightly']: scheduleExpressionTimezone is not a recurring job field (known: data, description, enabled, endDate, job, maximumEventAgeSeconds, maximumRetryAttempts, name, partitionKey, schedule, startDate, timeZone); did you mean timeZone?",
      "recurringJobs['nightly']: enable is not a recurring job field (known: data, description, enabled, endDate, job, maximumEventAgeSeconds, maximumRetryAttempts, name, partitionKey, schedule, startDate, timeZone); did you mean enabled?",
    ]);
  });

  it('refuses a data field that is undefined (a value that went missing), naming its path', () => {
    expect(
      errors(recurringJobsRule, {
        recurringJobs: [{ ...nightly, data: { region: process.env.SQS_JOBS_UNSET_FOR_TEST, day: 1 } }],
      }),
    ).toEqual([
      "recurringJobs['nightly']: data.region is undefined: JSON would leave the field out (leave it out, or give it a value): recurring job data must be plain JSON",
    ]);
  });

  it('refuses an end before the start', () => {
    expect(
      errors(recurringJobsRule, {
        recurringJobs: [{ ...nightly, startDate: new Date('2027-02-01'), endDate: new Date('2027-01-01') }],
      }),
    ).toEqual(["recurringJobs['nightly']: endDate must be after startDate"]);
  });

  it("refuses a schedule that never fires, an offset for a time zone, and data the job's schema refuses", () => {
    expect(
      errors(recurringJobsRule, { recurringJobs: [{ ...nightly, schedule: 'cron(0 1 30 2 ? *)' }] }),
    ).toEqual([
      "recurringJobs['nightly']: schedule cron(0 1 30 2 ? *) never fires from now on: check the day, month and year fields",
    ]);
    expect(
      errors(recurringJobsRule, { recurringJobs: [{ ...nightly, schedule: 'cron(0 1 * * ? 2020)' }] }),
    ).toEqual([
      "recurringJobs['nightly']: schedule cron(0 1 * * ? 2020) never fires from now on: check the day, month and year fields",
    ]);
    expect(errors(recurringJobsRule, { recurringJobs: [{ ...nightly, timeZone: '+01:00' }] })).toEqual([
      expect.stringContaining('timeZone: "+01:00" is not an IANA time zone name'),
    ]);
    const invoices = defineJob({
      type: 'billing.nightly',
      queue: 'jobs',
      schema: z.object({ graceMinutes: z.number() }),
      run: async () => {},
    });
    const jobs = [invoices];
    expect(
      errors(recurringJobsRule, {
        jobs,
        recurringJobs: [{ ...nightly, job: invoices, data: { graceMinutes: 'sixty' } }],
      }),
    ).toEqual([
      "recurringJobs['nightly']: data.graceMinutes: Invalid input: expected number, received string: the job's schema refuses it, so every firing would be dead-lettered; give data that passes billing.nightly's schema",
    ]);
    expect(
      errors(recurringJobsRule, {
        jobs,
        recurringJobs: [{ ...nightly, job: invoices, data: { graceMinutes: 60 } }],
      }),
    ).toEqual([]);
  });
});
