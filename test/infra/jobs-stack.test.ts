/**
 * The deployable sample stack, synthesized once through `synthesizeApp` (the same path as
 * bin/app.ts under `cdk synth`): cdk-nag's AwsSolutions checks and the bundled CloudFormation
 * template validator run on that synth and must report nothing above a warning. Small extra
 * apps (no queues, so nothing is bundled) prove that nag and the validator really refuse.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CfnResource } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobsConfigError } from '../../lib/constructs/errors.ts';
import { SAMPLE_JOB_TIMEOUT_SECONDS, SAMPLE_RETRY, sampleJobs } from '../../lib/sample/jobs.ts';
import { nightlyInvoiceJobs } from '../../lib/sample/nightly-invoices.ts';
import { FIFO_LIMIT_WAIT_RECEIVES } from '../../lib/sample/partner-limit.ts';
import { soakBatchJobs } from '../../lib/sample/soak-batches.ts';
import { NIGHTLY_INVOICES, SAMPLE_QUEUES } from '../../lib/sample/topology.ts';
import { buildApp, DEFAULT_STACK_NAME, type SynthesizedApp, synthesizeApp } from '../../lib/stacks/app.ts';
import {
  actionsOn,
  loadBundledHandler,
  logicalId,
  referencedId,
  removeDir,
  roleStatements,
  tempOutdir,
} from './helpers.ts';

/** A sample job as far as its rate limits go. */
type AnyJobLike = { readonly rateLimits?: readonly unknown[] };

type TemplateJson = {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  Outputs: Record<string, { Value: unknown }>;
};

interface ReportViolation {
  readonly ruleName: string;
  readonly severity?: string;
}
/** `validation-report.json` as far as these tests read it. */
interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly violations?: readonly ReportViolation[];
  }[];
}

/** `[plugin, rule, severity]` of every finding in the report. */
function findings(outdir: string): string[][] {
  return readReport(outdir).pluginReports.flatMap((r) =>
    (r.violations ?? []).map((v) => [r.pluginName, v.ruleName, String(v.severity)]),
  );
}

