/**
 * Time for a JobQueue: the EventBridge Scheduler schedule group of the queue, the execution role
 * its schedules send with, the dead-letter queue of deliveries that failed, their alarms, the
 * recurring jobs' schedules, and the grant of a producer that schedules one-time jobs
 * (docs/deploy.md, "Recurring jobs"; docs/contracts.md for the producer's environment).
 * JobQueue makes it on first use only, so a queue that never uses time is unchanged.
 *
 * AWS pages (named in brackets):
 * - confused-deputy: https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
 *   (the execution role's trust: `aws:SourceAccount`, `aws:SourceArn` = the schedule group's ARN)
 * - schedule-dlq: https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html
 *   (a standard SQS queue, never FIFO; the execution role sends to it)
 * - sqs-target: https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-targets-templated.html
 *   (FIFO targets need content-based deduplication and a MessageGroupId)
 * - scheduler-metrics: https://docs.aws.amazon.com/scheduler/latest/UserGuide/monitoring-cloudwatch.html
 *   (namespace `AWS/Scheduler`, dimension `ScheduleGroup`)
 * - list_amazoneventbridgescheduler: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html
 *   (schedule ARN `arn:${Partition}:scheduler:${Region}:${Account}:schedule/${GroupName}/${ScheduleName}`)
 * - specifying-conditions (DynamoDB): https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
 *   (`dynamodb:LeadingKeys` limits item access by partition key value)
 */
import { createHash } from 'node:crypto';
import { Duration, Names, RemovalPolicy, Stack, Tags, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SCHEDULE_DLQ_TAG, SCHEDULED_JOB_PK_PREFIX } from '../../core/scheduled-job.ts';
import { validationsOf } from '../cdk-features.ts';
import { JOB_QUEUE_DEFAULTS } from './defaults.ts';
import { grantSend } from './grants.ts';
import {
  RECURRING_JOB_DEFAULTS,
  type RecurringJob,
  recurringJobBody,
  recurringJobEnvelope,
  recurringJobType,
} from './recurring-jobs.ts';

/** The service principal of EventBridge Scheduler. */
export const SCHEDULER_SERVICE = 'scheduler.amazonaws.com';

/**
 * What a producer that schedules one-time jobs calls on its queue's schedules (JobClient `runAt`,
 * `cancel`, `reschedule`; the `sjs-` schedules of docs/contracts.md): on `schedule/<group>/*` only.
 */
export const SCHEDULE_JOB_ACTIONS = [
  'scheduler:CreateSchedule',
  'scheduler:DeleteSchedule',
  'scheduler:GetSchedule',
  'scheduler:UpdateSchedule',
] as const;

/** The item commands of a one-time job's state item, on `schedule#*` partition keys only. */
export const SCHEDULED_JOB_STATE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
] as const;

/** Longest schedule group name [list_amazoneventbridgescheduler]: 64 characters of `[0-9a-zA-Z-_.]`. */
const MAX_GROUP_NAME = 64;

/**
 * The schedule group name of queue `queueName` in `stack`: `<stack name>-<queue name>`, at most
 * 64 characters; a longer stack name is cut and followed by 8 hex characters of its SHA-256, so
 * two long stack names still give two names. An unresolved stack name (a token) gives a name
 * unique per construct path instead.
 */
export function scheduleGroupNameOf(stack: Stack, queueName: string, fallback: () => string): string {
  const stackName = stack.stackName;
  if (Token.isUnresolved(stackName)) return fallback();
  const full = `${stackName}-${queueName}`;
  if (full.length <= MAX_GROUP_NAME) return full;
  const hash = createHash('sha256').update(stackName).digest('hex').slice(0, 8);
  const room = MAX_GROUP_NAME - queueName.length - hash.length - 2;
  return `${stackName.slice(0, room)}-${hash}-${queueName}`;
}

/** The alarms of a JobQueue's schedules (created with its scheduling). */
export interface JobQueueScheduleAlarms {
  /**
   * Schedule DLQ `ApproximateNumberOfMessagesVisible` ≥ 1: EventBridge Scheduler gave up
   * delivering a firing or a one-time job to the queue (its retry policy ran out); the job did not
   * run. Read the dead-letter event, fix the cause, then send the job again.
   */
  readonly scheduleDeadLetterQueueDepth: cloudwatch.Alarm;
  /**
   * `AWS/Scheduler` `TargetErrorCount` + `InvocationDroppedCount` +
   * `InvocationsFailedToBeSentToDeadLetterCount` of the queue's schedule group ≥ 1 in 5 minutes:
   * a delivery to the queue failed (it is being retried, so the job is overdue), or a firing was
   * dropped or could not even reach the dead-letter queue (lost) [scheduler-metrics].
   */
  readonly scheduleDeliveryFailures: cloudwatch.Alarm;
}

