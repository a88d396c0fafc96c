/**
 * What the web console works against, whatever started it: the queues (with their dead-letter
 * queues), the idempotency table(s), the clients to reach them, and the optional sources of
 * numbers SQS itself does not give (the age of the oldest message, completions, alarm states).
 *
 * Built by lib/console/local.ts (a local runtime, in this process or by its printed endpoints) or
 * lib/console/aws.ts (a deployed stack: CloudFormation outputs or explicit queue URLs).
 * No credential is kept here beyond the clients themselves, and nothing of this object is sent
 * to the page as it is: lib/console/backend.ts picks what the page sees.
 */
import type { SchedulerSender } from '../client/scheduling.ts';
import type { OldestMessageAgeSource } from '../ops/oldest-age.ts';
import type { OpsSqs } from '../ops/queue.ts';

/** One main queue the console shows. */
export interface ConsoleQueue {
  /** Short name shown and used in the page's URLs (`booking`, `Payments`); unique. */
  readonly id: string;
  readonly url: string;
  /**
   * Its dead-letter queue, when known from the setup (stack output `<Queue>DlqUrl`, local
   * runtime). When absent it is found through the queue's `RedrivePolicy`.
   */
  readonly dlqUrl?: string;
  /** The `Queue` dimension of the workers' `SqsJobs` metrics (`JOBS_QUEUE_NAME`), when known. */
  readonly jobQueueName?: string;
}

/** The DynamoDB calls the console makes (GetItem, Scan), behind a port: a `DynamoDBClient` fits. */
export interface ConsoleDynamo {
  send(command: object): Promise<unknown>;
}

/**
 * Completions counted by something that watches the workers: cumulative counts per queue URL
 * since the console started (local runtime: the workers' `JobCompleted` EMF metric, or the
 * records the event source mapping deleted).
 */
export interface CompletionCounter {
  readonly kind: 'counter';
  /** What is counted, in words, shown under the chart. */
  readonly label: string;
  /** Cumulative count per main queue URL. */
  read(): Map<string, number>;
}

/** Completions per minute from a metrics store (AWS: CloudWatch `SqsJobs` `JobCompleted`). */
export interface CompletionSeries {
  readonly kind: 'series';
  readonly label: string;
  /**
   * Per queue id, the completions of each minute of the last `minutes` minutes.
   * @returns minute starts (epoch ms, ascending) and one value per minute per queue (`null`: no datapoint).
   */
  read(
    queues: readonly ConsoleQueue[],
    minutes: number,
  ): Promise<{ t: number[]; series: Record<string, (number | null)[]>; notes: string[] }>;
}

/** One CloudWatch alarm as the page shows it. */
export interface ConsoleAlarm {
  readonly name: string;
  readonly state: string;
  readonly reason: string;
  /** ISO 8601. */
  readonly updatedAt: string | undefined;
  readonly metric: string | undefined;
  /** Id of the console queue it watches, when its dimensions name one of them (or its DLQ or worker). */
  readonly queueId: string | undefined;
}

/** Alarm states (AWS: CloudWatch DescribeAlarms). */
export interface AlarmSource {
  /** How the alarms are found, in words (e.g. `alarms named SqsJobs-*`). */
  readonly label: string;
  read(queues: readonly ConsoleQueue[], queueNames: ReadonlyMap<string, string>): Promise<ConsoleAlarm[]>;
}

/** Everything the console needs. */
export interface ConsoleSetup {
  /** `local`: the local runtime (emulators); `aws`: a deployed stack; `endpoint`: another SQS endpoint. */
  readonly mode: 'local' | 'aws' | 'endpoint';
  /** Shown as the page's title: the stack name, or what was given. */
  readonly title: string;
  readonly region: string | undefined;
  readonly sqs: OpsSqs;
  /** For job lookups; undefined when the console has no DynamoDB access configured. */
  readonly dynamodb: ConsoleDynamo | undefined;
  readonly queues: readonly ConsoleQueue[];
  /** Names of the idempotency tables (`JOBS_IDEMPOTENCY_TABLE`, stack output `IdempotencyTableName`). */
  readonly idempotencyTables: readonly string[];
  /** @default every age "n/a" with a note */
  readonly oldestAge?: OldestMessageAgeSource;
  readonly completions?: CompletionCounter | CompletionSeries;
  readonly alarms?: AlarmSource;
  /**
   * Whether `once` step records may be found by scanning the table for the job's key prefix.
   * True on emulators (small tables, free); false on AWS, where a Scan reads the whole table:
   * there the page asks for step names. @default mode !== 'aws'
   */
  readonly scanSteps?: boolean;
  /** Seconds between two samples of the queue numbers. @default 2 locally, 10 on AWS */
  readonly sampleSeconds?: number;
  /** `WaitTimeSeconds` of the DLQ reads. @default 0 on emulators (they answer in full), 1 on AWS */
  readonly dlqWaitSeconds?: number;
  /**
   * EventBridge Scheduler (AWS, or the local emulator), for the schedules page; undefined: the
   * page says schedules cannot be read here.
   */
  readonly scheduler?: SchedulerSender;
  /** The schedule groups the schedules page reads. @default every group at the scheduler except `default` */
  readonly scheduleGroups?: readonly string[];
  /** Facts about the setup the page shows (differences from AWS, what is not available and why). */
  readonly notes?: readonly string[];
  /** Closes the clients the setup made (not those it was given). */
  readonly close?: () => void | Promise<void>;
}
