/**
 * `JobsStack`: the deployable sample application. Its queues come from lib/sample/topology.ts
 * (shared with the local runtime): FIFO `booking` (per user: reserve inventory → confirm
 * reservation → issue invoice), standard `payments` and `notifications`. Each JobQueue gets the
 * job definitions its worker runs (`jobs`) and derives `maxAttempts` and `jobTimeoutSeconds` from
 * them, so those numbers live only in the job definitions (lib/sample/jobs.ts).
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, CfnOutput, type Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import {
  AlarmTopic,
  IdempotencyTable,
  type JobDefinitionLike,
  JobQueue,
  type JobQueueProps,
  JobsConfigError,
  JobsDashboard,
} from 'sqs-jobs/cdk';
import { SAMPLE_RETRY } from '../sample/jobs.ts';
import { FIFO_LIMIT_WAIT_RECEIVES } from '../sample/partner-limit.ts';
import { SAMPLE_QUEUES, SAMPLE_RECURRING_JOBS, type SampleRecurringJob } from '../sample/topology.ts';

/** The project root (where package.json, package-lock.json and functions/ are). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Context keys the stack reads when the matching prop is not given (`cdk deploy -c key=value`). */
export const JOBS_STACK_CONTEXT = {
  alarmEmail: 'alarmEmail',
  externalApiUrl: 'externalApiUrl',
} as const;

/**
 * Per-queue tuning of the sample app beyond the topology, in JobQueue props, by queue name.
 * Everything not set here (and every queue not named here) uses the JobQueue defaults.
 */
const SAMPLE_TUNING: Readonly<Partial<Record<string, Partial<JobQueueProps>>>> = {
  // FIFO: concurrency follows the number of active message groups (users), so many active users
  // could take up to 1,000 concurrent batches; capped at 5 (maximum concurrency is a setting of any
  // SQS event source, FIFO included [services-sqs-scaling]). Order inside a user does not depend on
  // it. Batches of 10 at most. Booking chains to itself (reserve → confirm → invoice: 3 hops, far
  // below Lambda's ~16-hop recursion stop), so Lambda's default Terminate is kept, on purpose.
  // Invoices wait for the partner's rate limit in their group (a visibility delay: one receive
  // each), so the redrive policy gets FIFO_LIMIT_WAIT_RECEIVES more than the default margin
  // (attempts + 5) and still catches only crashes (lib/sample/partner-limit.ts).
  booking: {
    batchSize: 10,
    maxConcurrency: 5,
    recursiveLoop: lambda.RecursiveLoop.TERMINATE,
    maxReceiveCount: SAMPLE_RETRY.maxAttempts + 5 + FIFO_LIMIT_WAIT_RECEIVES,
  },
  // The payment API is the scarce resource: at most 5 concurrent batches call it.
  payments: { batchSize: 10, maxConcurrency: 5 },
  // Notifications chains to itself for the soak's batches (start → child → nested child →
  // completion: a few hops, lib/sample/soak-batches.ts): Terminate kept on purpose, like booking.
  notifications: { batchSize: 10, maxConcurrency: 10, recursiveLoop: lambda.RecursiveLoop.TERMINATE },
};

/** One queue of a {@link JobsStack} (a lib/sample/topology.ts entry has this shape). */
export interface JobsStackQueue {
  /** Logical queue name (JobQueue `name`). */
  readonly name: string;
  /** FIFO or standard. */
  readonly fifo: boolean;
  /** Worker entry, relative to the project root. */
  readonly entry: string;
  /** Logical names of the queues its jobs enqueue to; each must be a queue of the stack. */
  readonly enqueuesTo: readonly string[];
  /**
   * The job definitions its worker runs (at least one): JobQueue derives `maxAttempts` and
   * `jobTimeoutSeconds` from them.
   */
  readonly jobs: readonly JobDefinitionLike[];
}

/** Properties of a {@link JobsStack}. */
export interface JobsStackProps extends StackProps {
  /**
   * Email address subscribed to the alarm topic (confirm the subscription email AWS sends).
   * @default - context `alarmEmail`, else no subscription
   */
  readonly alarmEmail?: string;

  /**
   * Base URL (http or https) of the payment / mail / invoice API the sample jobs call
   * (`EXTERNAL_API_URL` of every worker).
   * @default - context `externalApiUrl`; when neither is set, `EXTERNAL_API_URL` stays unset, a synth warning is shown and the jobs that call the API dead-letter with a permanent error
   */
  readonly externalApiUrl?: string;

  /**
   * Alarm threshold for the age of the oldest message of every queue.
   * @default 15 minutes (the JobQueue default)
   */
  readonly ageOfOldestMessageAlarmThreshold?: Duration;

