/**
 * What an operator sees of time (`sqs-jobs schedules`, the console's schedules page): the jobs sent
 * for later that are still pending (their state items in the idempotency table, or their one-time
 * schedules), the recurring schedules of the queues' schedule groups with their next firings in
 * their own time zone, and the recent firings of a recurring schedule with where each job went.
 * Reads only; cancelling is {@link cancelScheduledJob} (the `JobClient.cancel` path), firing is
 * lib/ops/fire-schedule.ts.
 *
 * Sources and their limits:
 * - EventBridge Scheduler has no firing history API (API reference: the actions are Create / Get /
 *   Update / Delete / List of schedules and groups, and tags): a firing is known by the job it
 *   sent. A recurring schedule's job id is `<name>@<scheduled time>`
 *   (lib/constructs/job-queue/recurring-jobs.ts), so the job records whose key starts with the
 *   schedule's type, source and `<name>@` are its firings that reached a worker. A firing Scheduler
 *   could not deliver is in the schedule dead-letter queue instead (`sqs-jobs dlq list`).
 * - A Scan reads the whole table (paid by the items read, DynamoDB developer guide "Scan"):
 *   these reads are for operators, at most {@link MAX_SCAN_PAGES} pages each.
 * - A one-time schedule deletes itself after firing (`ActionAfterCompletion: DELETE`), so only
 *   jobs not yet due are listed from Scheduler; the state items also keep started and cancelled
 *   jobs for 14 days after their time.
 */
import { type AttributeValue, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  ListScheduleGroupsCommand,
  type ListScheduleGroupsCommandOutput,
  ListSchedulesCommand,
  type ListSchedulesCommandOutput,
} from '@aws-sdk/client-scheduler';
import { ScheduledJobs } from '../client/scheduled-jobs.ts';
import type { CancelResult, DynamoDbSender, SchedulerSender } from '../client/scheduling.ts';
import {
  nextFirings,
  parseScheduleExpression,
  type ScheduleExpression,
  wallClockOf,
} from '../core/schedule-expression.ts';
import {
  isExpiredState,
  ONE_TIME_SCHEDULE_PREFIX,
  parseScheduledJobItem,
  SCHEDULED_JOB_PK_PREFIX,
  type ScheduledJobState,
  scheduledJobKey,
} from '../core/scheduled-job.ts';
import { isManualScheduledTime } from '../core/scheduler-context.ts';
import { defaultJobKey, jobRecordKey } from '../runtime/idempotency/keys.ts';
import { type JobRecordStatus, parseJobRecord } from '../runtime/idempotency/record.ts';
import { OpsError } from './errors.ts';
import { tableReadError } from './table-errors.ts';

/** Most Scan pages (1 MB each) read by one listing before it is cut short. */
export const MAX_SCAN_PAGES = 20;
/** Next firings shown per recurring schedule by default. */
export const DEFAULT_NEXT_FIRINGS = 5;
/** Recent firings shown per recurring schedule by default. */
export const DEFAULT_RECENT_FIRINGS = 10;
/** The group EventBridge Scheduler makes in every account; sqs-jobs never uses it. */
export const DEFAULT_SCHEDULE_GROUP = 'default';

/** The clients and names the reads need. */
export interface SchedulesSource {
  /** The Scheduler API (AWS, or the local emulator: `AWS_ENDPOINT_URL_SCHEDULER`). */
  readonly scheduler: SchedulerSender | undefined;
  /** Schedule groups to read (`jobQueue.scheduleGroupName`). */
  readonly groups: readonly string[];
  readonly dynamodb?: DynamoDbSender | undefined;
  /** The idempotency table: state items of one-time jobs, job records of firings. */
  readonly table?: string | undefined;
  /** Shown in errors: where DynamoDB is (undefined: AWS). */
  readonly dynamodbEndpoint?: string | undefined;
  /** Shown in errors: where Scheduler is (undefined: AWS). */
  readonly schedulerEndpoint?: string | undefined;
}