/** Properties of {@link JobQueueScheduling}. */
export interface JobQueueSchedulingProps {
  /** Logical queue name. */
  readonly queueName: string;
  /** The queue schedules deliver to. */
  readonly queue: sqs.IQueue;
  /** Whether the queue is FIFO (schedules then carry a MessageGroupId). */
  readonly fifo: boolean;
  /** Largest message of the queue, also the schedule DLQ's. */
  readonly maxMessageSizeBytes: number | undefined;
}

/** The scheduling resources of one JobQueue. See the module docstring. */
export class JobQueueScheduling extends Construct {
  /** The schedule group (removed with the stack, and with it every schedule in it). */
  readonly group: scheduler.ScheduleGroup;
  /** Name of {@link group}. */
  readonly groupName: string;
  /** The role EventBridge Scheduler assumes to deliver: send to the queue and to {@link deadLetterQueue}, nothing else. */
  readonly role: iam.Role;
  /** Standard queue of deliveries EventBridge Scheduler gave up on [schedule-dlq]. */
  readonly deadLetterQueue: sqs.Queue;
  readonly alarms: JobQueueScheduleAlarms;
  /** Envelope `source` of the recurring jobs' firings: `/sqs-jobs/schedules/<group name>`. */
  readonly source: string;
  private readonly props: JobQueueSchedulingProps;

