/**
 * The `scheduling` option of `JobClient`: where jobs sent for later go (a schedule group and a
 * scheduler role per queue, the idempotency table that keeps each job's state), read from the
 * environment the `JobQueue` construct sets (`grantScheduleJobs`) or given in code, and checked.
 * Also the queue ARN a schedule targets, from the queue URL.
 *
 * Environment (docs/contracts.md, "Environment of a producer"; `<NAME>` as in
 * `JOBS_QUEUE_URL_<NAME>`: the logical name upper-cased, `-` → `_`):
 * `JOBS_SCHEDULE_GROUP_<NAME>`, `JOBS_SCHEDULER_ROLE_ARN_<NAME>`, `JOBS_SCHEDULE_DLQ_ARN_<NAME>`,
 * `JOBS_IDEMPOTENCY_TABLE`.
 */
import {
  SCHEDULE_DLQ_ARN_ENV_PREFIX,
  SCHEDULE_GROUP_ENV_PREFIX,
  SCHEDULER_ROLE_ENV_PREFIX,
  scheduleDlqArnEnvName,
  scheduleGroupEnvName,
  schedulerRoleEnvName,
} from '../core/queue-urls.ts';
import { JobClientError } from './job-client-error.ts';
import { describeValue, isPlainObject, unknownKeyProblems } from './option-keys.ts';

/** The variable naming the idempotency table (the state items of jobs sent for later live there). */
export const IDEMPOTENCY_TABLE_ENV = 'JOBS_IDEMPOTENCY_TABLE';

/** The part of an EventBridge Scheduler client `JobClient` uses: a `SchedulerClient` of `@aws-sdk/client-scheduler` has it; tests pass a fake. */
export interface SchedulerSender {
  // biome-ignore lint/suspicious/noExplicitAny: any Scheduler command; the output is read per command.
  send(command: any): Promise<unknown>;
}

/**
 * The part of a DynamoDB client `JobClient` uses (the state of jobs sent for later, `cancel`,
 * `reschedule`, and the batch item of `startBatch`): a `DynamoDBClient` of
 * `@aws-sdk/client-dynamodb` has it; tests pass a fake.
 */
export interface DynamoDbSender {
  // biome-ignore lint/suspicious/noExplicitAny: any DynamoDB command; the output is read per command.
  send(command: any): Promise<unknown>;
}

/** Who a job sent for later is: its queue and envelope identity. */
export interface ScheduledJobIdentity {
  /** Logical queue name the job was sent to. */
  readonly queue: string;
  /** The envelope `id` (`send`'s result `id`, or the `options.id` given). */
  readonly id: string;
  /** The envelope `source`. @default the client's `source` */
  readonly source?: string;
}

/** What {@link JobClient.cancel} did. */
export type CancelResult =
  /** The job will not run: its state is `cancelled` (a message of it that still arrives is recorded as cancelled and deleted). `scheduleDeleted`: its schedule was deleted (false: it had fired, the job went with DelaySeconds, or the delete failed; harmless either way). */
  | {
      readonly status: 'cancelled';
      readonly id: string;
      readonly queue: string;
      readonly runAt: string;
      readonly scheduleDeleted: boolean;
    }
  /** Too late: a worker has started the job (it runs to its end, retries included). */
  | {
      readonly status: 'already-started';
      readonly id: string;
      readonly queue: string;
      readonly runAt: string;
    }
  /** It was cancelled before. */
  | {
      readonly status: 'already-cancelled';
      readonly id: string;
      readonly queue: string;
      readonly runAt: string;
    }
  /** No job sent for later with this identity on this queue (never sent for later, another queue, or its state expired 14 days after its time). */
  | { readonly status: 'not-found'; readonly id: string; readonly queue: string };

/** What {@link JobClient.reschedule} did. */
export type RescheduleResult =
  /** The job now runs at `runAt` (generation `generation`); a message of an earlier generation is recorded as superseded. */
  | {
      readonly status: 'rescheduled';
      readonly id: string;
      readonly queue: string;
      readonly runAt: string;
      readonly generation: number;
      readonly via: 'delay' | 'schedule';
    }
  | Exclude<CancelResult, { status: 'cancelled' }>;

