/**
 * What an operator sees of time (`sqs-jobs schedules`, the console's schedules page): the jobs sent
 * for later that are still pending (their state items in the idempotency table, or their one-time
 * schedules), the recurring schedules of the queues' schedule groups with their next firings in
 * their own time zone, and the recent firings of a recurring schedule with where each job went.
 * Reads only (./schedule-reads.ts holds the calls); cancelling is ./schedule-cancel.ts (the
 * `JobClient.cancel` path), firing is ./fire-schedule.ts.
 *
 * Sources and their limits:
 * - EventBridge Scheduler has no firing history API (API reference: the actions are Create / Get /
 *   Update / Delete / List of schedules and groups, and tags): a firing is known by the job it
 *   sent. A recurring schedule's job id is `<name>@<scheduled time>`
 *   (lib/constructs/job-queue/recurring-jobs.ts), so the job records whose key starts with the
 *   schedule's type, source and `<name>@` are its firings that reached a worker. A firing Scheduler
 *   could not deliver is in the schedule dead-letter queue instead (`sqs-jobs dlq list`).
 * - A one-time schedule deletes itself after firing (`ActionAfterCompletion: DELETE`), so only
 *   jobs not yet due are listed from Scheduler; the state items also keep started and cancelled
 *   jobs for 14 days after their time.
 */
import type { GetScheduleCommandOutput } from '@aws-sdk/client-scheduler';
import { ONE_TIME_SCHEDULE_PREFIX, type ScheduledJobState, scheduledJobKey } from '../core/scheduled-job.ts';
import { isManualScheduledTime } from '../core/scheduler-context.ts';
import { defaultJobKey, jobRecordKey } from '../runtime/idempotency/keys.ts';
import { type JobRecordStatus, parseJobRecord } from '../runtime/idempotency/record.ts';
import {
  ambiguousJobId,
  DEFAULT_NEXT_FIRINGS,
  DEFAULT_RECENT_FIRINGS,
  envelopeOf,
  findScheduledJob,
  getSchedule,
  MAX_SCAN_PAGES,
  type PendingJob,
  pendingOfSchedule,
  pendingOfState,
  type RecurringScheduleView,
  recurringView,
  type SchedulesSource,
  scan,
  scheduleNames,
  schedulerError,
  stateItems,
} from './schedule-reads.ts';

export { type CancelScheduledJobResult, cancelScheduledJob } from './schedule-cancel.ts';
export {
  DEFAULT_NEXT_FIRINGS,
  DEFAULT_RECENT_FIRINGS,
  DEFAULT_SCHEDULE_GROUP,
  findScheduledJob,
  listScheduleGroups,
  MAX_SCAN_PAGES,
  type PendingJob,
  type RecurringScheduleView,
  recurringView,
  type SchedulesSource,
  schedulerError,
} from './schedule-reads.ts';

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
  if (found.sources.length > 1) throw ambiguousJobId(nameOrJobId, found.sources);
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
