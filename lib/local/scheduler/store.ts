/**
 * The schedules and schedule groups of the local Scheduler emulator, and the API's rules on them
 * (EventBridge Scheduler API reference: CreateSchedule, UpdateSchedule, GetSchedule,
 * DeleteSchedule, ListSchedules, and the schedule group actions): names 1–64 of
 * `[0-9a-zA-Z-_.]` unique per group, the `default` group, `ClientToken` idempotency, expressions
 * and time zones checked by lib/core/schedule-expression.ts, retry policy ranges, paging.
 *
 * What differs from AWS, on purpose: a target must be an SQS queue (the templated SQS target,
 * `arn:aws:sqs:...`), the only target the local runtime can deliver to; anything else is refused
 * with a `ValidationException` that says so, rather than accepted and never delivered.
 */
import {
  checkTimeZone,
  parseScheduleExpression,
  type ScheduleExpression,
  ScheduleExpressionError,
} from '../../core/schedule-expression.ts';
import { constraintError, groupNotFound, SchedulerApiError, scheduleNotFound } from './api-errors.ts';

/** A schedule's target as the API takes it (fields the emulator does not use are kept as given). */
export interface ScheduleTarget {
  readonly Arn: string;
  readonly RoleArn: string;
  readonly Input?: string;
  readonly SqsParameters?: { readonly MessageGroupId?: string };
  readonly RetryPolicy?: {
    readonly MaximumEventAgeInSeconds?: number;
    readonly MaximumRetryAttempts?: number;
  };
  readonly DeadLetterConfig?: { readonly Arn?: string };
  readonly [other: string]: unknown;
}

/** CreateSchedule / UpdateSchedule input (timestamps in epoch milliseconds). */
export interface ScheduleInput {
  readonly Name: string;
  readonly GroupName?: string;
  readonly ScheduleExpression: string;
  readonly ScheduleExpressionTimezone?: string;
  readonly StartDate?: number;
  readonly EndDate?: number;
  readonly Description?: string;
  readonly State?: string;
  readonly KmsKeyArn?: string;
  readonly Target: ScheduleTarget;
  readonly FlexibleTimeWindow: { readonly Mode: string; readonly MaximumWindowInMinutes?: number };
  readonly ActionAfterCompletion?: string;
  readonly ClientToken?: string;
}

/** A stored schedule. */
export interface Schedule {
  readonly Arn: string;
  readonly Name: string;
  readonly GroupName: string;
  readonly ScheduleExpression: string;
  readonly ScheduleExpressionTimezone: string;
  readonly StartDate?: number;
  readonly EndDate?: number;
  readonly Description?: string;
  readonly State: 'ENABLED' | 'DISABLED';
  readonly KmsKeyArn?: string;
  readonly Target: ScheduleTarget;
  readonly FlexibleTimeWindow: ScheduleInput['FlexibleTimeWindow'];
  readonly ActionAfterCompletion: 'NONE' | 'DELETE';
  /** Epoch milliseconds. */
  readonly CreationDate: number;
  readonly LastModificationDate: number;
  /** The parsed expression. */
  readonly expression: ScheduleExpression;
  /** Bumped by every update: a firing planned for an older version is dropped. */
  readonly version: number;
}

/** A stored schedule group. */
export interface ScheduleGroup {
  readonly Arn: string;
  readonly Name: string;
  readonly State: 'ACTIVE';
  readonly CreationDate: number;
  readonly LastModificationDate: number;
}

/** RetryPolicy when the target gives none (CreateSchedule API reference, RetryPolicy). */
export const DEFAULT_RETRY_POLICY = { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 } as const;

const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;
const SQS_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[a-zA-Z0-9\-_.]+$/;
const DEFAULT_GROUP = 'default';

/** What changed, for the firing engine. */
export type ScheduleChange =
  | { readonly kind: 'upsert'; readonly schedule: Schedule }
  | { readonly kind: 'delete'; readonly key: string };

/** Key of a schedule: `<group>/<name>`. */
export function scheduleKey(groupName: string, name: string): string {
  return `${groupName}/${name}`;
}

/** Options of {@link ScheduleStore}. */
export interface ScheduleStoreOptions {
  readonly region: string;
  readonly accountId: string;
  /** Epoch milliseconds now. */
  readonly now: () => number;
  /** Told of every created, updated and deleted schedule. */
  readonly onChange?: (change: ScheduleChange) => void;
}