/** A job sent for later, as listed. */
export interface PendingJob {
  readonly jobId: string;
  readonly source: string;
  /** Logical queue name (from the state item), or the target queue's name (from a schedule). */
  readonly queue: string;
  readonly type: string;
  /** For whom: the envelope's `partitionkey`. */
  readonly partitionKey: string | undefined;
  /** When it is due, RFC 3339 UTC. */
  readonly runAt: string;
  /** `schedule`: a one-time EventBridge schedule; `delay`: an SQS message with DelaySeconds. */
  readonly via: 'schedule' | 'delay';
  readonly scheduleName: string | undefined;
  /** Undefined when listed from Scheduler without the state item. */
  readonly state: ScheduledJobState['state'] | undefined;
  readonly generation: number | undefined;
  /** Where this row was read: the state item, or the schedule. */
  readonly from: 'state' | 'schedule';
}

/** A recurring schedule, as listed and shown. */
export interface RecurringScheduleView {
  readonly name: string;
  readonly groupName: string;
  readonly arn: string;
  readonly expression: string;
  readonly timeZone: string;
  readonly state: string;
  readonly description: string | undefined;
  /** The target's ARN (an SQS queue) and its name. */
  readonly targetArn: string;
  readonly queueName: string | undefined;
  /** From the target's Input (the job envelope); undefined when it is not one. */
  readonly jobType: string | undefined;
  readonly jobSource: string | undefined;
  readonly partitionKey: string | undefined;
  /** The target's Input as written (context attributes not substituted). */
  readonly input: string;
  readonly messageGroupId: string | undefined;
  readonly retryPolicy: { readonly maximumEventAgeSeconds?: number; readonly maximumRetryAttempts?: number };
  readonly deadLetterArn: string | undefined;
  readonly flexibleWindowMinutes: number | undefined;
  readonly startDate: string | undefined;
  readonly endDate: string | undefined;
  /** The next firings: UTC instant and the wall-clock time in the schedule's time zone. */
  readonly nextFirings: readonly { readonly at: string; readonly local: string }[];
  /** Why the next firings could not be computed (an expression this version cannot read). */
  readonly nextFiringsError: string | undefined;
}

/** One firing of a recurring schedule that reached a worker (its job record). */
export interface FiringView {
  readonly jobId: string;
  /** The scheduled time in the job id (`<aws.scheduler.scheduled-time>`). */
  readonly scheduledTime: string;
  /** An operator's "fire now" (a scheduled time with milliseconds). */
  readonly manual: boolean;
  readonly status: JobRecordStatus;
  /** Where the job went, in words: done, failed (dead-lettered), running or waiting for a retry. */
  readonly outcome: string;
  readonly attempts: number;
  /** When its run ended (or the last one did), RFC 3339. */
  readonly endedAt: string | undefined;
  readonly lastError: string | undefined;
}

/** What {@link listSchedules} found. */
export interface SchedulesList {
  readonly groups: readonly string[];
  readonly pending: readonly PendingJob[];
  readonly recurring: readonly RecurringScheduleView[];
  /** What could not be read or was cut short, in words. */
  readonly notes: readonly string[];
}

/** Wraps a Scheduler error in an {@link OpsError} that says what to check. */
export function schedulerError(error: unknown, endpoint: string | undefined, what: string): OpsError {
  if (error instanceof OpsError) return error;
  const name = (error as { name?: unknown })?.name;
  const message = error instanceof Error ? error.message : String(error);
  const where = endpoint === undefined ? 'on AWS' : `at ${endpoint}`;
  if (name === 'ResourceNotFoundException') {
    return new OpsError(`${what}: not found ${where} (${message}); check --group and the region`, {
      code: 'ScheduleNotFound',
      cause: error,
    });
  }
  const code = (error as { code?: unknown })?.code;
  const hint =
    typeof code === 'string' && /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ECONNRESET/.test(code)
      ? ': check --scheduler-endpoint (or AWS_ENDPOINT_URL_SCHEDULER: `sqs-jobs local` prints it) and that it is running'
      : '';
  return new OpsError(
    `${what}: EventBridge Scheduler ${where} failed (${typeof name === 'string' ? `${name}: ` : ''}${typeof code === 'string' ? `${code} ` : ''}${message})${hint}`,
    { code: 'SchedulerRequestFailed', cause: error },
  );
}

/**
 * The schedule groups at a Scheduler endpoint, except AWS's `default` (ListScheduleGroups, every
 * page). Meant for the local emulator, whose groups are the stack's; on AWS an account holds other
 * projects' groups: name them.
 */
