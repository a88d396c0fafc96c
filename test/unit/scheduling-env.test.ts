/**
 * schedulingFromEnv and a queue's scheduling variables set only in part: a
 * `JOBS_SCHEDULE_DLQ_ARN_<NAME>` (or a group, or a role) without the rest of its queue's variables
 * is refused naming what is set and what is missing, never silently ignored.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { schedulingFromEnv } from '../../lib/client/scheduling.ts';

const ROLE = 'arn:aws:iam::123456789012:role/billing-scheduler';
const DLQ = 'arn:aws:sqs:eu-west-1:123456789012:billing-schedule-dlq';

function refusal(env: Record<string, string>): JobClientError {
  try {
    schedulingFromEnv(env);
  } catch (error) {
    if (error instanceof JobClientError) return error;
    throw error;
  }
  throw new Error('schedulingFromEnv accepted the environment');
}

describe('schedulingFromEnv with a queue set in part', () => {
  it('a dead-letter queue ARN whose queue name is misspelled is refused, naming it, what is missing and the complete queues', () => {
    const error = refusal({
      JOBS_SCHEDULE_GROUP_BILLING: 'app-billing',
      JOBS_SCHEDULER_ROLE_ARN_BILLING: ROLE,
      JOBS_SCHEDULE_DLQ_ARN_BILLNG: DLQ,
    });
    expect(error.code).toBe('InvalidOptions');
    expect(error.senderFault).toBe(true);
    expect(error.problems.map((p) => p.message)).toEqual([
      'JOBS_SCHEDULE_DLQ_ARN_BILLNG is set without JOBS_SCHEDULE_GROUP_BILLNG and JOBS_SCHEDULER_ROLE_ARN_BILLNG, so queue "billng" has no scheduling and it would be ignored: check the queue name in the variable (queues with complete scheduling: billing); jobQueue.grantScheduleJobs(fn) sets the three together',
    ]);
    expect(error.message).toMatch(
      /^invalid scheduling environment \(schedulingFromEnv\): JOBS_SCHEDULE_DLQ_ARN_BILLNG is set/,
    );
  });

  it('a group without its role is refused the same way', () => {
    expect(
      refusal({ JOBS_SCHEDULE_GROUP_HALF: 'only-a-group', JOBS_SCHEDULE_DLQ_ARN_HALF: DLQ }).problems.map(
        (p) => p.message,
      ),
    ).toEqual([
      'JOBS_SCHEDULE_GROUP_HALF and JOBS_SCHEDULE_DLQ_ARN_HALF are set without JOBS_SCHEDULER_ROLE_ARN_HALF, so queue "half" has no scheduling and they would be ignored: check the queue name in the variable (no queue has complete scheduling); jobQueue.grantScheduleJobs(fn) sets the three together',
    ]);
  });

  it('for any queue name and any of its three variables: read when group and role are both set, refused otherwise, naming every variable set', () => {
    const name = fc.stringMatching(/^[A-Z][A-Z0-9]{0,8}(_[A-Z0-9]{1,5})?$/);
    fc.assert(
      fc.property(name, fc.boolean(), fc.boolean(), fc.boolean(), (suffix, group, role, dlq) => {
        fc.pre(group || role || dlq);
        const env: Record<string, string> = {
          ...(group ? { [`JOBS_SCHEDULE_GROUP_${suffix}`]: 'the-group' } : {}),
          ...(role ? { [`JOBS_SCHEDULER_ROLE_ARN_${suffix}`]: ROLE } : {}),
          ...(dlq ? { [`JOBS_SCHEDULE_DLQ_ARN_${suffix}`]: DLQ } : {}),
        };
        const queue = suffix.toLowerCase().replaceAll('_', '-');
        if (group && role) {
          expect(schedulingFromEnv(env).queues).toEqual({
            [queue]: { groupName: 'the-group', roleArn: ROLE, ...(dlq ? { deadLetterQueueArn: DLQ } : {}) },
          });
        } else {
          const [problem] = refusal(env).problems;
          for (const key of Object.keys(env)) expect(problem?.message).toContain(key);
          expect(problem?.message).toContain(`queue "${queue}" has no scheduling`);
        }
      }),
      { numRuns: 200 },
    );
  });
});
