/**
 * Least privilege as the synthesized template shows it: each worker's role holds the grants its
 * runtime uses and nothing else (docs/deploy.md, "Worker permissions"), the alarm key lets
 * CloudWatch act only for this account's alarms, and the idempotency table is protected from
 * deletion unless it is meant to go with its stack; a queue's scheduler role sends to that queue
 * (and its schedule DLQ) only, and a producer granted scheduling acts on its queue's schedule
 * group only. Bundling skipped (the grants do not depend on the code), so nothing here bundles a
 * worker.
 */
import * as schedulerClient from '@aws-sdk/client-scheduler';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AlarmTopic } from '../../lib/constructs/alarm-topic.ts';
import { JobsConfigError } from '../../lib/constructs/errors.ts';
import { IdempotencyTable } from '../../lib/constructs/idempotency-table.ts';
import { SCHEDULE_JOB_ACTIONS } from '../../lib/constructs/job-queue/scheduling.ts';
import { JobQueue, type JobQueueProps } from '../../lib/constructs/job-queue.ts';
import { actionsOn, logicalId, PROJECT_ROOT, roleStatements, sourceTexts } from './helpers.ts';

type TemplateJson = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

const job = (type: string, queue: string, onDeadLetter?: 'park' | 'continue') => ({
  type,
  queue,
  retry: { maxAttempts: 3 },
  timeoutSeconds: 5,
  ...(onDeadLetter === undefined ? {} : { onDeadLetter }),
});

const ITEM_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];
const WITH_UNPARK = [...ITEM_ACTIONS, 'dynamodb:DeleteItem'].sort();

function unbundledStack(id: string): Stack {
  return new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), id);
}