function readReport(outdir: string): ValidationReport {
  return JSON.parse(fs.readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as ValidationReport;
}

describe('JobsStack (sample app)', () => {
  let outdir: string;
  let synthed: SynthesizedApp;
  let json: TemplateJson;
  let template: Template;

  beforeAll(() => {
    outdir = tempOutdir('stack');
    synthed = synthesizeApp({
      outdir,
      context: { alarmEmail: 'oncall@example.com', externalApiUrl: 'https://api.example.com/v1' },
    });
    json = synthed.stackArtifact.template as TemplateJson;
    template = Template.fromJSON(json);
  });
  afterAll(() => removeDir(outdir));

  it('writes the cloud assembly to the given outdir under the stack name SqsJobs', () => {
    expect(synthed.assembly.directory).toBe(outdir);
    expect(synthed.stackArtifact.stackName).toBe(DEFAULT_STACK_NAME);
    expect(fs.existsSync(path.join(outdir, synthed.stackArtifact.templateFile))).toBe(true);
  });

  it('cdk-nag and the template validator report nothing above a warning', () => {
    // Each finding's own severity decides: a report can conclude OK with fatal findings (TOOLCHAIN.md).
    const aboveWarning = findings(outdir).filter(
      ([, , severity]) => !['warning', 'info'].includes(severity!),
    );
    expect(aboveWarning).toEqual([]);
  });

  it('builds the three topology queues: FIFO booking, standard payments and notifications, each with a DLQ of its kind', () => {
    expect([...synthed.stack.jobQueues.keys()]).toEqual(SAMPLE_QUEUES.map((q) => q.name));
    for (const q of SAMPLE_QUEUES) {
      const jq = synthed.stack.jobQueue(q.name);
      const queue = json.Resources[logicalId(jq.queue)]!.Properties;
      const dlq = json.Resources[logicalId(jq.deadLetterQueue)]!.Properties;
      expect(queue.FifoQueue === true).toBe(q.fifo);
      expect(dlq.FifoQueue === true).toBe(q.fifo);
      expect(queue.RedrivePolicy).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(jq.deadLetterQueue), 'Arn'] },
        // FIFO booking: room for invoices waiting on the partner's rate limit (a receive each).
        maxReceiveCount: q.maxAttempts + 5 + (q.fifo ? FIFO_LIMIT_WAIT_RECEIVES : 0),
      });
      expect(queue.MaximumMessageSize).toBe(1_048_576);
    }
    // Plus the booking queue's schedule dead-letter queue (the nightly invoice run).
    template.resourceCountIs('AWS::SQS::Queue', 7);
    template.resourceCountIs('AWS::Lambda::Function', 3);
  });

  it("derives each queue's maxAttempts and jobTimeoutSeconds from its job definitions (written once, in lib/sample/jobs.ts)", () => {
    const types = (name: string) => SAMPLE_QUEUES.find((q) => q.name === name)!.jobs.map((j) => j.type);
    expect(types('booking').sort()).toEqual(
      [
        sampleJobs.reserveInventory.type,
        sampleJobs.confirmReservation.type,
        sampleJobs.issueInvoice.type,
        nightlyInvoiceJobs.issueNightlyInvoices.type,
        nightlyInvoiceJobs.userInvoices.type,
        sampleJobs.expireHold.type,
      ].sort(),
    );
    expect(types('payments')).toEqual([
      sampleJobs.capturePayment.type,
      sampleJobs.expirePaymentHold.type,
      nightlyInvoiceJobs.nightlySummary.type,
    ]);
    expect(types('notifications')).toEqual([
      sampleJobs.sendEmail.type,
      soakBatchJobs.start.type,
      soakBatchJobs.child.type,
      soakBatchJobs.summary.type,
    ]);
    for (const q of SAMPLE_QUEUES) {
      const jq = synthed.stack.jobQueue(q.name);
      expect([jq.maxAttempts, jq.jobTimeoutSeconds]).toEqual([
        SAMPLE_RETRY.maxAttempts,
        SAMPLE_JOB_TIMEOUT_SECONDS,
      ]);
      expect([q.maxAttempts, q.jobTimeoutSeconds]).toEqual([jq.maxAttempts, jq.jobTimeoutSeconds]);
    }
  });

  it('the nightly invoice run: a schedule at 23:00 Europe/Berlin on the booking queue, sending the job its worker runs', () => {
    const booking = synthed.stack.jobQueue('booking');
    const schedules = Object.values(json.Resources).filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    const props = schedules[0]!.Properties as {
      Target: {
        Input: string;
        Arn: unknown;
        RoleArn: unknown;
        SqsParameters: unknown;
        DeadLetterConfig: unknown;
      };
    };
    expect(props).toMatchObject({
      Name: NIGHTLY_INVOICES.name,
      GroupName: booking.scheduleGroupName,
      ScheduleExpression: 'cron(0 23 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
    });
    expect(booking.scheduleGroupName).toBe(`${DEFAULT_STACK_NAME}-booking`);
    expect(referencedId(props.Target.Arn)).toBe(logicalId(booking.queue));
    expect(referencedId(props.Target.RoleArn)).toBe(logicalId(booking.schedulerRole));
    expect(
      referencedId(props.Target.DeadLetterConfig && (props.Target.DeadLetterConfig as { Arn: unknown }).Arn),
    ).toBe(logicalId(booking.scheduleDeadLetterQueue));
    expect(props.Target.SqsParameters).toEqual({ MessageGroupId: 'nightly-invoices' });
    const envelope = JSON.parse(props.Target.Input) as Record<string, unknown>;
    expect(envelope).toMatchObject({
      id: 'nightly-invoices@<aws.scheduler.scheduled-time>',
      type: nightlyInvoiceJobs.issueNightlyInvoices.type,
      data: { graceMinutes: 60 },
    });
    // The booking worker runs that job type, and its schema takes that data.
    expect(SAMPLE_QUEUES.find((q) => q.name === 'booking')!.jobs.map((j) => j.type)).toContain(envelope.type);
    expect(nightlyInvoiceJobs.issueNightlyInvoices.schema['~standard'].validate(envelope.data)).toEqual({
      value: { graceMinutes: 60 },
    });
    // That job starts the nightly batch (lib/sample/nightly-invoices.ts): its user jobs run on the
    // booking worker (each in its user's group), its completion job, the summary, on payments.
    const runs = (name: string) => SAMPLE_QUEUES.find((q) => q.name === name)!.jobs.map((j) => j.type);
    expect(nightlyInvoiceJobs.userInvoices.queue).toBe('booking');
    expect(runs('booking')).toContain(nightlyInvoiceJobs.userInvoices.type);
    expect(runs('payments')).toContain(nightlyInvoiceJobs.nightlySummary.type);
    expect(SAMPLE_QUEUES.find((q) => q.name === 'booking')!.enqueuesTo).toContain('payments');
    // FIFO target: content-based deduplication on the booking queue only.
    expect(json.Resources[logicalId(booking.queue)]!.Properties.ContentBasedDeduplication).toBe(true);
    for (const name of ['payments', 'notifications'])
      expect(synthed.stack.jobQueue(name).scheduleAlarms, name).toBeUndefined();
  });

  it("the schedule's role sends to the booking queue and its schedule DLQ only; its alarms notify the alarm topic", () => {
    const booking = synthed.stack.jobQueue('booking');
    const { statements, managedPolicies } = roleStatements(json, logicalId(booking.schedulerRole));
    expect(managedPolicies).toEqual([]);
    expect(statements.map((s) => [s.actions, s.resources])).toEqual([
      [['sqs:SendMessage'], [logicalId(booking.queue)]],
      [['sqs:SendMessage'], [logicalId(booking.scheduleDeadLetterQueue)]],
    ]);
    const alarms = booking.scheduleAlarms!;
    for (const alarm of [alarms.scheduleDeadLetterQueueDepth, alarms.scheduleDeliveryFailures]) {
      const p = json.Resources[logicalId(alarm)]!.Properties;
      expect(p.AlarmActions).toEqual([{ Ref: logicalId(synthed.stack.alarmTopic.topic) }]);
    }
  });

  it('the booking worker may schedule one-time jobs on its queue (reservation holds): its group only, with the producer environment', () => {
    const booking = synthed.stack.jobQueue('booking');
    const { statements } = roleStatements(json, logicalId(booking.worker.role!));
    const schedulerActions = statements.filter((s) => s.actions.some((a) => a.startsWith('scheduler:')));
    expect(schedulerActions.map((s) => s.actions)).toEqual([
      [
        'scheduler:CreateSchedule',
        'scheduler:DeleteSchedule',
        'scheduler:GetSchedule',
        'scheduler:UpdateSchedule',
      ],
    ]);
    expect(schedulerActions[0]!.resources[0]).toContain(`:schedule/${booking.scheduleGroupName}/*`);
    const env = (
      json.Resources[logicalId(booking.worker)]!.Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect(env.JOBS_SCHEDULE_GROUP_BOOKING).toBe(booking.scheduleGroupName);
    expect(referencedId(env.JOBS_SCHEDULER_ROLE_ARN_BOOKING)).toBe(logicalId(booking.schedulerRole));
    for (const name of ['payments', 'notifications']) {
      const worker = synthed.stack.jobQueue(name).worker;
      expect(JSON.stringify(roleStatements(json, logicalId(worker.role!)).statements), name).not.toContain(
        'scheduler:',
      );
    }
  });

  it('bundles each worker from its topology entry into an ESM file that loads outside the project', () => {
    expect(synthed.workers.map((w) => w.queueName)).toEqual(SAMPLE_QUEUES.map((q) => q.name));
    for (const w of synthed.workers) {
      expect(fs.existsSync(w.entryFile)).toBe(true);
      const loaded = loadBundledHandler(w.assetDirectory, w.entryFile, w.handlerName, undefined, {
        JOBS_QUEUE_NAME: w.queueName,
      });
      expect(loaded.handlerType).toBe('function');
    }
  });

  it('caps every event source: the FIFO booking worker at 5 concurrent batches, payments 5, notifications 10', () => {
    const expected: Record<string, number> = { booking: 5, payments: 5, notifications: 10 };
    for (const q of SAMPLE_QUEUES) {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [logicalId(synthed.stack.jobQueue(q.name).queue), 'Arn'] },
        ScalingConfig: { MaximumConcurrency: expected[q.name] },
      });
    }
  });

  it("writes each worker's source map with paths relative to the project, not to the assembly directory", () => {
    for (const w of synthed.workers) {
      const { sources } = JSON.parse(fs.readFileSync(`${w.entryFile}.map`, 'utf8')) as { sources: string[] };
      expect(sources).toContain('lib/runtime/worker.ts');
      expect(sources.filter((s) => s.startsWith('../') || path.isAbsolute(s))).toEqual([]);
    }
  });

  it('booking and notifications chain to themselves with recursive loop detection chosen (Terminate: their chains are a few hops), so no warning', () => {
    for (const queue of ['booking', 'notifications']) {
      const worker = json.Resources[logicalId(synthed.stack.jobQueue(queue).worker)]!.Properties;
      expect(worker.RecursiveLoop, queue).toBe('Terminate');
    }
    const warned = synthed.stackArtifact.messages.filter(
      (m) => m.level === 'warning' && String(m.entry.data).startsWith('recursiveLoop:'),
    );
    expect(warned).toEqual([]);
  });

  it('traces every worker with X-Ray (TracingConfig Active); the X-Ray write statement is on the worker roles only', () => {
    const functions = Object.entries(json.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(SAMPLE_QUEUES.length);
    for (const [, fn] of functions) expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    const workerRoles = SAMPLE_QUEUES.map((q) =>
      logicalId(synthed.stack.jobQueue(q.name).worker.role!),
    ).sort();
    const withXray = Object.values(json.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties).includes('xray:'))
      .flatMap((r) => (r.Properties.Roles as unknown[]).map((role) => referencedId(role)));
    expect(withXray.sort()).toEqual(workerRoles);
    for (const role of workerRoles) {
      const xray = roleStatements(json, role).statements.filter((s) =>
        s.actions.some((a) => a.startsWith('xray:')),
      );
      expect(xray).toEqual([
        {
          effect: 'Allow',
          actions: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
          resources: ['"*"'],
        },
      ]);
    }
  });

  it('gives every worker APP_TABLE, EXTERNAL_API_URL and the enqueue URLs of its topology targets', () => {
    const appTableRef = { Ref: logicalId(synthed.stack.appTable) };
    for (const q of SAMPLE_QUEUES) {
      const jq = synthed.stack.jobQueue(q.name);
      const env = (
        json.Resources[logicalId(jq.worker)]!.Properties.Environment as { Variables: Record<string, unknown> }
      ).Variables;
      expect(env.APP_TABLE).toEqual(appTableRef);
      expect(env.EXTERNAL_API_URL).toBe('https://api.example.com/v1');
      expect(env.JOBS_IDEMPOTENCY_TABLE).toEqual({ Ref: logicalId(synthed.stack.idempotencyTable.table) });
      const enqueueVars = Object.keys(env)
        .filter((k) => k.startsWith('JOBS_QUEUE_URL_'))
        .sort();
      expect(enqueueVars).toEqual(q.enqueuesTo.map((t) => `JOBS_QUEUE_URL_${t.toUpperCase()}`).sort());
      for (const t of q.enqueuesTo) {
        expect(env[`JOBS_QUEUE_URL_${t.toUpperCase()}`]).toEqual({
          Ref: logicalId(synthed.stack.jobQueue(t).queue),
        });
      }
    }
  });

  it('lets a worker send only to its DLQ, its topology targets and (standard, with rate limits) itself, read/write the domain table, and no DeleteItem on idempotency records', () => {
    for (const q of SAMPLE_QUEUES) {
      const jq = synthed.stack.jobQueue(q.name);
      const { statements } = roleStatements(json, logicalId(jq.worker.role!));
      // A standard queue whose jobs take a rate limit re-sends a waiting job to itself (Flow control).
      const resendsWaits = !q.fifo && q.jobs.some((job) => (job as AnyJobLike).rateLimits?.length);
      for (const other of SAMPLE_QUEUES) {
        const target = synthed.stack.jobQueue(other.name);
        const canSend = actionsOn(statements, logicalId(target.queue)).includes('sqs:SendMessage');
        expect(canSend, `${q.name} → ${other.name}`).toBe(
          (q.enqueuesTo as readonly string[]).includes(other.name) || (other.name === q.name && resendsWaits),
        );
        if (other.name !== q.name) {
          expect(actionsOn(statements, logicalId(target.deadLetterQueue))).toEqual([]);
          expect(
            actionsOn(statements, logicalId(target.queue)).filter((a) => a !== 'sqs:SendMessage'),
          ).toEqual([]);
        }
      }
      // No sample job parks its group, so no worker may delete idempotency records (the unpark).
      expect(jq.mayParkGroups, q.name).toBe(false);
      expect(actionsOn(statements, logicalId(synthed.stack.idempotencyTable.table))).toEqual([
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ]);
      const domain = actionsOn(statements, logicalId(synthed.stack.appTable));
      expect(domain).toEqual(
        expect.arrayContaining([
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:Query',
        ]),
      );
    }
  });

  it('has the idempotency table (pk, TTL expiresAt, on-demand, PITR, retained) and the domain table (pk + sk, on-demand, PITR)', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      },
      DeletionPolicy: 'Retain',
    });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('subscribes the alarmEmail context to the encrypted alarm topic', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: logicalId(synthed.stack.alarmTopic.topic) },
    });
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
  });

  it("has eight alarms per queue (24) and the booking schedules' two, every one notifying the alarm topic", () => {
    const topicRef = { Ref: logicalId(synthed.stack.alarmTopic.topic) };
    template.resourceCountIs('AWS::CloudWatch::Alarm', 26);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [topicRef],
      OKActions: [topicRef],
    });
    for (const q of SAMPLE_QUEUES) {
      for (const metric of ['JobDeadLettered', 'BatchFailed', 'BatchOverdue']) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          Namespace: 'SqsJobs',
          MetricName: metric,
          Dimensions: [{ Name: 'Queue', Value: q.name }],
        });
      }
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Metrics: Match.arrayWith([Match.objectLike({ Expression: 'DIFF(visible + inFlight)' })]),
        AlarmDescription: Match.stringLikeRegexp(`^queue ${q.name}: `),
      });
    }
  });

  it('has a dashboard with queue depth, in flight, oldest age, DLQ depth, job counts and duration for each queue', () => {
    const dashboards = template.findResources('AWS::CloudWatch::Dashboard');
    expect(Object.keys(dashboards)).toHaveLength(1);
    const body = JSON.stringify(Object.values(dashboards)[0]!.Properties.DashboardBody);
    for (const metric of [
      'ApproximateNumberOfMessagesVisible',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateAgeOfOldestMessage',
      'JobCompleted',
      'JobRetried',
      'JobDeadLettered',
      'BatchFailed',
      'JobDuration',
    ]) {
      expect(body).toContain(metric);
    }
    for (const q of SAMPLE_QUEUES) {
      expect(body).toContain(`${q.name}: dead-letter queue depth`);
      expect(body).toContain(`${q.name}: job duration (ms)`);
      // The worker metrics are filtered to this queue.
      expect(body).toMatch(new RegExp(`\\\\"JobCompleted\\\\",\\\\"Queue\\\\",\\\\"${q.name}\\\\"`));
    }
  });

  it('outputs queue and DLQ URLs and ARNs, table names, the topic ARN and the dashboard name', () => {
    const expected = [
      ...SAMPLE_QUEUES.flatMap((q) => {
        const id = q.name[0]!.toUpperCase() + q.name.slice(1);
        return [`${id}QueueUrl`, `${id}QueueArn`, `${id}DlqUrl`, `${id}DlqArn`];
      }),
      'IdempotencyTableName',
      'AppTableName',
      'AlarmTopicArn',
      'DashboardName',
    ];
    expect(Object.keys(json.Outputs).sort()).toEqual(expected.sort());
    const booking = synthed.stack.jobQueue('booking');
    expect(json.Outputs.BookingQueueUrl!.Value).toEqual({ Ref: logicalId(booking.queue) });
    expect(json.Outputs.BookingDlqUrl!.Value).toEqual({ Ref: logicalId(booking.deadLetterQueue) });
    expect(json.Outputs.IdempotencyTableName!.Value).toEqual({
      Ref: logicalId(synthed.stack.idempotencyTable.table),
    });
    expect(json.Outputs.AlarmTopicArn!.Value).toEqual({ Ref: logicalId(synthed.stack.alarmTopic.topic) });
  });
});