  /**
   * The queues to build.
   * @default SAMPLE_QUEUES from lib/sample/topology.ts
   */
  readonly queues?: readonly JobsStackQueue[];

  /**
   * Recurring jobs, each declared on its queue (`JobQueue.addRecurringJob`): an EventBridge
   * Scheduler schedule in the queue's group, with its role, dead-letter queue and alarms.
   * @default SAMPLE_RECURRING_JOBS from lib/sample/topology.ts (the nightly invoice run) with the
   *   sample's queues; none when `queues` is given
   */
  readonly recurringJobs?: readonly SampleRecurringJob[];

  /**
   * Producers allowed to send jobs for later (`JobQueue.grantScheduleJobs`): the worker of each
   * named queue may schedule, cancel and reschedule one-time jobs on that same queue.
   * @default ['booking'] with the sample's queues (its reservation holds expire unless the booking
   *   is confirmed first); none when `queues` is given
   */
  readonly schedulingProducers?: readonly string[];

  /**
   * Project root: worker entries (`functions/*.ts`) are relative to it; its package-lock.json
   * and tsconfig.json drive bundling.
   * @default PROJECT_ROOT (two directories above this file)
   */
  readonly projectRoot?: string;

  /**
   * What happens to the sample domain table (`APP_TABLE`) when the stack is deleted. The
   * idempotency table is always retained.
   * @default RemovalPolicy.DESTROY (sample data)
   */
  readonly appTableRemovalPolicy?: RemovalPolicy;
}

/** `booking` → `Booking`, `my-queue` → `MyQueue` (output ids). */
function pascal(name: string): string {
  return name
    .split(/[-_]/)
    .filter((p) => p.length > 0)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
}

/**
 * The sample application: one {@link JobQueue} per topology entry, the idempotency table, the
 * domain table (`APP_TABLE`: `pk` + `sk` strings, on-demand, PITR), the alarm topic, a dashboard
 * and stack outputs for producers and operators. The nightly invoice run is a recurring job on
 * `booking` (an EventBridge Scheduler schedule at 23:00 Europe/Berlin, with the queue's schedule
 * group, scheduler role, schedule DLQ and alarms), and the booking worker may schedule one-time
 * jobs on its queue.
 *
 * Outputs (ids): `<Queue>QueueUrl`, `<Queue>QueueArn`, `<Queue>DlqUrl`, `<Queue>DlqArn` per queue
 * (e.g. `BookingQueueUrl`), `IdempotencyTableName`, `AppTableName`, `AlarmTopicArn`,
 * `DashboardName`.
 * @throws {JobsConfigError} when `externalApiUrl` is not an http(s) URL, a queue's `enqueuesTo`,
 *   a recurring job's `queue` or a `schedulingProducers` entry names a queue that does not exist,
 *   a queue has no jobs, or a JobQueue refuses its settings (a recurring job's included).
 */
export class JobsStack extends Stack {
  /** The job queues by logical name. */
  readonly jobQueues: ReadonlyMap<string, JobQueue>;
  readonly idempotencyTable: IdempotencyTable;
  /** The sample domain table (`APP_TABLE`). */
  readonly appTable: dynamodb.Table;
  readonly alarmTopic: AlarmTopic;
  readonly dashboard: JobsDashboard;

  constructor(scope: Construct, id: string, props: JobsStackProps = {}) {
    super(scope, id, {
      description: 'sqs-jobs sample: background jobs on Lambda + SQS with idempotency, DLQs and alarms',
      ...props,
    });
    const queues = props.queues ?? SAMPLE_QUEUES;
    const projectRoot = props.projectRoot ?? PROJECT_ROOT;
    const alarmEmail = props.alarmEmail ?? this.stringContext(JOBS_STACK_CONTEXT.alarmEmail);
    const externalApiUrl = props.externalApiUrl ?? this.stringContext(JOBS_STACK_CONTEXT.externalApiUrl);

    const problems: string[] = [];
    if (externalApiUrl !== undefined && !isHttpUrl(externalApiUrl)) {
      problems.push(`externalApiUrl: '${externalApiUrl}' is not an http(s) URL`);
    }
    const names = new Set(queues.map((q) => q.name));
    // The sample's own time settings go with the sample's own queues.
    const recurringJobs = props.recurringJobs ?? (props.queues === undefined ? SAMPLE_RECURRING_JOBS : []);
    const schedulingProducers = props.schedulingProducers ?? (props.queues === undefined ? ['booking'] : []);
    for (const r of recurringJobs)
      if (!names.has(r.queue))
        problems.push(
          `recurringJobs: '${r.name}' is declared on queue '${r.queue}', which is not a queue of this stack`,
        );
    for (const name of schedulingProducers)
      if (!names.has(name)) problems.push(`schedulingProducers: '${name}' is not a queue of this stack`);
    for (const q of queues) {
      for (const target of q.enqueuesTo) {
        if (!names.has(target))
          problems.push(`queues: '${q.name}' enqueues to '${target}', which is not a queue of this stack`);
      }
      if (q.jobs.length === 0) {
        problems.push(
          `queues: '${q.name}' has no jobs: define its jobs with queue: '${q.name}' (lib/sample/jobs.ts for the sample)`,
        );
      }
    }
    if (problems.length > 0) throw new JobsConfigError('JobsStack', this.node.path, problems);
    if (externalApiUrl === undefined) {
      Annotations.of(this).addWarningV2(
        'sqs-jobs:noExternalApiUrl',
        'externalApiUrl is not set (prop or -c externalApiUrl=https://...): EXTERNAL_API_URL stays unset and the jobs that call the external API dead-letter',
      );
    }

    this.idempotencyTable = new IdempotencyTable(this, 'IdempotencyTable');
    this.appTable = new dynamodb.Table(this, 'AppTable', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: props.appTableRemovalPolicy ?? RemovalPolicy.DESTROY,
    });
    this.alarmTopic = new AlarmTopic(this, 'Alarms', {
      emails: alarmEmail === undefined ? [] : [alarmEmail],
    });

