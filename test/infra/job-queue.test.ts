/**
 * JobQueue, IdempotencyTable and AlarmTopic as a user of the constructs sees them in the
 * synthesized template. Two configurations, each synthesized once (with cdk-nag's AwsSolutions
 * checks, so the constructs alone are nag-clean): a FIFO queue with everything wired, and
 * standard / high-throughput FIFO queues with non-default settings. The worker is the fixture
 * handler (test/fixtures/worker-handler.ts), bundled like a real worker.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { App, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AlarmTopic } from '../../lib/constructs/alarm-topic.ts';
import { IdempotencyTable } from '../../lib/constructs/idempotency-table.ts';
import { checkJobQueue } from '../../lib/constructs/job-queue/rules/index.ts';
import { JobQueue } from '../../lib/constructs/job-queue.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { SqsSender } from '../../lib/runtime/sqs-port.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { findWorkerAssets } from '../../lib/stacks/app.ts';
import {
  actionsOn,
  loadBundledHandler,
  logicalId,
  removeDir,
  roleStatements,
  tempOutdir,
} from './helpers.ts';
import { VALID as VALID_RULE_PROPS } from './job-queue-rules/helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE_ENTRY = 'test/fixtures/worker-handler.ts';

type TemplateJson = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

function synth(build: (stack: Stack) => void, outdir: string) {
  const app = new App({ outdir, postCliContext: { '@aws-cdk/core:validateAgainstDefaultRules': true } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const stack = new Stack(app, 'ConstructTest');
  build(stack);
  const assembly = app.synth();
  const artifact = assembly.getStackArtifact(stack.artifactId);
  return {
    stack,
    assembly,
    artifact,
    json: artifact.template as TemplateJson,
    template: Template.fromJSON(artifact.template),
  };
}

describe('JobQueue: FIFO queue with table, topic and enqueue targets', () => {
  let outdir: string;
  let s: ReturnType<typeof synth>;
  let booking: JobQueue;
  let table: IdempotencyTable;
  let topic: AlarmTopic;
  let other: sqs.Queue;

  beforeAll(() => {
    outdir = tempOutdir('construct-fifo');
    s = synth((stack) => {
      table = new IdempotencyTable(stack, 'Idempotency');
      topic = new AlarmTopic(stack, 'Alarms', { emails: ['ops@example.com'] });
      other = new sqs.Queue(stack, 'Other', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: {
          maxReceiveCount: 5,
          queue: new sqs.Queue(stack, 'OtherDlq', {
            encryption: sqs.QueueEncryption.SQS_MANAGED,
            enforceSSL: true,
          }),
        },
      });
      booking = new JobQueue(stack, 'Booking', {
        name: 'booking',
        fifo: true,
        entry: FIXTURE_ENTRY,
        projectRoot: PROJECT_ROOT,
        maxAttempts: 5,
        jobTimeoutSeconds: 10,
        idempotencyTable: table.table,
        alarmTopic: topic.topic,
        enqueueTargets: { 'mail-out': other },
        environment: { APP_TABLE: 'domain' },
      });
      booking.addEnqueueTarget('booking', booking.queue);
    }, outdir);
  });
  afterAll(() => removeDir(outdir));

  it('creates a FIFO queue and a FIFO DLQ with their own .fifo names', () => {
    const q = s.json.Resources[logicalId(booking.queue)]!.Properties;
    const dlq = s.json.Resources[logicalId(booking.deadLetterQueue)]!.Properties;
    expect(q.FifoQueue).toBe(true);
    expect(dlq.FifoQueue).toBe(true);
    for (const name of [q.QueueName, dlq.QueueName] as string[]) {
      expect(name).toMatch(/^[A-Za-z0-9_-]+\.fifo$/);
      expect(name.length).toBeLessThanOrEqual(80);
    }
    expect(q.QueueName).not.toBe(dlq.QueueName);
  });

  it('derives maxReceiveCount from maxAttempts (5 + 5 = 10) and points the redrive policy at the DLQ', () => {
    expect(booking.maxReceiveCount).toBe(10);
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: Match.stringLikeRegexp('queue\\.fifo$'),
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(booking.deadLetterQueue), 'Arn'] },
        maxReceiveCount: 10,
      },
    });
  });

  it('sets MaximumMessageSize to 1 MiB on both queues, encrypts them (SSE-SQS) and keeps DLQ messages 14 days', () => {
    const q = s.json.Resources[logicalId(booking.queue)]!.Properties;
    const dlq = s.json.Resources[logicalId(booking.deadLetterQueue)]!.Properties;
    expect(q.MaximumMessageSize).toBe(1_048_576);
    expect(dlq.MaximumMessageSize).toBe(1_048_576);
    expect(q.SqsManagedSseEnabled).toBe(true);
    expect(dlq.SqsManagedSseEnabled).toBe(true);
    expect(dlq.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    expect(q.MessageRetentionPeriod).toBe(4 * 24 * 3600);
  });

  it('denies requests without TLS on both queues', () => {
    for (const queue of [booking.queue, booking.deadLetterQueue]) {
      s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: logicalId(queue) }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it('sets the visibility timeout to 6 × the default function timeout (30 s = max(30, 3 × 10)) = 180 s', () => {
    expect(booking.functionTimeout.toSeconds()).toBe(30);
    expect(s.json.Resources[logicalId(booking.queue)]!.Properties.VisibilityTimeout).toBe(180);
  });

  it('runs the worker on nodejs24.x, ARM64, with a JSON log group of its own', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 30,
      MemorySize: 512,
      LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: logicalId(booking.logGroup) } },
    });
    s.template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  it('gives the worker the environment of docs/contracts.md, and refuses an extra naming any variable of it', () => {
    const fn = s.json.Resources[logicalId(booking.worker)]!.Properties;
    const env = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
    const code = fn.Code as { S3Key: string };
    expect(env).toEqual({
      JOBS_QUEUE_NAME: 'booking',
      JOBS_QUEUE_URL: { Ref: logicalId(booking.queue) },
      JOBS_DLQ_URL: { Ref: logicalId(booking.deadLetterQueue) },
      JOBS_MAX_ATTEMPTS: '5',
      JOBS_JOB_TIMEOUT_SECONDS: '10',
      JOBS_GROUP_PARKING: 'true',
      JOBS_IDEMPOTENCY_TABLE: { Ref: logicalId(table.table) },
      JOBS_QUEUE_URL_MAIL_OUT: { Ref: logicalId(other) },
      JOBS_QUEUE_URL_BOOKING: { Ref: logicalId(booking.queue) },
      JOBS_HANDLER_VERSION: code.S3Key.replace(/\.zip$/, ''),
      POWERTOOLS_SERVICE_NAME: 'sqs-jobs-booking',
      POWERTOOLS_METRICS_NAMESPACE: 'SqsJobs',
      APP_TABLE: 'domain',
    });
    // Every variable the construct set is reserved: giving it in `environment` is refused at synth.
    for (const name of Object.keys(env).filter((n) => n !== 'APP_TABLE')) {
      const { errors } = checkJobQueue({ ...VALID_RULE_PROPS, environment: { [name]: 'mine' } });
      expect(errors).toEqual([
        expect.stringMatching(
          new RegExp(`^environment: ${name} is set by the construct and cannot be overridden; `),
        ),
      ]);
    }
    expect(booking.enqueueTargets).toEqual(['mail-out', 'booking']);
  });

  it('bundles a minified ESM file with a source map that loads and runs outside the project', () => {
    const [worker] = findWorkerAssets(s.assembly, s.artifact);
    expect(worker?.queueName).toBe('booking');
    const code = fs.readFileSync(worker!.entryFile, 'utf8');
    expect(worker!.entryFile.endsWith('index.mjs')).toBe(true);
    expect(fs.existsSync(`${worker!.entryFile}.map`)).toBe(true);
    expect(code).toContain('createRequire');
    expect(code.split('\n').length).toBeLessThan(10); // minified
    const loaded = loadBundledHandler(worker!.assetDirectory, worker!.entryFile, worker!.handlerName, {
      Records: [],
    });
    expect(loaded).toEqual({ handlerType: 'function', result: { batchItemFailures: [] } });
  });

  it('consumes with ReportBatchItemFailures, batch size 10 and no batching window (FIFO)', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(booking.queue), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: Match.absent(),
      ScalingConfig: Match.absent(),
    });
  });

  it('grants least privilege: own logs, consume its queue, send to its DLQ and targets, item access on the table, X-Ray writes', () => {
    const roleId = logicalId(booking.worker.role!);
    const { statements, managedPolicies } = roleStatements(s.json, roleId);
    expect(managedPolicies).toEqual([]);
    expect(statements.every((st) => st.effect === 'Allow')).toBe(true);
    // The only `*`: the two X-Ray write actions, which take no resource ARN (tracing is on by default).
    expect(statements.filter((st) => st.resources.includes('"*"'))).toEqual([
      { effect: 'Allow', actions: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], resources: ['"*"'] },
    ]);
    const touched = new Set(statements.flatMap((st) => st.resources).filter((r) => r !== '"*"'));
    expect(touched).toEqual(
      new Set([
        logicalId(booking.logGroup),
        logicalId(booking.queue),
        logicalId(booking.deadLetterQueue),
        logicalId(other),
        logicalId(table.table),
      ]),
    );
    expect(actionsOn(statements, logicalId(booking.logGroup))).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
    // What the poller and the worker call (queue-actions.test.ts): no GetQueueUrl anywhere.
    expect(actionsOn(statements, logicalId(booking.queue))).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:SendMessage', // it chains to itself
    ]);
    expect(actionsOn(statements, logicalId(booking.deadLetterQueue))).toEqual(['sqs:SendMessage']);
    expect(actionsOn(statements, logicalId(other))).toEqual(['sqs:SendMessage']);
    // Exactly the commands the runtime sends (test/infra/idempotency-actions.test.ts); DeleteItem
    // because this FIFO queue's jobs are not given, so it may park a group (least-privilege.test.ts).
    expect(actionsOn(statements, logicalId(table.table))).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
  });

  it('warns at synth that the queue enqueues to itself under the default recursive loop detection', () => {
    const selfEnqueue = s.artifact.messages
      .filter((m) => m.level === 'warning' && String(m.entry.data).startsWith('recursiveLoop:'))
      .map((m) => m.id);
    expect(selfEnqueue).toEqual([`/${booking.node.path}`]);
    // Left to AWS: the property is absent and Lambda applies its default, Terminate.
    expect(s.json.Resources[logicalId(booking.worker)]!.Properties.RecursiveLoop).toBeUndefined();
  });

  it('creates eight alarms, each notifying the topic on ALARM and OK', () => {
    const topicRef = { Ref: logicalId(topic.topic) };
    const alarms = s.template.findResources('AWS::CloudWatch::Alarm');
    expect(Object.keys(alarms)).toHaveLength(8);
    // Batches open past their limit (the watchdog's BatchOverdue), per queue of completion jobs.
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'SqsJobs',
      MetricName: 'BatchOverdue',
      Dimensions: [{ Name: 'Queue', Value: 'booking' }],
      Threshold: 1,
      Period: 300,
    });
    for (const alarm of Object.values(alarms)) {
      expect(alarm.Properties.AlarmActions).toEqual([topicRef]);
      expect(alarm.Properties.OKActions).toEqual([topicRef]);
      expect(alarm.Properties.TreatMissingData).toBe('notBreaching');
    }
  });

  it('alarms on DLQ visible messages ≥ 1 and on the oldest message older than 15 minutes', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(booking.deadLetterQueue), 'QueueName'] } },
      ],
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      Statistic: 'Maximum',
      Period: 60,
    });
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(booking.queue), 'QueueName'] } }],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 900,
    });
  });

  it('alarms on every new DLQ arrival: DIFF of the DLQ total (visible + in flight) per minute above 0', () => {
    const dlqName = { 'Fn::GetAtt': [logicalId(booking.deadLetterQueue), 'QueueName'] };
    const props = s.json.Resources[logicalId(booking.alarms.deadLetterQueueArrivals)]!.Properties;
    expect(props).toMatchObject({
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(props.MetricName).toBeUndefined();
    const metrics = props.Metrics as {
      Id: string;
      Expression?: string;
      ReturnData?: boolean;
      MetricStat?: unknown;
    }[];
    const byId = new Map(metrics.map((m) => [m.Id, m]));
    expect(metrics.filter((m) => m.ReturnData !== false).map((m) => m.Expression)).toEqual([
      'DIFF(visible + inFlight)',
    ]);
    expect(byId.get('visible')?.MetricStat).toEqual({
      Metric: {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: dlqName }],
      },
      Period: 60,
      Stat: 'Maximum',
    });
    expect(byId.get('inFlight')?.MetricStat).toEqual({
      Metric: {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesNotVisible',
        Dimensions: [{ Name: 'QueueName', Value: dlqName }],
      },
      Period: 60,
      Stat: 'Maximum',
    });
  });

  it('alarms on SqsJobs/BatchFailed (Queue = booking) ≥ 1 in a minute: batches failed outside any record', () => {
    expect(booking.alarms.batchesFailed).toBeDefined();
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'SqsJobs',
      MetricName: 'BatchFailed',
      Dimensions: [{ Name: 'Queue', Value: 'booking' }],
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      Statistic: 'Sum',
      Period: 60,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on worker Errors, Throttles and the worker metric SqsJobs/JobDeadLettered (Queue = booking)', () => {
    for (const metric of ['Errors', 'Throttles']) {
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(booking.worker) } }],
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
        Statistic: 'Sum',
      });
    }
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'SqsJobs',
      MetricName: 'JobDeadLettered',
      Dimensions: [{ Name: 'Queue', Value: 'booking' }],
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      Statistic: 'Sum',
    });
  });

  it('IdempotencyTable: pk (S) only, TTL expiresAt, on-demand, PITR, deletion protection, retained', () => {
    s.template.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('AlarmTopic: KMS-encrypted with a rotated key CloudWatch may use, TLS only, CloudWatch of this account may publish, email subscribed', () => {
    s.template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [logicalId(topic.key), 'Arn'] },
    });
    s.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Condition: {
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              ArnLike: { 'aws:SourceArn': Match.anyValue() },
            },
          }),
        ]),
      },
    });
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: {
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              ArnLike: { 'aws:SourceArn': Match.anyValue() },
            },
          }),
        ]),
      },
    });
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
  });
});

describe('JobQueue: standard and high-throughput FIFO queues with non-default settings', () => {
  let outdir: string;
  let s: ReturnType<typeof synth>;
  let payments: JobQueue;
  let orders: JobQueue;
  let givenDlq: sqs.Queue;

  beforeAll(() => {
    outdir = tempOutdir('construct-standard');
    s = synth((stack) => {
      givenDlq = new sqs.Queue(stack, 'SharedDlq', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // Longer than the queue's 4 days (refused otherwise: dead-letter-retention rule).
        retentionPeriod: Duration.days(14),
      });
      payments = new JobQueue(stack, 'Payments', {
        name: 'payments',
        entry: FIXTURE_ENTRY,
        projectRoot: PROJECT_ROOT,
        maxAttempts: 3,
        jobTimeoutSeconds: 20,
        functionTimeout: Duration.seconds(60),
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(2),
        maxConcurrency: 5,
        reservedConcurrency: 10,
        maxReceiveCount: 12,
        maxMessageSizeBytes: 262_144,
        ageOfOldestMessageAlarmThreshold: Duration.minutes(5),
        deadLetterQueue: givenDlq,
        memorySizeMb: 1024,
        idempotencyTable: false,
        sourceMaps: true,
      });
      orders = new JobQueue(stack, 'Orders', {
        name: 'orders',
        fifo: true,
        entry: FIXTURE_ENTRY,
        projectRoot: PROJECT_ROOT,
        maxAttempts: 4,
        jobTimeoutSeconds: 5,
        deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
        fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        batchSize: 5,
        idempotencyTable: false,
        alarmTopic: false,
      });
    }, outdir);
  });
  afterAll(() => removeDir(outdir));

  it('standard queue: no FIFO attributes, CloudFormation-generated name, the given DLQ in the redrive policy', () => {
    const q = s.json.Resources[logicalId(payments.queue)]!.Properties;
    expect(q.FifoQueue).toBeUndefined();
    expect(q.QueueName).toBeUndefined();
    expect(q.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(givenDlq), 'Arn'] },
      maxReceiveCount: 12,
    });
    expect(q.MaximumMessageSize).toBe(262_144);
    expect(payments.deadLetterQueue).toBe(givenDlq);
    // No DLQ of its own: the shared DLQ, the Orders queue and its DLQ, the Payments queue.
    s.template.resourceCountIs('AWS::SQS::Queue', 4);
  });

  it('visibility timeout = 6 × 60 s + 2 s batching window = 362 s', () => {
    expect(s.json.Resources[logicalId(payments.queue)]!.Properties.VisibilityTimeout).toBe(362);
  });

  it('event source: batch size 100, 2 s batching window, maximum concurrency 5; reserved concurrency 10', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(payments.queue), 'Arn'] },
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 2,
      ScalingConfig: { MaximumConcurrency: 5 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Timeout: 60,
      MemorySize: 1024,
      ReservedConcurrentExecutions: 10,
    });
  });

  it('maps stack traces only when asked: sourceMaps: true sets NODE_OPTIONS=--enable-source-maps', () => {
    const variables = (queue: JobQueue) =>
      (
        s.json.Resources[logicalId(queue.worker)]!.Properties.Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables;
    expect(variables(payments).NODE_OPTIONS).toBe('--enable-source-maps');
    expect(variables(orders)).not.toHaveProperty('NODE_OPTIONS');
  });

  it('without an idempotency table: no JOBS_IDEMPOTENCY_TABLE and no DynamoDB permission', () => {
    const fn = s.json.Resources[logicalId(payments.worker)]!.Properties;
    const env = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).not.toHaveProperty('JOBS_IDEMPOTENCY_TABLE');
    expect(env.JOBS_DLQ_URL).toEqual({ Ref: logicalId(givenDlq) });
    const { statements } = roleStatements(s.json, logicalId(payments.worker.role!));
    expect(statements.flatMap((st) => st.actions).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
    expect(actionsOn(statements, logicalId(givenDlq))).toContain('sqs:SendMessage');
  });

  it('age alarm uses the given threshold (5 minutes); without a topic the alarms have no actions', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(payments.queue), 'QueueName'] } }],
      Threshold: 300,
    });
    s.template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: Match.absent(),
      OKActions: Match.absent(),
    });
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 16);
  });

  it('warns at synth that the alarms of a queue without alarmTopic notify nobody; alarmTopic: false is silent', () => {
    const noTopic = s.artifact.messages
      .filter((m) => m.level === 'warning' && String(m.entry.data).startsWith('alarmTopic: not set'))
      .map((m) => m.id);
    expect(noTopic).toEqual([`/${payments.node.path}`]);
  });

  it('high-throughput FIFO: DeduplicationScope messageGroup and FifoThroughputLimit perMessageGroupId', () => {
    const q = s.json.Resources[logicalId(orders.queue)]!.Properties;
    expect(q).toMatchObject({
      FifoQueue: true,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
      RedrivePolicy: { maxReceiveCount: 9 },
    });
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(orders.queue), 'Arn'] },
      BatchSize: 5,
    });
  });
});

describe('JobQueue passes what it was built for to the worker (JOBS_MAX_ATTEMPTS, JOBS_JOB_TIMEOUT_SECONDS)', () => {
  const schema = z.object({ id: z.string() });
  const capture = defineJob({
    type: 'payments.capture',
    queue: 'payments',
    schema,
    retry: { maxAttempts: 8 },
    timeoutSeconds: 30,
    run: async () => {},
  });
  // The finding: a job added to the worker's entry only, not to the JobQueue's jobs.
  const refund = defineJob({
    type: 'payments.refund',
    queue: 'payments',
    schema,
    retry: { maxAttempts: 20 },
    timeoutSeconds: 120,
    run: async () => {},
  });
  let outdir: string;
  let s: ReturnType<typeof synth>;
  let fromJobs: JobQueue;
  let raised: JobQueue;

  beforeAll(() => {
    outdir = tempOutdir('construct-limits');
    s = synth((stack) => {
      fromJobs = new JobQueue(stack, 'Payments', {
        name: 'payments',
        entry: FIXTURE_ENTRY,
        projectRoot: PROJECT_ROOT,
        jobs: [capture],
        idempotencyTable: false,
        alarmTopic: false,
      });
      raised = new JobQueue(stack, 'Refunds', {
        name: 'refunds',
        entry: FIXTURE_ENTRY,
        projectRoot: PROJECT_ROOT,
        jobs: [{ ...capture, queue: 'refunds' }],
        maxAttempts: 12,
        jobTimeoutSeconds: 45.5,
        idempotencyTable: false,
        alarmTopic: false,
      });
    }, outdir);
  });
  afterAll(() => removeDir(outdir));

  const envOf = (queue: JobQueue) =>
    (
      s.json.Resources[logicalId(queue.worker)]!.Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;

  it("sets the queue's maxAttempts and job time limit, derived from jobs or given", () => {
    expect(envOf(fromJobs)).toMatchObject({ JOBS_MAX_ATTEMPTS: '8', JOBS_JOB_TIMEOUT_SECONDS: '30' });
    expect(fromJobs.maxReceiveCount).toBe(13);
    expect(envOf(raised)).toMatchObject({ JOBS_MAX_ATTEMPTS: '12', JOBS_JOB_TIMEOUT_SECONDS: '45.5' });
  });

  it('a worker given that environment refuses a job the queue was not built for, and runs the ones it was', async () => {
    const env = {
      ...(Object.fromEntries(
        Object.entries(envOf(fromJobs)).filter(([, value]) => typeof value === 'string'),
      ) as Record<string, string>),
      JOBS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/payments',
      JOBS_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/payments-dlq',
    };
    const event = {
      Records: [
        { messageId: 'm-1', receiptHandle: 'r-1', body: '{}', attributes: {}, messageAttributes: {} },
      ],
    } as unknown as SQSEvent;
    const context = { getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
    const logger = new Logger({ logLevel: 'SILENT' });
    const errors: unknown[][] = [];
    logger.error = (...args: unknown[]) => void errors.push(args);
    const metrics = new Metrics({
      namespace: 'SqsJobs',
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const both = createWorker({ jobs: [capture, refund], idempotency: false, env, logger, metrics });
    expect(await both(event, context)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    const refused = JSON.stringify(errors);
    expect(refused).toContain(
      'job payments.refund has retry.maxAttempts 20 but queue payments was built for 8',
    );
    expect(refused).toContain(
      'job payments.refund has timeoutSeconds 120 but queue payments was built for a job time limit of 30 s',
    );
    expect(refused).toContain("add it to the JobQueue's jobs");
    errors.length = 0;
    const sqs = { send: async () => ({}) } as unknown as SqsSender;
    const fits = createWorker({ jobs: [capture], idempotency: false, env, logger, metrics, sqs });
    // The malformed body is dead-lettered on its own: no batch failure, no configuration error.
    expect(await fits(event, context)).toEqual({ batchItemFailures: [] });
    expect(JSON.stringify(errors)).not.toContain('invalid worker configuration');
  });
});

describe('JobQueue in a monorepo: lock file at the repository root, CDK app in a package below', () => {
  let repo: string;
  let outdir: string;

  beforeAll(() => {
    repo = tempOutdir('monorepo');
    outdir = tempOutdir('monorepo-out');
    const write = (rel: string, content: string) => {
      fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
      fs.writeFileSync(path.join(repo, rel), content);
    };
    write('package-lock.json', '{"lockfileVersion": 3, "packages": {}}');
    // The dependencies installed at the repository root (hoisted), esbuild among them.
    fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(repo, 'node_modules'));
    write('package.json', '{"private": true, "workspaces": ["packages/*"]}');
    write('shared/answer.ts', 'export const answer = (n: number): number => n * 2;\n');
    write('packages/infra/package.json', '{"name": "infra", "type": "module"}');
    write(
      'packages/infra/src/worker.ts',
      "import { answer } from '../../../shared/answer.ts';\nexport const handler = async (event: { Records: unknown[] }) => ({ batchItemFailures: [], doubled: answer(event.Records.length) });\n",
    );
  });
  afterAll(() => {
    removeDir(repo);
    removeDir(outdir);
  });

  it('finds the root lock file walking up from projectRoot and bundles the worker (with code from outside the package)', () => {
    const app = new App({ outdir });
    const stack = new Stack(app, 'Monorepo');
    new JobQueue(stack, 'Jobs', {
      name: 'jobs',
      entry: 'src/worker.ts', // relative to projectRoot
      projectRoot: path.join(repo, 'packages/infra'),
      maxAttempts: 3,
      jobTimeoutSeconds: 5,
      idempotencyTable: false,
      alarmTopic: false,
    });
    const assembly = app.synth();
    const [worker] = findWorkerAssets(assembly, assembly.getStackArtifact(stack.artifactId));
    const loaded = loadBundledHandler(worker!.assetDirectory, worker!.entryFile, worker!.handlerName, {
      Records: [{}, {}],
    });
    expect(loaded).toEqual({ handlerType: 'function', result: { batchItemFailures: [], doubled: 4 } });
  });
});