describe('worker grants follow what the runtime does', () => {
  let json: TemplateJson;
  let template: Template;
  let table: IdempotencyTable;
  let target: sqs.Queue;
  let targetKey: kms.Key;
  let givenDlq: sqs.Queue;
  let topic: AlarmTopic;
  const queues: Record<string, JobQueue> = {};

  beforeAll(() => {
    const stack = unbundledStack('LeastPrivilege');
    table = new IdempotencyTable(stack, 'Idempotency');
    topic = new AlarmTopic(stack, 'Alarms');
    targetKey = new kms.Key(stack, 'TargetKey', { enableKeyRotation: true });
    target = new sqs.Queue(stack, 'Target', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: targetKey,
      enforceSSL: true,
    });
    givenDlq = new sqs.Queue(stack, 'GivenDlq', { fifo: true, enforceSSL: true });
    const base = (name: string): JobQueueProps => ({
      name,
      entry: 'test/fixtures/worker-handler.ts',
      projectRoot: PROJECT_ROOT,
      idempotencyTable: table.table,
      alarmTopic: false,
    });
    const add = (id: string, props: JobQueueProps) => {
      queues[props.name] = new JobQueue(stack, id, props);
    };
    // FIFO, one job parks: the worker unparks with DeleteItem.
    add('JobParks', {
      ...base('job-parks'),
      fifo: true,
      jobs: [job('a', 'job-parks', 'park'), job('b', 'job-parks')],
    });
    // FIFO, the entry's default parks, declared on the queue.
    add('DefaultParks', {
      ...base('default-parks'),
      fifo: true,
      onDeadLetter: 'park',
      jobs: [job('c', 'default-parks')],
    });
    // FIFO, jobs given and none parks: nothing to unpark.
    add('NoPark', {
      ...base('no-park'),
      fifo: true,
      onDeadLetter: 'continue',
      jobs: [job('d', 'no-park'), job('e', 'no-park', 'continue')],
      deadLetterQueue: givenDlq,
      enqueueTargets: { target },
    });
    // FIFO without jobs: what runs is unknown at synth, so it may park.
    add('Unknown', { ...base('unknown'), fifo: true, maxAttempts: 3, jobTimeoutSeconds: 5 });
    // Standard: no groups to park, whatever the jobs say.
    add('Standard', { ...base('standard'), jobs: [job('f', 'standard', 'park')], onDeadLetter: 'park' });
    // Standard, a job with a per-key concurrency limit: it waits by re-sending to its own queue.
    add('Limited', {
      ...base('limited'),
      jobs: [{ ...job('g', 'limited'), concurrency: { key: () => 't', limit: 2 } }],
    });
    // Standard, a job taking a rate limit: the same.
    add('RateLimited', {
      ...base('rate-limited'),
      jobs: [{ ...job('h', 'rate-limited'), rateLimits: [{}] }],
    });
    // FIFO with a limit: waits with a visibility delay, sends nothing to itself.
    add('FifoLimited', {
      ...base('fifo-limited'),
      fifo: true,
      onDeadLetter: 'continue',
      jobs: [{ ...job('i', 'fifo-limited'), concurrency: { key: () => 't', limit: 1 } }],
    });
    queues.standard!.addEnqueueTarget('standard', queues.standard!.queue);
    template = Template.fromStack(stack);
    json = template.toJSON() as TemplateJson;
  });

  const statementsOf = (q: JobQueue) => roleStatements(json, logicalId(q.worker.role!)).statements;

  it('DeleteItem on the idempotency table only where a FIFO group can be parked', () => {
    const onTable = (name: string) => actionsOn(statementsOf(queues[name]!), logicalId(table.table));
    expect(onTable('job-parks')).toEqual(WITH_UNPARK);
    expect(onTable('default-parks')).toEqual(WITH_UNPARK);
    expect(onTable('unknown')).toEqual(WITH_UNPARK);
    expect(onTable('no-park')).toEqual(ITEM_ACTIONS);
    expect(onTable('standard')).toEqual(ITEM_ACTIONS);
    // Concurrency slots and rate buckets are items of the same table: no action beyond these.
    expect(onTable('limited')).toEqual(ITEM_ACTIONS);
    expect(onTable('rate-limited')).toEqual(ITEM_ACTIONS);
    expect(onTable('fifo-limited')).toEqual(ITEM_ACTIONS);
    expect(Object.values(queues).map((q) => [q.name, q.mayParkGroups])).toEqual([
      ['job-parks', true],
      ['default-parks', true],
      ['no-park', false],
      ['unknown', true],
      ['standard', false],
      ['limited', false],
      ['rate-limited', false],
      ['fifo-limited', false],
    ]);
    // The worker is told, and refuses to park where its role could not clear a park.
    const parkingEnv = (q: JobQueue) => {
      const props = json.Resources[logicalId(q.worker)]?.Properties as
        | { Environment: { Variables: Record<string, string> } }
        | undefined;
      return props?.Environment.Variables.JOBS_GROUP_PARKING;
    };
    expect(Object.values(queues).map((q) => [q.name, parkingEnv(q)])).toEqual([
      ['job-parks', 'true'],
      ['default-parks', 'true'],
      ['no-park', 'false'],
      ['unknown', 'true'],
      ['standard', 'false'],
      ['limited', 'false'],
      ['rate-limited', 'false'],
      ['fifo-limited', 'false'],
    ]);
  });

  it('own queue: what the poller and the worker do (no GetQueueUrl); DLQ and targets: SendMessage only', () => {
    for (const q of Object.values(queues)) {
      const statements = statementsOf(q);
      const own = actionsOn(statements, logicalId(q.queue));
      expect(own, q.name).toEqual(
        [
          'sqs:ChangeMessageVisibility',
          'sqs:DeleteMessage',
          'sqs:GetQueueAttributes',
          'sqs:ReceiveMessage',
          // It enqueues to itself; or a job over a limit waits as a delayed copy (standard only).
          ...(['standard', 'limited', 'rate-limited'].includes(q.name) ? ['sqs:SendMessage'] : []),
        ].sort(),
      );
      expect(actionsOn(statements, logicalId(q.deadLetterQueue)), q.name).toEqual(['sqs:SendMessage']);
    }
    const noPark = statementsOf(queues['no-park']!);
    expect(actionsOn(noPark, logicalId(target))).toEqual(['sqs:SendMessage']);
    expect(queues['no-park']!.deadLetterQueue).toBe(givenDlq);
  });

  it('an SSE-KMS enqueue target: GenerateDataKey and Decrypt on its key, nothing more, for its sender alone', () => {
    expect(actionsOn(statementsOf(queues['no-park']!), logicalId(targetKey))).toEqual([
      'kms:Decrypt',
      'kms:GenerateDataKey',
    ]);
    for (const q of Object.values(queues).filter((q) => q.name !== 'no-park'))
      expect(actionsOn(statementsOf(q), logicalId(targetKey)), q.name).toEqual([]);
  });

  it('keeps the event source mapping SqsEventSource made (same logical id, so no replacement on deploy), with ReportBatchItemFailures', () => {
    const q = queues['no-park']!;
    const mappingId = logicalId(q.eventSource);
    expect(mappingId).toMatch(/^NoParkWorkerSqsEventSourceLeastPrivilegeNoParkQueue[0-9A-F]{8}[0-9A-F]{8}$/);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(q.queue), 'Arn'] },
      FunctionName: { Ref: logicalId(q.worker) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
    });
    // The function (and so its mapping) waits for the role's policy: Lambda checks the role when the mapping is created.
    const fn = json.Resources[logicalId(q.worker)] as unknown as { DependsOn: string[] };
    const policyId = Object.entries(json.Resources).find(
      ([, r]) =>
        r.Type === 'AWS::IAM::Policy' &&
        (r.Properties.Roles as unknown[]).some((x) =>
          JSON.stringify(x).includes(logicalId(q.worker.role!)),
        ) &&
        JSON.stringify(r.Properties).includes('sqs:ReceiveMessage'),
    )?.[0];
    expect(fn.DependsOn).toContain(policyId);
  });

  it('the alarm topic key: CloudWatch may use it only for alarms of this account and region (aws:SourceAccount, aws:SourceArn)', () => {
    const policy = json.Resources[logicalId(topic.key)]!.Properties.KeyPolicy as {
      Statement: Array<Record<string, unknown>>;
    };
    const forCloudWatch = policy.Statement.filter(
      (s) => JSON.stringify(s.Principal) === JSON.stringify({ Service: 'cloudwatch.amazonaws.com' }),
    );
    expect(forCloudWatch).toEqual([
      {
        Sid: 'AllowCloudWatchAlarmsToUseTheKey',
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Resource: '*',
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnLike: {
            'aws:SourceArn': {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':cloudwatch:',
                  { Ref: 'AWS::Region' },
                  ':',
                  { Ref: 'AWS::AccountId' },
                  ':alarm:*',
                ],
              ],
            },
          },
        },
      },
    ]);
  });
});