/** Where one queue's jobs sent for later are scheduled. */
export interface QueueScheduling {
  /** The EventBridge Scheduler schedule group of the queue (`jobQueue.scheduleGroupName`). 1–64 of `[0-9a-zA-Z-_.]`. */
  readonly groupName: string;
  /** ARN of the role EventBridge Scheduler assumes to send to the queue (`jobQueue.schedulerRole`). */
  readonly roleArn: string;
  /**
   * ARN of the queue the schedule targets. @default from the queue URL: region from the host
   * (`sqs.<region>.amazonaws.com`), else `AWS_REGION`; account and name from the path; partition
   * from `roleArn`
   */
  readonly queueArn?: string;
  /**
   * ARN of the standard SQS queue EventBridge Scheduler sends a job's message to when it gives up
   * delivering it (`jobQueue.scheduleDeadLetterQueue`; set as the schedule's
   * `Target.DeadLetterConfig.Arn`, EventBridge Scheduler User Guide, "Configuring a dead-letter
   * queue"). @default none: the client then warns once per queue (console.warn) that a job whose
   * delivery fails for 24 hours (185 retries) is dropped
   */
  readonly deadLetterQueueArn?: string;
}

/** The `scheduling` option of `JobClient`: needed only to send jobs for later, cancel and reschedule them. */
export interface SchedulingOptions {
  /** Logical queue name → its schedule group and role (needed for a job that goes as a schedule). */
  readonly queues?: Readonly<Record<string, QueueScheduling>>;
  /** The idempotency table (`IdempotencyTable`) holding each job's state item. Needed for every job sent for later. */
  readonly idempotencyTableName?: string;
}

const QUEUE_KEYS = [
  'groupName',
  'roleArn',
  'queueArn',
  'deadLetterQueueArn',
] as const satisfies readonly (keyof QueueScheduling)[];
const SCHEDULING_KEYS = [
  'queues',
  'idempotencyTableName',
] as const satisfies readonly (keyof SchedulingOptions)[];
/** Schedule group names (CreateScheduleGroup API, Name). */
const GROUP_NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/;
const QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[\w-]{1,80}(\.fifo)?$/;
/** Scheduler's dead-letter queue must be a standard queue (User Guide, "Configuring a dead-letter queue"). */
const STANDARD_QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[\w-]{1,80}$/;

/**
 * Reads the scheduling of every queue from the environment: a queue's
 * `JOBS_SCHEDULE_GROUP_<NAME>` and `JOBS_SCHEDULER_ROLE_ARN_<NAME>`, and its
 * `JOBS_SCHEDULE_DLQ_ARN_<NAME>` when set (`<NAME>` back to the logical name as
 * `queueUrlsFromEnv` does: lower-cased, `_` → `-`); the table from `JOBS_IDEMPOTENCY_TABLE`.
 * Empty values are skipped. Pass the result as `JobClient`'s `scheduling`.
 *
 * A queue with some of its variables but not both the group and the role (a dead-letter queue
 * without them, a group without its role) is refused, not skipped: `grantScheduleJobs` sets them
 * together, so a lone one is a misspelled or half-copied name, and skipping it would drop the
 * dead-letter queue, or the queue's scheduling, without a word.
 *
 * @param env the environment to read. @default process.env
 * @throws {JobClientError} `InvalidOptions` naming each variable set without its partners, the
 *   ones missing, and the queues whose variables are complete.
 * @example
 * ```ts
 * import { JobClient, queueUrlsFromEnv, schedulingFromEnv } from 'sqs-jobs/client';
 * const client = new JobClient({ source: '/services/checkout', queueUrls: queueUrlsFromEnv(), scheduling: schedulingFromEnv() });
 * ```
 */