/** The emulator's schedules and groups. */
export class ScheduleStore {
  private readonly schedules = new Map<string, Schedule>();
  private readonly groups = new Map<string, ScheduleGroup>();
  /** ClientToken → the request it came with and its answer. */
  private readonly tokens = new Map<string, { request: string; arn: string }>();
  private readonly options: ScheduleStoreOptions;

  constructor(options: ScheduleStoreOptions) {
    this.options = options;
    const now = options.now();
    this.groups.set(DEFAULT_GROUP, {
      Arn: this.groupArn(DEFAULT_GROUP),
      Name: DEFAULT_GROUP,
      State: 'ACTIVE',
      CreationDate: now,
      LastModificationDate: now,
    });
  }

  /** `arn:aws:scheduler:<region>:<account>:schedule/<group>/<name>`. */
  scheduleArn(groupName: string, name: string): string {
    return `arn:aws:scheduler:${this.options.region}:${this.options.accountId}:schedule/${groupName}/${name}`;
  }

  private groupArn(name: string): string {
    return `arn:aws:scheduler:${this.options.region}:${this.options.accountId}:schedule-group/${name}`;
  }

  /**
   * CreateSchedule. A repeated request with the same `ClientToken` and the same parameters
   * answers the first one's ARN again (whether or not the schedule still exists).
   * @throws {SchedulerApiError} ValidationException, ConflictException (name taken, or a token
   *   reused with other parameters), ResourceNotFoundException (no such group).
   */
  create(input: ScheduleInput): Schedule | { readonly Arn: string } {
    const groupName = input.GroupName ?? DEFAULT_GROUP;
    const token = input.ClientToken;
    const request = JSON.stringify({ ...input, ClientToken: undefined, GroupName: groupName });
    if (token !== undefined) {
      const seen = this.tokens.get(token);
      if (seen && seen.request === request) return { Arn: seen.arn };
      if (seen)
        throw new SchedulerApiError(
          'ConflictException',
          `ClientToken ${token} was already used with different parameters.`,
        );
    }
    const checked = this.check(input, groupName);
    const key = scheduleKey(groupName, input.Name);
    if (this.schedules.has(key))
      throw new SchedulerApiError('ConflictException', `Schedule ${input.Name} already exists.`);
    const now = this.options.now();
    const schedule: Schedule = { ...checked, CreationDate: now, LastModificationDate: now, version: 1 };
    this.schedules.set(key, schedule);
    if (token !== undefined) this.tokens.set(token, { request, arn: schedule.Arn });
    this.options.onChange?.({ kind: 'upsert', schedule });
    return schedule;
  }

  /**
   * UpdateSchedule: replaces every field (the API has no partial update; a field left out is reset).
   * @throws {SchedulerApiError} ValidationException, ResourceNotFoundException.
   */
  update(input: ScheduleInput): Schedule {
    const groupName = input.GroupName ?? DEFAULT_GROUP;
    const existing = this.get(input.Name, groupName);
    const checked = this.check(input, groupName);
    const schedule: Schedule = {
      ...checked,
      CreationDate: existing.CreationDate,
      LastModificationDate: this.options.now(),
      version: existing.version + 1,
    };
    this.schedules.set(scheduleKey(groupName, input.Name), schedule);
    this.options.onChange?.({ kind: 'upsert', schedule });
    return schedule;
  }

  /** GetSchedule. @throws {SchedulerApiError} ResourceNotFoundException. */
  get(name: string, groupName = DEFAULT_GROUP): Schedule {
    if (!this.groups.has(groupName)) throw groupNotFound(groupName);
    const found = this.schedules.get(scheduleKey(groupName, name));
    if (!found) throw scheduleNotFound(name);
    return found;
  }

  /** The schedule under `key` when it exists (no error). */
  find(key: string): Schedule | undefined {
    return this.schedules.get(key);
  }

  /** DeleteSchedule. @throws {SchedulerApiError} ResourceNotFoundException. */
  delete(name: string, groupName = DEFAULT_GROUP): void {
    this.get(name, groupName);
    const key = scheduleKey(groupName, name);
    this.schedules.delete(key);
    this.options.onChange?.({ kind: 'delete', key });
  }

