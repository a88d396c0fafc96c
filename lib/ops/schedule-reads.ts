/**
 * The reads under `sqs-jobs schedules` and the console's schedules page (lib/ops/schedules.ts):
 * EventBridge Scheduler's groups and schedules (ListScheduleGroups, ListSchedules, GetSchedule),
 * a schedule as a view with its next firings in its own time zone, and the state items of jobs
 * sent for later in the idempotency table (lib/core/scheduled-job.ts), by Scan or by key. Errors
 * become {@link OpsError}s that say what to check.
 *
 * A Scan reads the whole table (paid by the items read, DynamoDB developer guide "Scan"): these
 * reads are for operators, at most {@link MAX_SCAN_PAGES} pages each.
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
import type { DynamoDbSender, SchedulerSender } from '../client/scheduling.ts';
import {
  nextFirings,
  parseScheduleExpression,
  type ScheduleExpression,
  wallClockOf,
} from '../core/schedule-expression.ts';
import {
  isExpiredState,
  parseScheduledJobItem,
  SCHEDULED_JOB_PK_PREFIX,
  type ScheduledJobState,
  scheduledJobKey,
} from '../core/scheduled-job.ts';
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
      : /Region is missing/i.test(message)
        ? ': give --region (or set AWS_REGION), or --local / --scheduler-endpoint for a local run'
        : /credential/i.test(message) || name === 'CredentialsProviderError'
          ? ': configure AWS credentials (AWS_PROFILE or --profile, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)'
          : name === 'AccessDeniedException'
            ? ': the caller needs scheduler:ListScheduleGroups, scheduler:ListSchedules and scheduler:GetSchedule (docs/operations.md, "Schedules")'
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
export async function scheduleNames(scheduler: SchedulerSender, group: string): Promise<string[]> {
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
export async function getSchedule(
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
export function envelopeOf(input: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(input) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
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
export function pendingOfSchedule(schedule: GetScheduleCommandOutput): PendingJob {
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
export function pendingOfState(state: ScheduledJobState): PendingJob {
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
export async function scan(
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
export async function stateItems(
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

/**
 * The refusal of a job id that several sources' jobs sent for later share (ids are unique per
 * source only): `show` and `cancel` never pick one by guess.
 */
export function ambiguousJobId(jobId: string, sources: readonly string[]): OpsError {
  return new OpsError(
    `several jobs sent for later have the id ${jobId} (sources ${sources.join(', ')}): give the job's --source`,
    { code: 'AmbiguousJobId' },
  );
}

/**
 * Finds the state item of a job sent for later: by its key when `source` is given, else by a Scan
 * for its id. Ids are unique per source only: `sources` lists the source of every job found with
 * the id (the first due is `state`), so a caller can refuse to pick between several.
 */
export async function findScheduledJob(
  source: SchedulesSource,
  jobId: string,
  options: { readonly source?: string; readonly nowMs?: number } = {},
): Promise<{ state: ScheduledJobState | undefined; sources: readonly string[] }> {
  const nowMs = options.nowMs ?? Date.now();
  const { dynamodb, table } = source;
  if (dynamodb === undefined || table === undefined) return { state: undefined, sources: [] };
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
    if (out.Item === undefined) return { state: undefined, sources: [] };
    const state = parseScheduledJobItem(out.Item);
    return isExpiredState(state, nowMs)
      ? { state: undefined, sources: [] }
      : { state, sources: [state.source] };
  }
  const { states } = await stateItems(source, nowMs, { jobId });
  return { state: states[0], sources: states.map((s) => s.source) };
}