describe('scheduling grants: the scheduler sends to its queue only, a producer schedules in its group only', () => {
  let json: TemplateJson;
  const queues: Record<string, JobQueue> = {};
  let producer: iam.Role;
  let table: IdempotencyTable;

  beforeAll(() => {
    const stack = unbundledStack('Scheduling');
    table = new IdempotencyTable(stack, 'Idempotency');
    const base = (name: string, fifo: boolean): JobQueueProps => ({
      name,
      fifo,
      entry: 'test/fixtures/worker-handler.ts',
      projectRoot: PROJECT_ROOT,
      idempotencyTable: table.table,
      alarmTopic: false,
      jobs: [job(`${name}.run`, name)],
    });
    queues.timed = new JobQueue(stack, 'Timed', {
      ...base('timed', true),
      recurringJobs: [
        {
          name: 'nightly',
          job: 'timed.run',
          schedule: 'cron(0 23 * * ? *)',
          timeZone: 'UTC',
          partitionKey: 'p',
        },
      ],
    });
    queues.other = new JobQueue(stack, 'Other', base('other', false));
    producer = new iam.Role(stack, 'Producer', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    queues.timed.grantScheduleJobs(producer);
    json = Template.fromStack(stack).toJSON() as TemplateJson;
  });

  /** Every action of every statement of the role, with the statement's resources and conditions. */
  const rawStatements = (roleId: string) =>
    Object.values(json.Resources)
      .filter(
        (r) =>
          r.Type === 'AWS::IAM::Policy' &&
          (r.Properties.Roles as unknown[]).some(
            (x) => JSON.stringify(x) === JSON.stringify({ Ref: roleId }),
          ),
      )
      .flatMap(
        (r) => (r.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement,
      );

  it('the scheduler role: SendMessage on its queue and its schedule DLQ, nothing else, no managed policy', () => {
    const q = queues.timed!;
    const { statements, managedPolicies } = roleStatements(json, logicalId(q.schedulerRole));
    expect(managedPolicies).toEqual([]);
    expect(statements.flatMap((s) => s.actions)).toEqual(['sqs:SendMessage', 'sqs:SendMessage']);
    expect(statements.flatMap((s) => s.resources).sort()).toEqual(
      [logicalId(q.queue), logicalId(q.scheduleDeadLetterQueue)].sort(),
    );
    expect(actionsOn(statements, logicalId(queues.other!.queue))).toEqual([]);
  });

  it("the producer: the four schedule actions on its group's schedules, PassRole to Scheduler only, schedule# items, send; nothing on another queue", () => {
    const raw = rawStatements(logicalId(producer));
    expect(raw.map((s) => s.Action)).toEqual([
      [
        'scheduler:CreateSchedule',
        'scheduler:DeleteSchedule',
        'scheduler:GetSchedule',
        'scheduler:UpdateSchedule',
      ],
      'iam:PassRole',
      ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      'sqs:SendMessage',
    ]);
    expect(JSON.stringify(raw[0]!.Resource)).toContain(':schedule/Scheduling-timed/*');
    expect(raw[0]!.Condition).toBeUndefined();
    expect(raw[1]!.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    expect(raw[1]!.Resource).toEqual({ 'Fn::GetAtt': [logicalId(queues.timed!.schedulerRole), 'Arn'] });
    expect(raw[2]!.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['schedule#*'] },
    });
    expect(raw[2]!.Resource).toEqual({ 'Fn::GetAtt': [logicalId(table.table), 'Arn'] });
    const { statements } = roleStatements(json, logicalId(producer));
    expect(actionsOn(statements, logicalId(queues.timed!.queue))).toEqual(['sqs:SendMessage']);
    expect(actionsOn(statements, logicalId(queues.other!.queue))).toEqual([]);
  });

  it('the workers get no scheduler or PassRole action; a queue that does not use time has no scheduler role', () => {
    for (const q of Object.values(queues)) {
      const actions = rawStatements(logicalId(q.worker.role!)).flatMap((s) => [s.Action].flat() as string[]);
      expect(
        actions.filter((a) => /^(scheduler|iam):/.test(a)),
        q.name,
      ).toEqual([]);
    }
    expect(queues.other!.scheduleAlarms).toBeUndefined();
    const schedulerRoles = Object.values(json.Resources).filter(
      (r) => r.Type === 'AWS::IAM::Role' && JSON.stringify(r.Properties).includes('scheduler.amazonaws.com'),
    );
    expect(schedulerRoles).toHaveLength(1);
  });

  it('every Scheduler command lib/client and lib/runtime send is granted to the producer', () => {
    const sent = new Set<string>();
    for (const dir of ['lib/runtime', 'lib/client'])
      for (const text of sourceTexts(dir).values())
        for (const m of text.matchAll(/new\s+(?:\w+\.)?(\w+)Command\s*\(/g))
          if (`${m[1]}Command` in schedulerClient) sent.add(`scheduler:${m[1]}`);
    const granted: readonly string[] = SCHEDULE_JOB_ACTIONS;
    expect([...sent].filter((a) => !granted.includes(a))).toEqual([]);
  });
});

describe('the queue-wide onDeadLetter prop', () => {
  it("refuses a value other than 'continue' or 'park', and 'park' without the idempotency table", () => {
    const refused = (props: Partial<JobQueueProps>) => {
      try {
        new JobQueue(unbundledStack('Refused'), 'Q', {
          name: 'q',
          fifo: true,
          entry: 'test/fixtures/worker-handler.ts',
          projectRoot: PROJECT_ROOT,
          maxAttempts: 3,
          jobTimeoutSeconds: 5,
          idempotencyTable: false,
          alarmTopic: false,
          ...props,
        });
      } catch (e) {
        if (e instanceof JobsConfigError) return e.problems;
        throw e;
      }
      return [];
    };
    expect(refused({ onDeadLetter: 'parked' as 'park' })).toEqual([
      `onDeadLetter: "parked" is neither 'continue' nor 'park'`,
    ]);
    expect(refused({ onDeadLetter: 'park' })).toEqual([
      "idempotencyTable: false, but onDeadLetter 'park' (the worker's default) park their group on a dead letter (onDeadLetter: 'park'), which is kept in the idempotency table: pass the table, or use onDeadLetter: 'continue'",
    ]);
    expect(refused({ onDeadLetter: 'continue' })).toEqual([]);
  });
});

describe('idempotency table deletion protection', () => {
  it('is on by default, off when asked or when the table is destroyed with its stack', () => {
    const stack = unbundledStack('Protection');
    const flags = {
      byDefault: new IdempotencyTable(stack, 'ByDefault'),
      retained: new IdempotencyTable(stack, 'Retained', { removalPolicy: RemovalPolicy.RETAIN }),
      off: new IdempotencyTable(stack, 'Off', { deletionProtection: false }),
      destroyed: new IdempotencyTable(stack, 'Destroyed', { removalPolicy: RemovalPolicy.DESTROY }),
    };
    const resources = (Template.fromStack(stack).toJSON() as TemplateJson).Resources;
    const flag = (t: IdempotencyTable) => resources[logicalId(t.table)]!.Properties.DeletionProtectionEnabled;
    expect(Object.fromEntries(Object.entries(flags).map(([k, t]) => [k, flag(t)]))).toEqual({
      byDefault: true,
      retained: true,
      off: false,
      destroyed: false,
    });
  });

  it('refuses protection asked for on a table destroyed with its stack (cdk destroy would fail on it)', () => {
    const build = () =>
      new IdempotencyTable(unbundledStack('Refused'), 'Idempotency', {
        removalPolicy: RemovalPolicy.DESTROY,
        deletionProtection: true,
      });
    expect(build).toThrow(JobsConfigError);
    expect(build).toThrow(
      /deletionProtection: true with removalPolicy: DESTROY: deleting the stack would fail on this table/,
    );
  });
});