export function schedulingFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): SchedulingOptions {
  /** Per queue name, per prefix: the variable and its value. */
  const found = new Map<string, Map<string, { key: string; value: string }>>();
  for (const [key, raw] of Object.entries(env)) {
    const value = raw?.trim();
    if (!value) continue;
    for (const prefix of [
      SCHEDULE_GROUP_ENV_PREFIX,
      SCHEDULER_ROLE_ENV_PREFIX,
      SCHEDULE_DLQ_ARN_ENV_PREFIX,
    ]) {
      if (key.startsWith(prefix) && key.length > prefix.length) {
        const queue = key.slice(prefix.length).toLowerCase().replaceAll('_', '-');
        const vars = found.get(queue) ?? new Map<string, { key: string; value: string }>();
        vars.set(prefix, { key, value });
        found.set(queue, vars);
      }
    }
  }
  const queues: Record<string, QueueScheduling> = {};
  const incomplete: [string, Map<string, { key: string; value: string }>][] = [];
  for (const [queue, vars] of found) {
    const groupName = vars.get(SCHEDULE_GROUP_ENV_PREFIX)?.value;
    const roleArn = vars.get(SCHEDULER_ROLE_ENV_PREFIX)?.value;
    const deadLetterQueueArn = vars.get(SCHEDULE_DLQ_ARN_ENV_PREFIX)?.value;
    if (groupName === undefined || roleArn === undefined) incomplete.push([queue, vars]);
    else queues[queue] = { groupName, roleArn, ...(deadLetterQueueArn ? { deadLetterQueueArn } : {}) };
  }
  if (incomplete.length > 0) {
    const complete = Object.keys(queues);
    const problems = incomplete.map(([queue, vars]) => {
      const set = [...vars.values()].map((v) => v.key);
      const missing = [
        [SCHEDULE_GROUP_ENV_PREFIX, scheduleGroupEnvName(queue)],
        [SCHEDULER_ROLE_ENV_PREFIX, schedulerRoleEnvName(queue)],
      ]
        .filter(([prefix]) => !vars.has(prefix as string))
        .map(([, name]) => name);
      return `${set.join(' and ')} ${set.length === 1 ? 'is' : 'are'} set without ${missing.join(' and ')}, so queue "${queue}" has no scheduling and ${set.length === 1 ? 'it' : 'they'} would be ignored: check the queue name in the variable (${complete.length > 0 ? `queues with complete scheduling: ${complete.join(', ')}` : 'no queue has complete scheduling'}); jobQueue.grantScheduleJobs(fn) sets the three together`;
    });
    throw new JobClientError(`invalid scheduling environment (schedulingFromEnv): ${problems.join('; ')}`, {
      code: 'InvalidOptions',
      senderFault: true,
      problems: problems.map((message) => ({ index: 0, type: undefined, message })),
    });
  }
  const table = env[IDEMPOTENCY_TABLE_ENV]?.trim();
  return { queues, ...(table ? { idempotencyTableName: table } : {}) };
}

/**
 * Whether `value` is a DynamoDB table name: 3-255 of a-z A-Z 0-9 _ . - (DynamoDB developer guide,
 * "Naming rules").
 */
export function isTableName(value: unknown): value is string {
  return typeof value === 'string' && /^[a-zA-Z0-9_.-]{3,255}$/.test(value);
}

/** The problems of a `scheduling` option (empty when it is fine or absent). */
export function schedulingProblems(scheduling: unknown): string[] {
  if (scheduling === undefined) return [];
  if (!isPlainObject(scheduling)) {
    return [
      `scheduling must be an object { queues: { <name>: { groupName, roleArn } }, idempotencyTableName } (or schedulingFromEnv()), got ${describeValue(scheduling)}`,
    ];
  }
  const problems = unknownKeyProblems(scheduling, SCHEDULING_KEYS, 'scheduling');
  const table = scheduling.idempotencyTableName;
  if (table !== undefined && !isTableName(table)) {
    problems.push(
      `scheduling.idempotencyTableName must be a DynamoDB table name (3-255 of a-z A-Z 0-9 _ . -), got ${describeValue(table)}`,
    );
  }
  const queues = scheduling.queues;
  if (queues === undefined) return problems;
  if (!isPlainObject(queues)) {
    problems.push(
      `scheduling.queues must be an object of logical queue name → { groupName, roleArn }, got ${describeValue(queues)}`,
    );
    return problems;
  }
  for (const [name, queue] of Object.entries(queues)) {
    const where = `scheduling.queues.${name}`;
    if (!isPlainObject(queue)) {
      problems.push(`${where} must be an object { groupName, roleArn }, got ${describeValue(queue)}`);
      continue;
    }
    problems.push(...unknownKeyProblems(queue, QUEUE_KEYS, where));
    if (typeof queue.groupName !== 'string' || !GROUP_NAME.test(queue.groupName)) {
      problems.push(
        `${where}.groupName must be a schedule group name (1-64 of 0-9 a-z A-Z - _ .), got ${describeValue(queue.groupName)}`,
      );
    }
    if (typeof queue.roleArn !== 'string' || !ROLE_ARN.test(queue.roleArn)) {
      problems.push(
        `${where}.roleArn must be an IAM role ARN (arn:aws:iam::<account>:role/<name>), got ${describeValue(queue.roleArn)}`,
      );
    }
    if (
      queue.queueArn !== undefined &&
      (typeof queue.queueArn !== 'string' || !QUEUE_ARN.test(queue.queueArn))
    ) {
      problems.push(
        `${where}.queueArn must be an SQS queue ARN (arn:aws:sqs:<region>:<account>:<name>), got ${describeValue(queue.queueArn)}`,
      );
    }
    if (
      queue.deadLetterQueueArn !== undefined &&
      (typeof queue.deadLetterQueueArn !== 'string' || !STANDARD_QUEUE_ARN.test(queue.deadLetterQueueArn))
    ) {
      problems.push(
        `${where}.deadLetterQueueArn must be the ARN of a standard SQS queue (arn:aws:sqs:<region>:<account>:<name>; EventBridge Scheduler takes no FIFO dead-letter queue): jobQueue.scheduleDeadLetterQueue.queueArn, got ${describeValue(queue.deadLetterQueueArn)}`,
      );
    }
  }
  return problems;
}