describe('JobsStack checks (no queues, nothing bundled)', () => {
  const dirs: string[] = [];
  const outdir = () => {
    const d = tempOutdir('stack-checks');
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) removeDir(d);
  });

  it('cdk-nag runs on every synth and refuses an unencrypted queue without TLS', () => {
    const dir = outdir();
    const { app, stack } = buildApp({
      outdir: dir,
      stackProps: { queues: [], externalApiUrl: 'https://x.example' },
    });
    new sqs.Queue(stack, 'Plain', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    expect(() => app.synth()).toThrow();
    expect(findings(dir)).toEqual(
      expect.arrayContaining([
        ['AwsSolutions', 'AwsSolutions-SQS2', 'error'],
        ['AwsSolutions', 'AwsSolutions-SQS4', 'error'],
      ]),
    );
  });

  it('the template validator runs on every synth and refuses an invalid template', () => {
    const dir = outdir();
    const { app, stack } = buildApp({
      outdir: dir,
      nag: false,
      stackProps: { queues: [], externalApiUrl: 'https://x.example' },
    });
    new CfnResource(stack, 'Broken', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } });
    expect(() => app.synth()).toThrow();
    expect(findings(dir)).toEqual([['CloudFormation Validate', 'F3012', 'error']]);
  });

  it('warns when externalApiUrl is missing, and leaves EXTERNAL_API_URL unset', () => {
    const { app, stack } = buildApp({ outdir: outdir(), stackProps: { queues: [] } });
    const messages = app.synth().getStackArtifact(stack.artifactId).messages;
    expect(
      messages.some(
        (m) => m.level === 'warning' && String(m.entry.data).includes('externalApiUrl is not set'),
      ),
    ).toBe(true);
  });

  it('refuses an externalApiUrl that is not http(s) and an enqueue target that is not a queue of the stack', () => {
    let error: unknown;
    try {
      buildApp({
        outdir: outdir(),
        stackProps: {
          externalApiUrl: 'ftp://files.example',
          queues: [
            {
              name: 'a',
              fifo: false,
              entry: 'functions/payments.ts',
              jobs: [{ type: 'a.job', queue: 'a', retry: { maxAttempts: 3 }, timeoutSeconds: 5 }],
              enqueuesTo: ['b'],
            },
          ],
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(JobsConfigError);
    expect((error as JobsConfigError).problems).toEqual([
      "externalApiUrl: 'ftp://files.example' is not an http(s) URL",
      "queues: 'a' enqueues to 'b', which is not a queue of this stack",
    ]);
  });

  it('refuses a queue added to the topology without jobs, in one line', () => {
    expect(() =>
      buildApp({
        outdir: outdir(),
        stackProps: {
          externalApiUrl: 'https://x.example',
          queues: [{ name: 'reports', fifo: false, entry: 'functions/reports.ts', jobs: [], enqueuesTo: [] }],
        },
      }),
    ).toThrow(
      new JobsConfigError('JobsStack', 'SqsJobs', [
        "queues: 'reports' has no jobs: define its jobs with queue: 'reports' (lib/sample/jobs.ts for the sample)",
      ]),
    );
  });
});