  /**
   * ListSchedules, ordered by group then name. `NextToken` is the key of the page's last schedule.
   * @throws {SchedulerApiError} ValidationException on a bad MaxResults / State / NextToken.
   */
  list(query: {
    GroupName?: string;
    NamePrefix?: string;
    State?: string;
    MaxResults?: number;
    NextToken?: string;
  }): { Schedules: Schedule[]; NextToken?: string } {
    if (query.State !== undefined && query.State !== 'ENABLED' && query.State !== 'DISABLED')
      throw constraintError(query.State, 'state', 'satisfy enum value set: [ENABLED, DISABLED]');
    const all = [...this.schedules.entries()]
      .filter(([, s]) => query.GroupName === undefined || s.GroupName === query.GroupName)
      .filter(([, s]) => query.NamePrefix === undefined || s.Name.startsWith(query.NamePrefix))
      .filter(([, s]) => query.State === undefined || s.State === query.State)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const page = paginate(all, query.MaxResults, query.NextToken, 1000);
    return { Schedules: page.items, NextToken: page.nextToken };
  }

  /** CreateScheduleGroup. @throws {SchedulerApiError} ValidationException, ConflictException. */
  createGroup(name: string): ScheduleGroup {
    if (typeof name !== 'string' || !NAME.test(name))
      throw constraintError(name, 'name', 'satisfy regular expression pattern: [0-9a-zA-Z-_.]+');
    if (this.groups.has(name))
      throw new SchedulerApiError('ConflictException', `Schedule group ${name} already exists.`);
    const now = this.options.now();
    const group: ScheduleGroup = {
      Arn: this.groupArn(name),
      Name: name,
      State: 'ACTIVE',
      CreationDate: now,
      LastModificationDate: now,
    };
    this.groups.set(name, group);
    return group;
  }

  /** GetScheduleGroup. @throws {SchedulerApiError} ResourceNotFoundException. */
  getGroup(name: string): ScheduleGroup {
    const group = this.groups.get(name);
    if (!group) throw groupNotFound(name);
    return group;
  }

  /**
   * DeleteScheduleGroup: the group and every schedule in it (AWS deletes them asynchronously;
   * here at once). @throws {SchedulerApiError} ResourceNotFoundException; ValidationException for `default`.
   */
  deleteGroup(name: string): void {
    this.getGroup(name);
    if (name === DEFAULT_GROUP)
      throw new SchedulerApiError('ValidationException', 'The default schedule group cannot be deleted.');
    for (const [key, schedule] of this.schedules) {
      if (schedule.GroupName !== name) continue;
      this.schedules.delete(key);
      this.options.onChange?.({ kind: 'delete', key });
    }
    this.groups.delete(name);
  }

