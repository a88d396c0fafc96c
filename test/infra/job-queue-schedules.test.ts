/**
 * JobQueue and time: the schedule group, the scheduler's role, the schedule dead-letter queue and
 * its alarms (made only when a queue uses time), recurring jobs as AWS::Scheduler::Schedule
 * resources, the grant of a producer that schedules one-time jobs, and the synth-time refusal of
 * bad recurring jobs. Bundling is skipped (none of this depends on the worker's code).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlarmTopic } from '../../lib/constructs/alarm-topic.ts';
import { createJobsApp } from '../../lib/constructs/checks.ts';
import { JobsConfigError } from '../../lib/constructs/errors.ts';
import { IdempotencyTable } from '../../lib/constructs/idempotency-table.ts';
import { JobQueue, type JobQueueProps, type RecurringJob } from '../../lib/constructs/job-queue.ts';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import { logicalId, PROJECT_ROOT, referencedId, removeDir, roleStatements, tempOutdir } from './helpers.ts';

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
type TemplateJson = { Resources: Record<string, Resource> };

const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

const job = (type: string, queue: string) => ({ type, queue, retry: { maxAttempts: 3 }, timeoutSeconds: 5 });

function unbundledStack(id: string): Stack {
  return new Stack(new App({ context: SKIP_BUNDLING }), id);
}

function queueProps(
  name: string,
  table: IdempotencyTable,
  extra: Partial<JobQueueProps> = {},
): JobQueueProps {
  return {
    name,
    entry: 'test/fixtures/worker-handler.ts',
    projectRoot: PROJECT_ROOT,
    idempotencyTable: table.table,
    alarmTopic: false,
    jobs: [job('billing.issue-invoices', name), job('billing.other', name)],
    ...extra,
  };
}

const NIGHTLY: RecurringJob = {
  name: 'nightly-invoices',
  job: 'billing.issue-invoices',
  schedule: 'cron(0 23 * * ? *)',
  timeZone: 'Europe/Berlin',
  data: { batch: 'all' },
  partitionKey: 'invoicing',
};

function resourcesOf(json: TemplateJson, type: string): [string, Resource][] {
  return Object.entries(json.Resources).filter(([, r]) => r.Type === type);
}

describe('a queue that does not use time', () => {
  it('synthesizes as before: no schedule group, role, schedule DLQ or alarms; FIFO without content-based deduplication', () => {
    const stack = unbundledStack('NoTime');
    const table = new IdempotencyTable(stack, 'Idempotency');
    const q = new JobQueue(stack, 'Billing', queueProps('billing', table, { fifo: true }));
    const json = Template.fromStack(stack).toJSON() as TemplateJson;
    expect(Object.values(json.Resources).filter((r) => r.Type.startsWith('AWS::Scheduler::'))).toEqual([]);
    expect(json.Resources[logicalId(q.queue)]!.Properties.ContentBasedDeduplication).toBeUndefined();
    expect(resourcesOf(json, 'AWS::SQS::Queue')).toHaveLength(2);
    expect(resourcesOf(json, 'AWS::CloudWatch::Alarm')).toHaveLength(8); // the eight of every JobQueue (batches overdue included), none for schedules
    expect(q.scheduleAlarms).toBeUndefined();
    expect(q.recurringJobs).toEqual([]);
  });
});

describe('a FIFO queue with a recurring job', () => {
  let json: TemplateJson;
  let q: JobQueue;
  let topic: AlarmTopic;
  let producer: lambda.Function;
  let table: IdempotencyTable;
  const groupId = () => logicalId(q.node.findChild('Scheduling').node.findChild('Group'));

  beforeAll(() => {
    const stack = unbundledStack('Billing');
    table = new IdempotencyTable(stack, 'Idempotency');
    topic = new AlarmTopic(stack, 'Alarms');
    q = new JobQueue(
      stack,
      'Invoices',
      queueProps('invoices', table, {
        fifo: true,
        alarmTopic: topic.topic,
        jobs: [job('billing.issue-invoices', 'invoices'), job('billing.other', 'invoices')],
        recurringJobs: [NIGHTLY],
      }),
    );
    q.addRecurringJob({
      name: 'hourly-sweep',
      job: job('billing.other', 'invoices'),
      schedule: 'rate(1 hour)',
      partitionKey: 'sweeps',
      maximumEventAgeSeconds: 3600,
      maximumRetryAttempts: 10,
      enabled: false,
      startDate: new Date('2027-01-01T00:00:00Z'),
    });
    producer = new lambda.Function(stack, 'Producer', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => {};'),
    });
    q.grantScheduleJobs(producer);
    json = Template.fromStack(stack).toJSON() as TemplateJson;
  });

  it('one schedule group named <stack>-<queue>, removed with the stack', () => {
    const groups = resourcesOf(json, 'AWS::Scheduler::ScheduleGroup');
    expect(groups.map(([, r]) => r.Properties)).toEqual([{ Name: 'Billing-invoices' }]);
    expect(q.scheduleGroupName).toBe('Billing-invoices');
    expect((groups[0]![1] as unknown as { DeletionPolicy: string }).DeletionPolicy).toBe('Delete');
  });

  it('the nightly schedule: cron in its time zone, the templated SQS target with the envelope, AWS retry defaults, the schedule DLQ', () => {
    const [, nightly] = resourcesOf(json, 'AWS::Scheduler::Schedule').find(
      ([, r]) => r.Properties.Name === 'nightly-invoices',
    )!;
    const { Target, GroupName, ...rest } = nightly.Properties as {
      Target: Record<string, unknown>;
      GroupName: unknown;
    };
    expect(GroupName).toBe('Billing-invoices');
    expect(rest).toEqual({
      Name: 'nightly-invoices',
      Description: 'sqs-jobs recurring job billing.issue-invoices on queue invoices',
      ScheduleExpression: 'cron(0 23 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
    });
    const { Input, ...target } = Target as { Input: string };
    expect(target).toEqual({
      Arn: { 'Fn::GetAtt': [logicalId(q.queue), 'Arn'] },
      RoleArn: { 'Fn::GetAtt': [logicalId(q.schedulerRole), 'Arn'] },
      SqsParameters: { MessageGroupId: 'invoicing' },
      RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalId(q.scheduleDeadLetterQueue), 'Arn'] } },
    });
    expect(JSON.parse(Input)).toEqual({
      specversion: '1.0',
      id: 'nightly-invoices@<aws.scheduler.scheduled-time>',
      source: '/sqs-jobs/schedules/Billing-invoices',
      type: 'billing.issue-invoices',
      time: '<aws.scheduler.scheduled-time>',
      datacontenttype: 'application/json',
      data: { batch: 'all' },
      partitionkey: 'invoicing',
    });
    // The schedule waits for the role's policy: its first firing must be allowed to send.
    const policyId = resourcesOf(json, 'AWS::IAM::Policy').find(([, r]) =>
      (r.Properties.Roles as unknown[]).some((x) => referencedId(x) === logicalId(q.schedulerRole)),
    )?.[0];
    expect(nightly.DependsOn).toEqual(
      expect.arrayContaining([groupId(), logicalId(q.schedulerRole), policyId]),
    );
  });

  it('each firing, as EventBridge Scheduler fills in its time, is a valid envelope whose id is the schedule and that time', () => {
    const [, nightly] = resourcesOf(json, 'AWS::Scheduler::Schedule').find(
      ([, r]) => r.Properties.Name === 'nightly-invoices',
    )!;
    const input = (nightly.Properties.Target as { Input: string }).Input;
    const fire = (time: string) => parseEnvelope(input.replaceAll('<aws.scheduler.scheduled-time>', time));
    const monday = fire('2026-12-07T22:00:00Z');
    const tuesday = fire('2026-12-08T22:00:00Z');
    expect([monday.id, monday.time]).toEqual([
      'nightly-invoices@2026-12-07T22:00:00Z',
      '2026-12-07T22:00:00Z',
    ]);
    // The same firing delivered twice is the same job; two firings never share an id.
    expect(fire('2026-12-07T22:00:00Z')).toEqual(monday);
    expect(tuesday.id).not.toBe(monday.id);
  });

  it("the rate schedule added later: the user's retry policy, disabled, its start date, UTC", () => {
    const [, sweep] = resourcesOf(json, 'AWS::Scheduler::Schedule').find(
      ([, r]) => r.Properties.Name === 'hourly-sweep',
    )!;
    expect(sweep.Properties).toMatchObject({
      ScheduleExpression: 'rate(1 hour)',
      ScheduleExpressionTimezone: 'UTC',
      State: 'DISABLED',
      StartDate: '2027-01-01T00:00:00.000Z',
      Target: {
        SqsParameters: { MessageGroupId: 'sweeps' },
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 10 },
      },
    });
    expect(q.recurringJobs).toEqual(['nightly-invoices', 'hourly-sweep']);
  });

  it('the FIFO queue gets content-based deduplication (the templated SQS target sends no deduplication id)', () => {
    expect(json.Resources[logicalId(q.queue)]!.Properties.ContentBasedDeduplication).toBe(true);
  });

  it('the schedule DLQ is a standard queue, SSE-SQS, 14 days, TLS only', () => {
    const dlq = json.Resources[logicalId(q.scheduleDeadLetterQueue)]!.Properties;
    expect(dlq.FifoQueue).toBeUndefined();
    expect(dlq).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
    const policies = resourcesOf(json, 'AWS::SQS::QueuePolicy').filter(([, r]) =>
      (r.Properties.Queues as unknown[]).some(
        (x) => referencedId(x) === logicalId(q.scheduleDeadLetterQueue),
      ),
    );
    expect(JSON.stringify(policies[0]![1].Properties.PolicyDocument)).toContain('aws:SecureTransport');
  });

  it('the scheduler role: trusted by EventBridge Scheduler for this account and group only; sends to its queue and its DLQ, nothing else', () => {
    const role = json.Resources[logicalId(q.schedulerRole)]!.Properties as {
      AssumeRolePolicyDocument: { Statement: unknown[] };
    };
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnEquals: {
            'aws:SourceArn': {
              'Fn::GetAtt': [groupId(), 'Arn'],
            },
          },
        },
      },
    ]);
    const { statements, managedPolicies } = roleStatements(json, logicalId(q.schedulerRole));
    expect(managedPolicies).toEqual([]);
    expect(statements).toEqual([
      { effect: 'Allow', actions: ['sqs:SendMessage'], resources: [logicalId(q.queue)] },
      { effect: 'Allow', actions: ['sqs:SendMessage'], resources: [logicalId(q.scheduleDeadLetterQueue)] },
    ]);
  });

  it('two alarms on the alarm topic: schedule DLQ not empty, and AWS/Scheduler delivery failures of the group', () => {
    const alarms = q.scheduleAlarms!;
    const props = (a: { node: { defaultChild?: unknown } }) =>
      json.Resources[logicalId(a as never)]!.Properties as Record<string, unknown>;
    const dlq = props(alarms.scheduleDeadLetterQueueDepth);
    expect(dlq).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ Ref: logicalId(topic.topic) }],
      OKActions: [{ Ref: logicalId(topic.topic) }],
    });
    const failures = props(alarms.scheduleDeliveryFailures) as {
      Metrics: { Id: string; Expression?: string; MetricStat?: { Metric: Record<string, unknown> } }[];
      AlarmActions: unknown[];
    };
    expect(failures.AlarmActions).toEqual([{ Ref: logicalId(topic.topic) }]);
    expect(failures.Metrics.find((m) => m.Expression)?.Expression).toBe(
      'FILL(targetErrors, 0) + FILL(dropped, 0) + FILL(failedToDeadLetter, 0)',
    );
    const metrics = failures.Metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat!.Metric);
    expect(metrics.map((m) => m.MetricName).sort()).toEqual([
      'InvocationDroppedCount',
      'InvocationsFailedToBeSentToDeadLetterCount',
      'TargetErrorCount',
    ]);
    for (const m of metrics) {
      expect(m.Namespace).toBe('AWS/Scheduler');
      expect(m.Dimensions).toEqual([{ Name: 'ScheduleGroup', Value: 'Billing-invoices' }]);
    }
  });

  it("grantScheduleJobs: schedule actions on the group's schedules, PassRole to Scheduler only, schedule# items, send; and the producer's environment", () => {
    const { statements } = roleStatements(json, logicalId(producer.role!));
    const raw = resourcesOf(json, 'AWS::IAM::Policy')
      .filter(([, r]) =>
        (r.Properties.Roles as unknown[]).some((x) => referencedId(x) === logicalId(producer.role!)),
      )
      .flatMap(
        ([, r]) => (r.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      );
    expect(statements.map((s) => s.actions)).toEqual([
      [
        'scheduler:CreateSchedule',
        'scheduler:DeleteSchedule',
        'scheduler:GetSchedule',
        'scheduler:UpdateSchedule',
      ],
      ['iam:PassRole'],
      ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      ['sqs:SendMessage'],
    ]);
    expect(raw[0]!.Resource).toEqual({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':scheduler:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          ':schedule/Billing-invoices/*',
        ],
      ],
    });
    expect(raw[1]).toMatchObject({
      Resource: { 'Fn::GetAtt': [logicalId(q.schedulerRole), 'Arn'] },
      Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
    });
    expect(raw[2]).toMatchObject({
      Resource: { 'Fn::GetAtt': [logicalId(table.table), 'Arn'] },
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['schedule#*'] } },
    });
    expect(statements[3]!.resources).toEqual([logicalId(q.queue)]);
    const env = (
      json.Resources[logicalId(producer)]!.Properties.Environment as { Variables: Record<string, unknown> }
    ).Variables;
    expect(env).toEqual({
      JOBS_SCHEDULE_GROUP_INVOICES: 'Billing-invoices',
      JOBS_SCHEDULER_ROLE_ARN_INVOICES: { 'Fn::GetAtt': [logicalId(q.schedulerRole), 'Arn'] },
      JOBS_SCHEDULE_DLQ_ARN_INVOICES: { 'Fn::GetAtt': [logicalId(q.scheduleDeadLetterQueue), 'Arn'] },
      JOBS_QUEUE_URL_INVOICES: { Ref: logicalId(q.queue) },
      JOBS_IDEMPOTENCY_TABLE: { Ref: logicalId(table.table) },
    });
  });
});

describe('schedule group names', () => {
  it('stay within 64 characters: a long stack name is cut and hashed, so two long names differ', () => {
    const names = ['A'.repeat(70), `${'A'.repeat(69)}B`].map((stackName) => {
      const stack = unbundledStack(stackName);
      const table = new IdempotencyTable(stack, 'Idempotency');
      return new JobQueue(stack, 'Q', queueProps('a-fairly-long-queue-name', table)).scheduleGroupName;
    });
    for (const n of names) expect(n).toMatch(/^A+-[0-9a-f]{8}-a-fairly-long-queue-name$/);
    expect(names.map((n) => n.length)).toEqual([64, 64]);
    expect(names[0]).not.toBe(names[1]);
  });
});

describe('bad recurring jobs are refused at synth, each saying what to write', () => {
  const problems = (jobs: readonly RecurringJob[], extra: Partial<JobQueueProps> = {}): string[] => {
    const stack = unbundledStack('Refused');
    const table = new IdempotencyTable(stack, 'Idempotency');
    try {
      new JobQueue(stack, 'Q', queueProps('billing', table, { recurringJobs: jobs, ...extra }));
    } catch (e) {
      if (e instanceof JobsConfigError) return [...e.problems];
      throw e;
    }
    return [];
  };
  const base: RecurringJob = {
    name: 'nightly',
    job: 'billing.issue-invoices',
    schedule: 'cron(0 23 * * ? *)',
    timeZone: 'UTC',
  };

  it('a bad expression, a five-field cron, a one-time at(), a bad time zone, a cron without a time zone', () => {
    expect(problems([{ ...base, schedule: 'every night' }])).toEqual([
      `recurringJobs['nightly']: schedule: "every night" is not a schedule expression: write at(yyyy-mm-ddThh:mm:ss), rate(value minutes|hours|days) or cron(minutes hours day-of-month month day-of-week year)`,
    ]);
    expect(problems([{ ...base, schedule: 'cron(0 23 * * *)' }])).toEqual([
      "recurringJobs['nightly']: schedule: cron(0 23 * * *) has 5 fields; EventBridge cron has six: minutes hours day-of-month month day-of-week year",
    ]);
    expect(problems([{ ...base, schedule: 'cron(0 23 * * * *)' }])).toEqual([
      "recurringJobs['nightly']: schedule: cron(0 23 * * * *): exactly one of day-of-month and day-of-week must be '?' (EventBridge cron cannot combine them)",
    ]);
    expect(problems([{ ...base, schedule: 'at(2027-01-01T00:00:00)' }])).toEqual([
      "recurringJobs['nightly']: schedule at(2027-01-01T00:00:00) is a one-time schedule: a recurring job takes cron(...) or rate(...); send a one-time job with runAt from JobClient",
    ]);
    expect(problems([{ ...base, timeZone: 'Europe/Berlln' }])).toEqual([
      `recurringJobs['nightly']: timeZone: "Europe/Berlln" is not an IANA time zone name (e.g. "Europe/Berlin", "UTC")`,
    ]);
    expect(problems([{ ...base, timeZone: undefined }])).toEqual([
      "recurringJobs['nightly']: timeZone is required with a cron schedule: name the zone its wall-clock times are in, e.g. timeZone: 'Europe/Berlin' (or 'UTC')",
    ]);
    expect(problems([{ ...base, schedule: 'rate(1 day)', timeZone: undefined }])).toEqual([]);
  });

  it('a job type the worker does not run, a job of another queue, data that is not JSON, a bad name, a name twice, retry bounds', () => {
    expect(
      problems([
        { ...base, job: 'billing.issue-invoice' },
        { ...base, name: 'other', job: job('mail.send', 'mail') },
        { ...base, name: 'data', data: { ids: new Map([['a', 1]]), n: Number.NaN } },
        { ...base, name: 'bad name' },
        { ...base, name: 'retry', maximumEventAgeSeconds: 30, maximumRetryAttempts: 186 },
        { ...base },
      ]),
    ).toEqual([
      "recurringJobs['nightly']: job 'billing.issue-invoice' is not one of this queue's jobs (billing.issue-invoices, billing.other): the worker would dead-letter every firing; add its definition to jobs, or use one of these types",
      "recurringJobs['other']: job 'mail.send' is defined for queue 'mail', not 'billing': declare the recurring job on the JobQueue named 'mail'",
      expect.stringMatching(/^recurringJobs\['data'\]: data\.ids .*: recurring job data must be plain JSON$/),
      expect.stringMatching(/^recurringJobs\['data'\]: data\.n .*: recurring job data must be plain JSON$/),
      `recurringJobs['bad name']: name "bad name" is not a schedule name: 1–64 letters, digits, '-', '_' or '.', e.g. 'nightly-invoices' [schedule-name]`,
      "recurringJobs['retry']: maximumEventAgeSeconds 30 is outside 60–86400 (whole seconds) [retry-policy]",
      "recurringJobs['retry']: maximumRetryAttempts 186 is outside 0–185 (whole number) [retry-policy]",
      "recurringJobs['nightly']: the name is used twice; schedule names are unique per queue",
    ]);
  });

  it('a cron the cron library cannot evaluate is our error naming the job and the field, not a TypeError', () => {
    expect(problems([{ ...base, schedule: 'cron(0/0 * * * ? *)' }])).toEqual([
      `recurringJobs['nightly']: schedule: cron(0/0 * * * ? *): minutes field: "0/0" has step 0: a step (/n) is a positive whole number, e.g. */15`,
    ]);
    expect(problems([{ ...base, schedule: 'cron(0 */0 * * ? *)' }])).toEqual([
      `recurringJobs['nightly']: schedule: cron(0 */0 * * ? *): hours field: "*/0" has step 0: a step (/n) is a positive whole number, e.g. */15`,
    ]);
    expect(problems([{ ...base, schedule: 'cron(0 5-1 * * ? *)' }])).toEqual([
      `recurringJobs['nightly']: schedule: cron(0 5-1 * * ? *): hours field: "5-1" runs from 5 down to 1: EventBridge cron ranges run from low to high (no wrap-around); to wrap around write 5-23,0-1; for 1 through 5 write 1-5`,
    ]);
  });

  it("a firing above Scheduler's 256 KB Input, and data JSON would change (a Date, undefined)", () => {
    expect(problems([{ ...base, data: { big: 'x'.repeat(270_000) } }])).toEqual([
      expect.stringMatching(
        /^recurringJobs\['nightly'\]: the schedule's Input \(the message of every firing\) is 270\d{3} bytes, above EventBridge Scheduler's Input limit of 262144 bytes \(256 KB; CreateSchedule API, Target\.Input: https:\/\/docs\.aws\.amazon\.com\/scheduler\/latest\/APIReference\/API_Target\.html\); \d+ bytes too many: keep ids in data and let the job load the rest$/,
      ),
    ]);
    expect(problems([{ ...base, data: { big: 'x'.repeat(261_000) } }])).toEqual([]);
    expect(problems([{ ...base, data: { d: new Date(0), u: undefined } }])).toEqual([
      "recurringJobs['nightly']: data.d is a Date, which JSON sends as a string: write the string itself (e.g. '1970-01-01T00:00:00.000Z'): recurring job data must be plain JSON",
      "recurringJobs['nightly']: data.u is undefined: JSON would leave the field out (leave it out, or give it a value): recurring job data must be plain JSON",
    ]);
    class Money {
      constructor(readonly cents: number) {}
    }
    expect(
      problems([{ ...base, data: { price: new Money(5), f: () => 1, n: Number.NaN } } as RecurringJob]),
    ).toEqual([
      expect.stringMatching(/^recurringJobs\['nightly'\]: data\.price an instance of Money has no JSON form/),
      expect.stringMatching(/^recurringJobs\['nightly'\]: data\.f a function has no JSON form/),
      expect.stringMatching(/^recurringJobs\['nightly'\]: data\.n NaN has no JSON form/),
    ]);
  });

  it('an endDate in the past says so (rate or cron), and a time zone in another case names the zone meant', () => {
    const past = new Date('2020-01-01T00:00:00Z');
    expect(problems([{ ...base, schedule: 'rate(1 hour)', endDate: past }])).toEqual([
      "recurringJobs['nightly']: endDate 2020-01-01T00:00:00.000Z is in the past: schedule rate(1 hour) would never fire; move endDate later or leave it out",
    ]);
    expect(problems([{ ...base, endDate: past }])).toEqual([
      "recurringJobs['nightly']: endDate 2020-01-01T00:00:00.000Z is in the past: schedule cron(0 23 * * ? *) would never fire; move endDate later or leave it out",
    ]);
    expect(problems([{ ...base, timeZone: 'europe/berlin' }])).toEqual([
      `recurringJobs['nightly']: timeZone: "europe/berlin" is not spelled as the IANA time zone name (names are case-sensitive): did you mean "Europe/Berlin"?`,
    ]);
    expect(problems([{ ...base, timeZone: 'utc' }])).toEqual([
      `recurringJobs['nightly']: timeZone: "utc" is not spelled as the IANA time zone name (names are case-sensitive): did you mean "UTC"?`,
    ]);
    expect(
      problems([
        { ...base, timeZone: 'America/New_York' },
        { ...base, name: 'b', timeZone: 'Etc/UTC' },
      ]),
    ).toEqual([]);
  });

  it('FIFO: a partition key is required and must be a valid MessageGroupId', () => {
    expect(problems([base, { ...base, name: 'spaced', partitionKey: 'a b' }], { fifo: true })).toEqual([
      "recurringJobs['nightly']: partitionKey is required on a FIFO queue: it is the firing's MessageGroupId (the jobs it runs in order with), e.g. partitionKey: 'invoicing'",
      `recurringJobs['spaced']: partitionKey "a b" is not a valid MessageGroupId: 1–128 printable ASCII characters, no space`,
    ]);
  });

  it('addRecurringJob refuses the same way, and a name already used', () => {
    const stack = unbundledStack('Added');
    const table = new IdempotencyTable(stack, 'Idempotency');
    const q = new JobQueue(stack, 'Q', queueProps('billing', table, { recurringJobs: [base] }));
    expect(() => q.addRecurringJob({ ...base, schedule: 'cron(0 25 * * ? *)' })).toThrow(
      /recurringJobs\['nightly'\]: schedule: cron\(0 25 \* \* \? \*\): hours value 25 is outside 0–23/,
    );
    expect(() => q.addRecurringJob(base)).toThrow(/the name is used twice/);
    // A field it does not know (plain JavaScript, or a cast) is named, not ignored.
    expect(() => q.addRecurringJob({ ...base, name: 'weekly', input: { day: 1 } } as never)).toThrow(
      /recurringJobs\['weekly'\]: input is not a recurring job field \(known: .*\); did you mean data\?/,
    );
  });

  it('grantScheduleJobs refuses a queue without the idempotency table', () => {
    const stack = unbundledStack('NoTable');
    const q = new JobQueue(stack, 'Q', {
      ...queueProps('billing', new IdempotencyTable(stack, 'Idempotency')),
      idempotencyTable: false,
    });
    const role = new iam.Role(stack, 'Producer', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    expect(() => q.grantScheduleJobs(role)).toThrow(
      /grantScheduleJobs: the queue has idempotencyTable: false/,
    );
  });
});

describe('cdk-nag and the template validator', () => {
  let outdir: string;
  beforeAll(() => {
    outdir = tempOutdir('schedules-nag');
  });
  afterAll(() => removeDir(outdir));

  it('report nothing above a warning for a queue with recurring jobs and a producer granted scheduling', () => {
    const app = createJobsApp({ outdir, context: SKIP_BUNDLING });
    const stack = new Stack(app, 'Nag');
    const table = new IdempotencyTable(stack, 'Idempotency');
    const q = new JobQueue(
      stack,
      'Q',
      queueProps('billing', table, { fifo: true, recurringJobs: [NIGHTLY] }),
    );
    q.grantScheduleJobs(
      new iam.Role(stack, 'Producer', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') }),
    );
    app.synth();
    const report = JSON.parse(fs.readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations?: { ruleName: string; severity?: string }[] }[];
    };
    const aboveWarning = report.pluginReports.flatMap((r) =>
      (r.violations ?? [])
        .filter((v) => !['warning', 'info'].includes(String(v.severity).toLowerCase()))
        .map((v) => [r.pluginName, v.ruleName, String(v.severity)]),
    );
    expect(aboveWarning).toEqual([]);
    // The producer's wildcard (the group's schedules) is acknowledged, not absent (the next test
    // shows nag refusing it without the acknowledgement).
    const acknowledged = JSON.stringify(app.node.findAll().flatMap((c) => c.node.metadata));
    expect(acknowledged).toContain(
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/Nag-billing/*]',
    );
    expect(acknowledged).toContain('AwsSolutions-SQS3');
  });

  it('refuse the same app without the acknowledgement of the schedules wildcard (it is the finding nag makes)', () => {
    const dir = tempOutdir('schedules-nag-refused');
    try {
      const app = createJobsApp({ outdir: dir, context: SKIP_BUNDLING });
      const stack = new Stack(app, 'Nag');
      const table = new IdempotencyTable(stack, 'Idempotency');
      const q = new JobQueue(stack, 'Q', queueProps('billing', table));
      const role = new iam.Role(stack, 'Producer', {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      });
      // The same statement as the grant's, without its acknowledgement.
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['scheduler:CreateSchedule'],
          resources: [
            stack.formatArn({
              service: 'scheduler',
              resource: 'schedule',
              resourceName: `${q.scheduleGroupName}/*`,
            }),
          ],
        }),
      );
      expect(() => app.synth()).toThrow(/AwsSolutions-IAM5/);
    } finally {
      removeDir(dir);
    }
  });
});