    const built = new Map<string, JobQueue>();
    for (const q of queues) {
      const jobQueue = new JobQueue(this, pascal(q.name), {
        ...SAMPLE_TUNING[q.name],
        name: q.name,
        fifo: q.fifo,
        entry: q.entry,
        projectRoot,
        jobs: q.jobs,
        idempotencyTable: this.idempotencyTable.table,
        alarmTopic: this.alarmTopic.topic,
        ageOfOldestMessageAlarmThreshold: props.ageOfOldestMessageAlarmThreshold,
        environment: {
          APP_TABLE: this.appTable.tableName,
          ...(externalApiUrl === undefined ? {} : { EXTERNAL_API_URL: externalApiUrl }),
        },
      });
      // Every sample job reads and updates the domain state it names by id.
      this.appTable.grantReadWriteData(jobQueue.worker);
      built.set(q.name, jobQueue);
    }
    // Enqueue targets after all queues exist: a queue may chain to itself or to a later one.
    for (const q of queues) {
      const source = built.get(q.name)!;
      for (const target of q.enqueuesTo) source.addEnqueueTarget(target, built.get(target)!.queue);
    }
    this.jobQueues = built;
    for (const { queue, ...job } of recurringJobs) built.get(queue)!.addRecurringJob(job);
    for (const name of schedulingProducers) {
      const q = built.get(name)!;
      q.grantScheduleJobs(q.worker);
    }

    this.dashboard = new JobsDashboard(this, 'Dashboard', { queues: [...built.values()] });
    this.addOutputs();
  }

  /** The job queue named `name`. @throws {Error} when there is none. */
  jobQueue(name: string): JobQueue {
    const q = this.jobQueues.get(name);
    if (q === undefined) throw new Error(`JobsStack has no queue '${name}'`);
    return q;
  }

  private addOutputs(): void {
    for (const q of this.jobQueues.values()) {
      const id = pascal(q.name);
      new CfnOutput(this, `${id}QueueUrl`, {
        value: q.queue.queueUrl,
        description: `URL of the ${q.name} queue (producers send jobs here)`,
      });
      new CfnOutput(this, `${id}QueueArn`, {
        value: q.queue.queueArn,
        description: `ARN of the ${q.name} queue`,
      });
      new CfnOutput(this, `${id}DlqUrl`, {
        value: q.deadLetterQueue.queueUrl,
        description: `URL of the ${q.name} dead-letter queue (inspect and redrive)`,
      });
      new CfnOutput(this, `${id}DlqArn`, {
        value: q.deadLetterQueue.queueArn,
        description: `ARN of the ${q.name} dead-letter queue (redrive source)`,
      });
    }
    new CfnOutput(this, 'IdempotencyTableName', {
      value: this.idempotencyTable.tableName,
      description: 'Idempotency records of all workers',
    });
    new CfnOutput(this, 'AppTableName', {
      value: this.appTable.tableName,
      description: 'Sample domain table (APP_TABLE)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.alarmTopic.topic.topicArn,
      description: 'SNS topic of all alarms: subscribe to get notified',
    });
    new CfnOutput(this, 'DashboardName', {
      value: this.dashboard.dashboard.dashboardName,
      description: 'CloudWatch dashboard of the queues and jobs',
    });
  }

  private stringContext(key: string): string | undefined {
    const value: unknown = this.node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return undefined;
    return String(value);
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