/** Why a queue cannot take jobs as schedules: what to set, for the error of a send. */
export function missingQueueScheduling(queue: string): string {
  return `no scheduling for queue "${queue}": a job due in more than 15 minutes, or on a FIFO queue, goes as an EventBridge schedule; set ${scheduleGroupEnvName(queue)} and ${schedulerRoleEnvName(queue)} (jobQueue.grantScheduleJobs(fn) does) and pass scheduling: schedulingFromEnv(), or pass scheduling: { queues: { ${JSON.stringify(queue)}: { groupName, roleArn } } }`;
}

/** The warning, once per queue, of a producer whose schedules have no dead-letter queue. */
export function missingScheduleDeadLetterQueue(queue: string): string {
  return `sqs-jobs: scheduling.queues.${queue} has no deadLetterQueueArn: a job sent for later to queue "${queue}" whose delivery EventBridge Scheduler gives up on (185 retries within 24 hours, e.g. the queue deleted or its key disabled) is dropped with no trace; set ${scheduleDlqArnEnvName(queue)} (jobQueue.grantScheduleJobs(fn) does) or pass deadLetterQueueArn: jobQueue.scheduleDeadLetterQueue.queueArn`;
}

/** Why no job can be sent for later: the table is not set. */
export function missingStateTable(): string {
  return `no idempotency table for the state of jobs sent for later: set ${IDEMPOTENCY_TABLE_ENV} (jobQueue.grantScheduleJobs(fn) does) and pass scheduling: schedulingFromEnv(), or pass scheduling: { idempotencyTableName }`;
}

/**
 * The ARN of the queue at `queueUrl`: `arn:<partition>:sqs:<region>:<account>:<name>`. The
 * region is the host's (`sqs.<region>.amazonaws.com[.cn]`, `<region>.queue.amazonaws.com`), else
 * `fallbackRegion`; the account and name are the path's (`/<account>/<name>`); the partition is
 * the role ARN's (`aws`, `aws-cn`, `aws-us-gov`).
 * @throws {Error} when the URL path is not `/<12-digit account>/<queue name>` or no region is known.
 */
export function queueArnOf(queueUrl: string, roleArn: string, fallbackRegion: string | undefined): string {
  const url = new URL(queueUrl);
  const [, account, name] = /^\/(\d{12})\/([^/]+)$/.exec(url.pathname) ?? [];
  const region =
    /^sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(url.hostname)?.[1] ??
    /^([a-z0-9-]+)\.queue\.amazonaws\.com(\.cn)?$/.exec(url.hostname)?.[1] ??
    fallbackRegion;
  const partition = /^arn:(aws[a-z-]*):/.exec(roleArn)?.[1] ?? 'aws';
  if (account === undefined || name === undefined || region === undefined) {
    throw new Error(
      `cannot tell the ARN of queue ${queueUrl} (a path /<account id>/<queue name> and a region in the host or AWS_REGION are needed): give scheduling.queues.<name>.queueArn`,
    );
  }
  return `arn:${partition}:sqs:${region}:${account}:${name}`;
}