  constructor(scope: Construct, id: string, props: JobQueueSchedulingProps) {
    super(scope, id);
    this.props = props;
    const stack = Stack.of(this);
    this.groupName = scheduleGroupNameOf(stack, props.queueName, () =>
      Names.uniqueResourceName(this, { maxLength: MAX_GROUP_NAME, separator: '-' }),
    );
    this.source = `/sqs-jobs/schedules/${this.groupName}`;
    this.group = new scheduler.ScheduleGroup(this, 'Group', {
      scheduleGroupName: this.groupName,
      // The queue goes with its stack; so do its schedules (deleting a group deletes its schedules),
      // rather than firing at a queue that no longer exists.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.role = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal(SCHEDULER_SERVICE, {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': this.group.scheduleGroupArn },
        },
      }),
      description: `sqs-jobs: EventBridge Scheduler delivering the scheduled jobs of queue ${props.queueName}`,
    });

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      // Scheduler's DLQ must be a standard queue, whatever the kind of the target [schedule-dlq].
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: JOB_QUEUE_DEFAULTS.deadLetterRetentionPeriod,
      maxMessageSizeBytes: props.maxMessageSizeBytes,
    });
    // Tools tell it from a queue of work by this tag (no RedrivePolicy names it).
    Tags.of(this.deadLetterQueue).add(SCHEDULE_DLQ_TAG, props.queueName);
    // Without Validations (aws-cdk-lib before 2.257) there is no cdk-nag 3 to acknowledge it to.
    validationsOf(this.deadLetterQueue)?.acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "this queue is a dead-letter queue itself: EventBridge Scheduler's DeadLetterConfig of the queue's schedules, which cdk-nag does not recognise as a redrive target; it has no DLQ of its own",
    });

    // The execution role sends firings to the queue and, when retries run out, the dead-letter
    // event to the schedule DLQ [schedule-dlq]; KMS on a queue's key when it has one.
    grantSend(this.role, props.queue);
    grantSend(this.role, this.deadLetterQueue);

    this.alarms = this.createAlarms();
  }

  /** ARN pattern of the group's schedules: `arn:…:schedule/<group>/*` [list_amazoneventbridgescheduler]. */
  get scheduleArns(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.groupName}/*`,
    });
  }

  /**
   * One `AWS::Scheduler::Schedule` for a checked recurring job (./recurring-jobs.ts): the
   * templated SQS target with the envelope as `Input`, the job's retry policy and the schedule DLQ.
   */
  addRecurringJob(job: RecurringJob): scheduler.CfnSchedule {
    const type = recurringJobType(job.job) as string;
    const schedule = new scheduler.CfnSchedule(this, `RecurringJob-${job.name}`, {
      name: job.name,
      groupName: this.group.scheduleGroupName,
      description: job.description ?? `sqs-jobs recurring job ${type} on queue ${this.props.queueName}`,
      scheduleExpression: job.schedule,
      scheduleExpressionTimezone: job.timeZone ?? 'UTC',
      flexibleTimeWindow: { mode: 'OFF' },
      state: job.enabled === false ? 'DISABLED' : 'ENABLED',
      startDate: job.startDate?.toISOString(),
      endDate: job.endDate?.toISOString(),
      target: {
        arn: this.props.queue.queueArn,
        roleArn: this.role.roleArn,
        input: this.recurringJobInput(job),
        sqsParameters:
          this.props.fifo && job.partitionKey !== undefined
            ? { messageGroupId: job.partitionKey }
            : undefined,
        retryPolicy: {
          maximumEventAgeInSeconds:
            job.maximumEventAgeSeconds ?? RECURRING_JOB_DEFAULTS.maximumEventAgeSeconds,
          maximumRetryAttempts: job.maximumRetryAttempts ?? RECURRING_JOB_DEFAULTS.maximumRetryAttempts,
        },
        deadLetterConfig: { arn: this.deadLetterQueue.queueArn },
      },
    });
    // The group is named, not referenced: the schedule waits for it. The first firing must find
    // the role's permissions in place.
    schedule.node.addDependency(this.group, this.role);
    return schedule;
  }

  /**
   * The `Target.Input` of `job`'s schedule: its envelope as JSON, with {@link source} as the
   * envelope's `source` (a token string; tokens in `data` become CloudFormation functions).
   */
  recurringJobInput(job: RecurringJob): string {
    const type = recurringJobType(job.job) as string;
    return Stack.of(this).toJsonString(recurringJobEnvelope(job, type, this.source));
  }

  /**
   * {@link recurringJobInput} as the synthesized template holds it, the text whose size
   * EventBridge Scheduler's Input limit applies to. When `data` holds tokens (resolved only at
   * deploy), each counts as its placeholder text.
   */
  recurringJobInputText(job: RecurringJob): string {
    const resolved: unknown = Stack.of(this).resolve(this.recurringJobInput(job));
    if (typeof resolved === 'string') return resolved;
    return recurringJobBody(job, recurringJobType(job.job) as string, this.source);
  }

  /**
   * Lets `grantee` schedule one-time jobs on the queue (docs/contracts.md): the four schedule
   * actions on the group's schedules only; `iam:PassRole` on the execution role, to EventBridge
   * Scheduler only; the state items (`schedule#*` partition keys) of the idempotency table; send to
   * the queue (short delays go with `DelaySeconds`).
   */
  grantScheduleJobs(grantee: iam.IGrantable, table: dynamodb.ITable): void {
    iam.Grant.addToPrincipal({
      grantee,
      actions: [...SCHEDULE_JOB_ACTIONS],
      resourceArns: [this.scheduleArns],
    });
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['iam:PassRole'],
      resourceArns: [this.role.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': SCHEDULER_SERVICE } },
    });
    iam.Grant.addToPrincipal({
      grantee,
      actions: [...SCHEDULED_JOB_STATE_ACTIONS],
      resourceArns: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SCHEDULED_JOB_PK_PREFIX}*`] } },
    });
    table.encryptionKey?.grantEncryptDecrypt(grantee);
    grantSend(grantee, this.props.queue);
    // Schedule names are made at run time (a hash of the job's identity), so the resource is the
    // group's schedules: the narrowest ARN that covers them.
    const finding = `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${this.groupName}/*]`;
    // On the principal (a function's role holds its policy), so the acknowledgement covers the
    // policy the grant wrote, whatever construct the grantee is.
    const principal = grantee.grantPrincipal;
    const policyScope =
      principal instanceof Construct ? principal : grantee instanceof Construct ? grantee : undefined;
    if (policyScope !== undefined)
      validationsOf(policyScope)?.acknowledge({
        id: finding,
        reason: `one-time job schedules are named at run time from the job's identity (sj-<hash>), so the producer's schedule actions cover the schedules of group ${this.groupName} only, not of any other group`,
      });
  }

  private createAlarms(): JobQueueScheduleAlarms {
    const q = `queue ${this.props.queueName}`;
    const fiveMinutes = Duration.minutes(5);
    const groupMetric = (metricName: string) =>
      this.group.metric(metricName, { period: fiveMinutes, statistic: 'Sum' });
    return {
      scheduleDeadLetterQueueDepth: new cloudwatch.Alarm(this, 'DeadLetterQueueDepthAlarm', {
        alarmDescription: `${q}: EventBridge Scheduler gave up delivering a scheduled job (a recurring firing or a job sent for later) and put it in the schedule dead-letter queue: the job did not run. Read the dead-letter event, fix the cause (queue, permissions, KMS), then send the job again.`,
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: 'Maximum',
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      scheduleDeliveryFailures: new cloudwatch.Alarm(this, 'DeliveryFailuresAlarm', {
        alarmDescription: `${q}: EventBridge Scheduler could not deliver a scheduled job to the queue (it retries, so the job is late), or dropped one, or could not put one in the schedule dead-letter queue (lost). AWS/Scheduler metrics of schedule group ${this.groupName}.`,
        metric: new cloudwatch.MathExpression({
          expression: 'FILL(targetErrors, 0) + FILL(dropped, 0) + FILL(failedToDeadLetter, 0)',
          usingMetrics: {
            targetErrors: groupMetric('TargetErrorCount'),
            dropped: groupMetric('InvocationDroppedCount'),
            failedToDeadLetter: groupMetric('InvocationsFailedToBeSentToDeadLetterCount'),
          },
          label: 'failed schedule deliveries per 5 minutes',
          period: fiveMinutes,
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    };
  }
}