  /** ListScheduleGroups, ordered by name. */
  listGroups(query: { NamePrefix?: string; MaxResults?: number; NextToken?: string }): {
    ScheduleGroups: ScheduleGroup[];
    NextToken?: string;
  } {
    const all = [...this.groups.entries()]
      .filter(([name]) => query.NamePrefix === undefined || name.startsWith(query.NamePrefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const page = paginate(all, query.MaxResults, query.NextToken, 100);
    return { ScheduleGroups: page.items, NextToken: page.nextToken };
  }

  /** Checks a CreateSchedule / UpdateSchedule input; the schedule's fields without dates and version. */
  private check(
    input: ScheduleInput,
    groupName: string,
  ): Omit<Schedule, 'CreationDate' | 'LastModificationDate' | 'version'> {
    if (typeof input.Name !== 'string' || !NAME.test(input.Name))
      throw constraintError(input.Name, 'name', 'satisfy regular expression pattern: [0-9a-zA-Z-_.]+');
    if (!this.groups.has(groupName)) throw groupNotFound(groupName);
    let expression: ScheduleExpression;
    const timeZone = input.ScheduleExpressionTimezone ?? 'UTC';
    try {
      expression = parseScheduleExpression(input.ScheduleExpression);
      checkTimeZone(timeZone);
    } catch (error) {
      if (error instanceof ScheduleExpressionError)
        throw new SchedulerApiError('ValidationException', `Invalid Schedule Expression: ${error.message}`);
      throw error;
    }
    const window = input.FlexibleTimeWindow;
    if (window === undefined || (window.Mode !== 'OFF' && window.Mode !== 'FLEXIBLE'))
      throw constraintError(
        window?.Mode,
        'flexibleTimeWindow.mode',
        'satisfy enum value set: [OFF, FLEXIBLE]',
      );
    if (
      window.Mode === 'FLEXIBLE' &&
      !(
        Number.isInteger(window.MaximumWindowInMinutes) &&
        (window.MaximumWindowInMinutes as number) >= 1 &&
        (window.MaximumWindowInMinutes as number) <= 1440
      )
    )
      throw constraintError(
        window.MaximumWindowInMinutes,
        'flexibleTimeWindow.maximumWindowInMinutes',
        'have value between 1 and 1440 when Mode is FLEXIBLE',
      );
    const state = input.State ?? 'ENABLED';
    if (state !== 'ENABLED' && state !== 'DISABLED')
      throw constraintError(state, 'state', 'satisfy enum value set: [ENABLED, DISABLED]');
    const after = input.ActionAfterCompletion ?? 'NONE';
    if (after !== 'NONE' && after !== 'DELETE')
      throw constraintError(after, 'actionAfterCompletion', 'satisfy enum value set: [NONE, DELETE]');
    this.checkTarget(input.Target);
    if (input.StartDate !== undefined && input.EndDate !== undefined && input.EndDate <= input.StartDate)
      throw new SchedulerApiError(
        'ValidationException',
        'The EndDate you specify must be later than the StartDate.',
      );
    if (
      expression.kind !== 'at' &&
      input.StartDate !== undefined &&
      input.StartDate < this.options.now() - 300_000
    )
      throw new SchedulerApiError(
        'ValidationException',
        'The StartDate you specify cannot be earlier than 5 minutes ago.',
      );
    return {
      Arn: this.scheduleArn(groupName, input.Name),
      Name: input.Name,
      GroupName: groupName,
      ScheduleExpression: input.ScheduleExpression,
      ScheduleExpressionTimezone: timeZone,
      StartDate: input.StartDate,
      EndDate: input.EndDate,
      Description: input.Description,
      State: state,
      KmsKeyArn: input.KmsKeyArn,
      Target: { ...input.Target, RetryPolicy: { ...DEFAULT_RETRY_POLICY, ...input.Target.RetryPolicy } },
      FlexibleTimeWindow: window,
      ActionAfterCompletion: after,
      expression,
    };
  }

  private checkTarget(target: ScheduleTarget | undefined): void {
    if (target === undefined || typeof target !== 'object')
      throw constraintError(target, 'target', 'not be null');
    if (typeof target.RoleArn !== 'string' || target.RoleArn === '')
      throw constraintError(target.RoleArn, 'target.roleArn', 'not be null');
    if (typeof target.Arn !== 'string' || !SQS_ARN.test(target.Arn))
      throw new SchedulerApiError(
        'ValidationException',
        `The local Scheduler emulator delivers only to SQS queues (a templated target arn:aws:sqs:<region>:<account>:<queue>); target ${JSON.stringify(target.Arn)} would never be delivered locally.`,
      );
    const retry = target.RetryPolicy;
    const age = retry?.MaximumEventAgeInSeconds;
    if (age !== undefined && !(Number.isInteger(age) && age >= 60 && age <= 86_400))
      throw constraintError(
        age,
        'target.retryPolicy.maximumEventAgeInSeconds',
        'have value between 60 and 86400',
      );
    const attempts = retry?.MaximumRetryAttempts;
    if (attempts !== undefined && !(Number.isInteger(attempts) && attempts >= 0 && attempts <= 185))
      throw constraintError(
        attempts,
        'target.retryPolicy.maximumRetryAttempts',
        'have value between 0 and 185',
      );
    const dlq = target.DeadLetterConfig?.Arn;
    if (dlq !== undefined && !SQS_ARN.test(dlq))
      throw constraintError(
        dlq,
        'target.deadLetterConfig.arn',
        'satisfy regular expression pattern: arn:aws(-[a-z]+)?:sqs:[a-z0-9\\-]+:\\d{12}:[a-zA-Z0-9\\-_]+',
      );
    if (dlq?.endsWith('.fifo'))
      throw new SchedulerApiError(
        'ValidationException',
        'EventBridge Scheduler does not support a FIFO queue as the dead-letter queue.',
      );
  }
}

/** One page of `entries` (sorted by key) after `nextToken`, at most `maxResults` (1–`limit`). */
function paginate<T>(
  entries: [string, T][],
  maxResults: number | undefined,
  nextToken: string | undefined,
  limit: number,
): { items: T[]; nextToken?: string } {
  const size = maxResults ?? limit;
  if (!Number.isInteger(size) || size < 1 || size > limit)
    throw constraintError(maxResults, 'maxResults', `have value between 1 and ${limit}`);
  let after = '';
  if (nextToken !== undefined) {
    try {
      after = Buffer.from(nextToken, 'base64url').toString('utf8');
    } catch {
      throw new SchedulerApiError('ValidationException', 'The NextToken is not valid.');
    }
  }
  const rest = entries.filter(([key]) => key > after);
  const items = rest.slice(0, size);
  const last = items.at(-1);
  return {
    items: items.map(([, value]) => value),
    nextToken: rest.length > size && last ? Buffer.from(last[0], 'utf8').toString('base64url') : undefined,
  };
}