export async function listScheduleGroups(scheduler: SchedulerSender, endpoint?: string): Promise<string[]> {
  const names: string[] = [];
  let token: string | undefined;
  try {
    do {
      const page = (await scheduler.send(
        new ListScheduleGroupsCommand(token === undefined ? {} : { NextToken: token }),
      )) as ListScheduleGroupsCommandOutput;
      for (const group of page.ScheduleGroups ?? [])
        if (group.Name !== undefined && group.Name !== DEFAULT_SCHEDULE_GROUP) names.push(group.Name);
      token = page.NextToken;
    } while (token !== undefined);
  } catch (error) {
    throw schedulerError(error, endpoint, 'list the schedule groups');
  }
  return names.sort();
}

/** The names of every schedule of a group (ListSchedules, every page). */
async function scheduleNames(scheduler: SchedulerSender, group: string): Promise<string[]> {
  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = (await scheduler.send(
      new ListSchedulesCommand({ GroupName: group, ...(token === undefined ? {} : { NextToken: token }) }),
    )) as ListSchedulesCommandOutput;
    for (const s of page.Schedules ?? []) if (s.Name !== undefined) names.push(s.Name);
    token = page.NextToken;
  } while (token !== undefined);
  return names.sort();
}

/** GetSchedule, or undefined when the group has no such schedule. */
async function getSchedule(
  scheduler: SchedulerSender,
  name: string,
  group: string,
): Promise<GetScheduleCommandOutput | undefined> {
  try {
    return (await scheduler.send(
      new GetScheduleCommand({ Name: name, GroupName: group }),
    )) as GetScheduleCommandOutput;
  } catch (error) {
    if ((error as { name?: unknown })?.name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

/** The job envelope of a target Input, when it is one (a JSON object). */
function envelopeOf(input: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(input) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const isoOf = (date: Date | undefined): string | undefined => date?.toISOString();

/** The view of a recurring schedule, with its next `count` firings after `now`. */
export function recurringView(
  schedule: GetScheduleCommandOutput,
  now: Date,
  count: number,
): RecurringScheduleView {
  const target = schedule.Target;
  const input = target?.Input ?? '';
  const envelope = envelopeOf(input);
  const timeZone = schedule.ScheduleExpressionTimezone ?? 'UTC';
  const expression = schedule.ScheduleExpression ?? '';
  let next: { at: string; local: string }[] = [];
  let nextFiringsError: string | undefined;
  if (schedule.State !== 'DISABLED') {
    try {
      const parsed: ScheduleExpression = parseScheduleExpression(expression);
      next = nextFirings(parsed, {
        timeZone,
        after: now,
        count,
        ...(schedule.StartDate === undefined ? {} : { startDate: schedule.StartDate }),
        ...(schedule.EndDate === undefined ? {} : { endDate: schedule.EndDate }),
      }).map((at) => ({ at: at.toISOString(), local: wallClockOf(at, timeZone) }));
    } catch (error) {
      nextFiringsError = error instanceof Error ? error.message : String(error);
    }
  }
  const targetArn = target?.Arn ?? '';
  const window = schedule.FlexibleTimeWindow;
  return {
    name: schedule.Name ?? '',
    groupName: schedule.GroupName ?? '',
    arn: schedule.Arn ?? '',
    expression,
    timeZone,
    state: schedule.State ?? 'ENABLED',
    description: schedule.Description,
    targetArn,
    queueName: targetArn.split(':')[5],
    jobType: text(envelope?.type),
    jobSource: text(envelope?.source),
    partitionKey: text(envelope?.partitionkey),
    input,
    messageGroupId: target?.SqsParameters?.MessageGroupId,
    retryPolicy: {
      ...(target?.RetryPolicy?.MaximumEventAgeInSeconds === undefined
        ? {}
        : { maximumEventAgeSeconds: target.RetryPolicy.MaximumEventAgeInSeconds }),
      ...(target?.RetryPolicy?.MaximumRetryAttempts === undefined
        ? {}
        : { maximumRetryAttempts: target.RetryPolicy.MaximumRetryAttempts }),
    },
    deadLetterArn: target?.DeadLetterConfig?.Arn,
    flexibleWindowMinutes: window?.Mode === 'FLEXIBLE' ? window.MaximumWindowInMinutes : undefined,
    startDate: isoOf(schedule.StartDate),
    endDate: isoOf(schedule.EndDate),
    nextFirings: next,
    nextFiringsError,
  };
}

/** A pending job of a one-time schedule read from Scheduler (no state item at hand). */
function pendingOfSchedule(schedule: GetScheduleCommandOutput): PendingJob {
  const envelope = envelopeOf(schedule.Target?.Input ?? '') ?? {};
  const at = /^at\((.+)\)$/.exec(schedule.ScheduleExpression ?? '')?.[1];
  return {
    jobId: text(envelope.id) ?? '',
    source: text(envelope.source) ?? '',
    queue: (schedule.Target?.Arn ?? '').split(':')[5] ?? '',
    type: text(envelope.type) ?? '',
    partitionKey: text(envelope.partitionkey),
    runAt: at === undefined ? '' : `${at}Z`,
    via: 'schedule',
    scheduleName: schedule.Name,
    state: undefined,
    generation: Number(text(envelope.schedulegeneration) ?? 1),
    from: 'schedule',
  };
}

/** A pending job of a state item. */
function pendingOfState(state: ScheduledJobState): PendingJob {
  return {
    jobId: state.jobId,
    source: state.source,
    queue: state.queue,
    type: state.type,
    partitionKey: state.partitionKey,
    runAt: state.runAt,
    via: state.via,
    scheduleName: state.scheduleName,
    state: state.state,
    generation: state.generation,
    from: 'state',
  };
}

/** Scans the table with a filter, every page up to {@link MAX_SCAN_PAGES}. */
async function scan(
  source: SchedulesSource,
  filter: string,
  names: Record<string, string>,
  values: Record<string, AttributeValue>,
): Promise<{ items: Record<string, AttributeValue>[]; truncated: boolean }> {
  const { dynamodb, table } = source;
  if (dynamodb === undefined || table === undefined) return { items: [], truncated: false };
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  let pages = 0;
  try {
    do {
      const out = (await dynamodb.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: filter,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      )) as { Items?: Record<string, AttributeValue>[]; LastEvaluatedKey?: Record<string, AttributeValue> };
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
      pages += 1;
    } while (start !== undefined && pages < MAX_SCAN_PAGES);
  } catch (error) {
    throw tableReadError(error, table, source.dynamodbEndpoint);
  }
  return { items, truncated: start !== undefined };
}

/** The state items of jobs sent for later (all states, or only `state`), not expired. */
async function stateItems(
  source: SchedulesSource,
  nowMs: number,
  only?: { readonly state?: string; readonly jobId?: string },
): Promise<{ states: ScheduledJobState[]; truncated: boolean }> {
  const names: Record<string, string> = { '#pk': 'pk' };
  const values: Record<string, AttributeValue> = { ':prefix': { S: `${SCHEDULED_JOB_PK_PREFIX}job#` } };
  let filter = 'begins_with(#pk, :prefix)';
  if (only?.state !== undefined) {
    names['#state'] = 'state';
    values[':state'] = { S: only.state };
    filter += ' AND #state = :state';
  }
  if (only?.jobId !== undefined) {
    names['#jobId'] = 'jobId';
    values[':jobId'] = { S: only.jobId };
    filter += ' AND #jobId = :jobId';
  }
  const { items, truncated } = await scan(source, filter, names, values);
  const states: ScheduledJobState[] = [];
  for (const item of items) {
    try {
      const state = parseScheduledJobItem(item);
      if (!isExpiredState(state, nowMs)) states.push(state);
    } catch {
      // An item of a newer format: not this version's to show.
    }
  }
  return { states: states.sort((a, b) => a.runAtMs - b.runAtMs), truncated };
}

/** Options of {@link listSchedules}. */
export interface ListSchedulesOptions {
  /** Next firings per recurring schedule. @default {@link DEFAULT_NEXT_FIRINGS} */
  readonly next?: number;
  /** @default Date.now() */
  readonly nowMs?: number;
}

/**
 * Pending one-time jobs and the recurring schedules of the source's groups. Pending jobs come from
 * the state items when a table is given (every job sent for later, with DelaySeconds too), else
 * from the groups' one-time schedules (`sj-` names: only those going as a schedule).
 * @throws {OpsError} when Scheduler or the table cannot be read.
 */
export async function listSchedules(
  source: SchedulesSource,
  options: ListSchedulesOptions = {},
): Promise<SchedulesList> {
  const nowMs = options.nowMs ?? Date.now();
  const now = new Date(nowMs);
  const count = options.next ?? DEFAULT_NEXT_FIRINGS;
  const notes: string[] = [];
  const pending: PendingJob[] = [];
  const recurring: RecurringScheduleView[] = [];
  const fromState = source.dynamodb !== undefined && source.table !== undefined;
  if (fromState) {
    const { states, truncated } = await stateItems(source, nowMs, { state: 'pending' });
    pending.push(...states.map(pendingOfState));
    if (truncated) notes.push(`pending jobs: the table scan stopped after ${MAX_SCAN_PAGES} pages`);
  } else {
    notes.push(
      'pending jobs are listed from the one-time schedules (no --idempotency-table): a job due within 15 minutes on a standard queue travels as a delayed SQS message and is not listed',
    );
  }
  if (source.scheduler !== undefined) {
    for (const group of source.groups) {
      try {
        for (const name of await scheduleNames(source.scheduler, group)) {
          const oneTime = name.startsWith(ONE_TIME_SCHEDULE_PREFIX);
          if (oneTime && fromState) continue;
          const schedule = await getSchedule(source.scheduler, name, group);
          // Gone between the list and the get: a one-time schedule that fired.
          if (schedule === undefined) continue;
          if (oneTime) pending.push(pendingOfSchedule(schedule));
          else recurring.push(recurringView(schedule, now, count));
        }
      } catch (error) {
        throw schedulerError(error, source.schedulerEndpoint, `list the schedules of group ${group}`);
      }
    }
  } else {
    notes.push('recurring schedules: no EventBridge Scheduler endpoint given');
  }
  if (source.groups.length === 0 && source.scheduler !== undefined)
    notes.push('no schedule group given (--group): recurring schedules are not listed');
  pending.sort((a, b) => a.runAt.localeCompare(b.runAt));
  return { groups: source.groups, pending, recurring, notes };
}

/** The outcome of a job record, in words. */
function outcomeOf(status: JobRecordStatus): string {
  switch (status) {
    case 'COMPLETED':
      return 'done';
    case 'FAILED':
      return 'failed: dead-lettered (sqs-jobs dlq list)';
    case 'RELEASED':
      return 'waiting for a retry';
    default:
      return 'running (or its run was cut short and it waits for a retry)';
  }
}

/**
 * The firings of a recurring schedule that reached a worker, newest first: the job records whose
 * key starts `<type>#<source>\n<name>@`. Needs the table; empty without it.
 * @throws {OpsError} when the table cannot be read.
 */
export async function recentFirings(
  source: SchedulesSource,
  schedule: Pick<RecurringScheduleView, 'name' | 'jobType' | 'jobSource'>,
  max = DEFAULT_RECENT_FIRINGS,
): Promise<{ firings: FiringView[]; truncated: boolean }> {
  if (schedule.jobType === undefined || schedule.jobSource === undefined)
    return { firings: [], truncated: false };
  const prefix = jobRecordKey(schedule.jobType, defaultJobKey(schedule.jobSource, `${schedule.name}@`));
  const { items, truncated } = await scan(
    source,
    'begins_with(#pk, :prefix) AND #recordType = :job',
    { '#pk': 'pk', '#recordType': 'recordType' },
    { ':prefix': { S: prefix }, ':job': { S: 'job' } },
  );
  const firings: FiringView[] = [];
  for (const item of items) {
    try {
      const record = parseJobRecord(item);
      const jobId = `${schedule.name}@${record.pk.slice(prefix.length)}`;
      const scheduledTime = jobId.slice(schedule.name.length + 1);
      firings.push({
        jobId,
        scheduledTime,
        manual: isManualScheduledTime(scheduledTime),
        status: record.status,
        outcome: outcomeOf(record.status),
        attempts: record.attempt,
        endedAt: record.endedAtMs === undefined ? undefined : new Date(record.endedAtMs).toISOString(),
        lastError: record.lastError,
      });
    } catch {
      // A record of another format: skipped.
    }
  }
  firings.sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime));
  return { firings: firings.slice(0, max), truncated };
}

/** A one-time job in detail: its state item and, when it goes as one, its schedule. */
export interface ScheduledJobDetail {
  readonly kind: 'job';
  readonly state: ScheduledJobState;
  /** The envelope of the current generation as sent (generation 1's body). */
  readonly envelope: Record<string, unknown> | undefined;
  /** Its one-time schedule, when it is still there (gone once fired). */
  readonly schedule: RecurringScheduleView | undefined;
}

/** A recurring schedule in detail, with its recent firings. */
export interface RecurringDetail {
  readonly kind: 'recurring';
  readonly schedule: RecurringScheduleView;
  readonly firings: readonly FiringView[];
  /** Why no firing can be listed (no table), or that the list is cut short. */
  readonly firingsNote: string | undefined;
}

/**
 * Finds the state item of a job sent for later: by its key when `source` is given, else by a Scan
 * for its id (several sources may use one id: then the first, with a note).
 */
export async function findScheduledJob(
  source: SchedulesSource,
  jobId: string,
  options: { readonly source?: string; readonly nowMs?: number } = {},
): Promise<{ state: ScheduledJobState | undefined; others: number }> {
  const nowMs = options.nowMs ?? Date.now();
  const { dynamodb, table } = source;
  if (dynamodb === undefined || table === undefined) return { state: undefined, others: 0 };
  if (options.source !== undefined) {
    let out: { Item?: Record<string, AttributeValue> };
    try {
      out = (await dynamodb.send(
        new GetItemCommand({
          TableName: table,
          Key: { pk: { S: scheduledJobKey(options.source, jobId) } },
          ConsistentRead: true,
        }),
      )) as { Item?: Record<string, AttributeValue> };
    } catch (error) {
      throw tableReadError(error, table, source.dynamodbEndpoint);
    }
    if (out.Item === undefined) return { state: undefined, others: 0 };
    const state = parseScheduledJobItem(out.Item);
    return { state: isExpiredState(state, nowMs) ? undefined : state, others: 0 };
  }
  const { states } = await stateItems(source, nowMs, { jobId });
  return { state: states[0], others: Math.max(0, states.length - 1) };
}

/**
 * One schedule (by name, in the source's groups) or one job sent for later (by id) in detail.
 * @returns undefined when neither exists.
 * @throws {OpsError} when Scheduler or the table cannot be read.
 */
export async function showSchedule(
  source: SchedulesSource,
  nameOrJobId: string,
  options: {
    readonly source?: string;
    readonly next?: number;
    readonly recent?: number;
    readonly nowMs?: number;
  } = {},
): Promise<RecurringDetail | ScheduledJobDetail | undefined> {
  const nowMs = options.nowMs ?? Date.now();
  const now = new Date(nowMs);
  const count = options.next ?? DEFAULT_NEXT_FIRINGS;
  if (source.scheduler !== undefined && !nameOrJobId.startsWith(ONE_TIME_SCHEDULE_PREFIX)) {
    for (const group of source.groups) {
      let schedule: GetScheduleCommandOutput | undefined;
      try {
        schedule = await getSchedule(source.scheduler, nameOrJobId, group);
      } catch (error) {
        throw schedulerError(error, source.schedulerEndpoint, `read schedule ${group}/${nameOrJobId}`);
      }
      if (schedule === undefined) continue;
      const view = recurringView(schedule, now, count);
      const hasTable = source.dynamodb !== undefined && source.table !== undefined;
      const { firings, truncated } = hasTable
        ? await recentFirings(source, view, options.recent)
        : { firings: [], truncated: false };
      return {
        kind: 'recurring',
        schedule: view,
        firings,
        firingsNote: !hasTable
          ? 'recent firings need the idempotency table (--idempotency-table): EventBridge Scheduler keeps no firing history'
          : view.jobType === undefined
            ? 'the target Input is not a job envelope: its firings cannot be found'
            : truncated
              ? `the table scan stopped after ${MAX_SCAN_PAGES} pages`
              : undefined,
      };
    }
  }
  const found = await findScheduledJob(source, nameOrJobId, options);
  let state = found.state;
  let schedule: GetScheduleCommandOutput | undefined;
  // A one-time schedule named directly (sj-...): read it, then its state item through its Input.
  if (
    state === undefined &&
    source.scheduler !== undefined &&
    nameOrJobId.startsWith(ONE_TIME_SCHEDULE_PREFIX)
  ) {
    for (const group of source.groups) {
      schedule = await getSchedule(source.scheduler, nameOrJobId, group).catch((error: unknown) => {
        throw schedulerError(error, source.schedulerEndpoint, `read schedule ${group}/${nameOrJobId}`);
      });
      if (schedule !== undefined) break;
    }
    if (schedule !== undefined) {
      const pending = pendingOfSchedule(schedule);
      state = (await findScheduledJob(source, pending.jobId, { source: pending.source, nowMs })).state;
      if (state === undefined) {
        return {
          kind: 'job',
          state: {
            pk: scheduledJobKey(pending.source, pending.jobId),
            state: 'pending',
            generation: pending.generation ?? 1,
            runAt: pending.runAt,
            runAtMs: Date.parse(pending.runAt),
            queue: pending.queue,
            type: pending.type,
            source: pending.source,
            jobId: pending.jobId,
            ...(pending.partitionKey === undefined ? {} : { partitionKey: pending.partitionKey }),
            via: 'schedule',
            scheduleName: pending.scheduleName as string,
            body: schedule.Target?.Input ?? '',
            expiresAt: 0,
          },
          envelope: envelopeOf(schedule.Target?.Input ?? ''),
          schedule: recurringView(schedule, now, 1),
        };
      }
    }
  }
  if (state === undefined) return undefined;
  if (
    schedule === undefined &&
    state.via === 'schedule' &&
    state.scheduleName !== undefined &&
    source.scheduler
  ) {
    for (const group of source.groups) {
      schedule = await getSchedule(source.scheduler, state.scheduleName, group).catch(() => undefined);
      if (schedule !== undefined) break;
    }
  }
  return {
    kind: 'job',
    state,
    envelope: envelopeOf(state.body),
    schedule: schedule === undefined ? undefined : recurringView(schedule, now, 1),
  };
}

/** What {@link cancelScheduledJob} did: `JobClient.cancel`'s answer. */
export type CancelScheduledJobResult = CancelResult & { readonly source?: string; readonly type?: string };

/**
 * Cancels a job sent for later by its identity, through `JobClient.cancel`'s path (a conditional
 * write of its state item to `cancelled`, then the delete of its one-time schedule): a cancelled
 * job never runs, whether its schedule fired or not.
 * @param jobId the job's envelope id; `options.source` its source (else found by a Scan for the id).
 * @throws {OpsError} without a table, or when the table or Scheduler cannot be reached.
 */
export async function cancelScheduledJob(
  source: SchedulesSource,
  jobId: string,
  options: { readonly source?: string; readonly nowMs?: () => number } = {},
): Promise<CancelScheduledJobResult> {
  const { dynamodb, table } = source;
  if (dynamodb === undefined || table === undefined)
    throw new OpsError(
      "cancel needs the idempotency table that keeps the job's state: give --idempotency-table (stack output IdempotencyTableName) or --local",
      { code: 'TableReadFailed' },
    );
  const now = options.nowMs ?? Date.now;
  const found = await findScheduledJob(source, jobId, { ...options, nowMs: now() });
  const state = found.state;
  if (state === undefined) return { status: 'not-found', id: jobId, queue: '' };
  // The schedule group holding its schedule: the JobClient knows it from its environment; here it is found.
  let groupName: string | undefined;
  if (state.via === 'schedule' && state.scheduleName !== undefined && source.scheduler !== undefined) {
    for (const group of source.groups) {
      const schedule = await getSchedule(source.scheduler, state.scheduleName, group).catch(() => undefined);
      if (schedule !== undefined) {
        groupName = group;
        break;
      }
    }
  }
  const jobs = new ScheduledJobs({
    source: state.source,
    queueUrls: {},
    scheduling: {
      idempotencyTableName: table,
      ...(groupName === undefined ? {} : { queues: { [state.queue]: { groupName, roleArn: '' } } }),
    },
    scheduler: source.scheduler,
    dynamodb,
    now,
    sendNow: async () => ({ sent: [], failed: [] }),
  });
  try {
    const result = await jobs.cancel({ queue: state.queue, id: state.jobId, source: state.source });
    return { ...result, source: state.source, type: state.type };
  } catch (error) {
    throw tableReadError(error, table, source.dynamodbEndpoint);
  }
}
