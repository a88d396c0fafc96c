/**
 * Recurring jobs declared next to a JobQueue (`recurringJobs`, `JobQueue.addRecurringJob`): their
 * shape, the checks made at synth (expression, time zone, envelope rules, the worker's job types;
 * the Input's size on the exact text the schedule carries, once its group is known) and the SQS
 * message body each firing sends. One `AWS::Scheduler::Schedule` per recurring job is
 * made by ./scheduling.ts from what this module returns.
 *
 * AWS pages (named in brackets):
 * - schedule-types: https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
 * - context-attributes: https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-context-attributes.html
 * - retry-policy: https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html
 * - schedule-name: https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
 *   (Name: 1–64 characters of `[0-9a-zA-Z-_.]`, unique in its group)
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { Token } from 'aws-cdk-lib';
import { unknownKeyProblems } from '../../client/option-keys.ts';
import { formatIssuePath, MAX_SCHEDULED_MESSAGE_BYTES } from '../../client/prepare.ts';
import { DATA_CONTENT_TYPE, parseEnvelope, SPEC_VERSION } from '../../core/envelope.ts';
import { jsonValueProblems } from '../../core/json-value.ts';
import { isValidMessageGroupId } from '../../core/message-parameters.ts';
import { checkTimeZone, nextFirings, parseScheduleExpression } from '../../core/schedule-expression.ts';
import { substituteContextAttributes } from '../../core/scheduler-context.ts';
import type { JobDefinitionLike, JobQueueProps } from './props.ts';

/** A job that runs on a schedule: one `AWS::Scheduler::Schedule` in the queue's schedule group. */
export interface RecurringJob {
  /**
   * The schedule's name, unique among the queue's recurring jobs: 1–64 characters of
   * `[0-9a-zA-Z-_.]` [schedule-name], e.g. `nightly-invoices`. It starts every firing's job id
   * (`<name>@<scheduled time>`), so renaming a schedule gives its firings new identities.
   */
  readonly name: string;
  /**
   * The job each firing sends: its definition (what `defineJob` returns; its `queue`, when set,
   * must be this queue) or its type string. When the queue's `jobs` are given, the type must be
   * one of them: a firing nobody handles would only ever dead-letter.
   */
  readonly job: string | JobDefinitionLike;
  /**
   * `cron(minutes hours day-of-month month day-of-week year)` or `rate(value minutes|hours|days)`,
   * EventBridge Scheduler's dialect (six cron fields, one of the day fields `?`, 1 = Sunday)
   * [schedule-types], sent as written: parts separated by single spaces, ranges from low to high
   * (`SAT,SUN`, not `SAT-SUN`), a step below the field's number of values (`0/59`, not `0/60`).
   * A one-time `at(...)` is refused: send the job with `runAt` from JobClient.
   */
  readonly schedule: string;
  /**
   * IANA time zone a cron schedule's wall-clock times are in (`ScheduleExpressionTimezone`),
   * e.g. `Europe/Berlin`. Required for cron (say `UTC` when UTC is meant): a nightly run at 23:00
   * is 23:00 somewhere. Daylight saving: a time the clocks skip does not fire that day, a time
   * they repeat fires once [schedule-types].
   * @default 'UTC' for rate schedules
   */
  readonly timeZone?: string;
  /**
   * The job's data (envelope `data`): JSON only (no `undefined`, functions, Maps, class
   * instances, `NaN`). The same data every firing; the firing's scheduled time is the envelope's
   * `time`, so a job that works "on yesterday's invoices" reads it from `ctx.envelope.time`.
   * @default {}
   */
  readonly data?: unknown;
  /**
   * Envelope `partitionkey`: on a FIFO queue the `MessageGroupId` (required there: 1–128
   * printable ASCII characters, no space); on a standard queue only carried in the envelope.
   * @default - none (refused on FIFO)
   */
  readonly partitionKey?: string;
  /**
   * How long EventBridge Scheduler keeps trying to deliver a firing the queue did not accept
   * (SQS unavailable or throttled, a permission or KMS error, the queue deleted), 60–86,400
   * seconds [retry-policy]. Past it, the firing goes to the schedule dead-letter queue (alarmed).
   * @default 86,400 (24 hours, AWS's default, written out)
   */
  readonly maximumEventAgeSeconds?: number;
  /**
   * How many times EventBridge Scheduler retries such a delivery, 0–185 [retry-policy]; 0 sends
   * a failed delivery to the dead-letter queue at once.
   * @default 185 (AWS's default, written out)
   */
  readonly maximumRetryAttempts?: number;
  /**
   * No firing before this instant (`StartDate`); a rate schedule's first firing.
   * @default - from its creation
   */
  readonly startDate?: Date;
  /**
   * No firing at or after this instant (`EndDate`).
   * @default - no end
   */
  readonly endDate?: Date;
  /**
   * `false` creates the schedule `DISABLED`: it does not fire, and firings missed while disabled
   * are not made up when it is enabled again.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * The schedule's description (at most 512 characters).
   * @default - `sqs-jobs recurring job <type> on queue <queue>`
   */
  readonly description?: string;
}

/** The fields of {@link RecurringJob}: any other is refused (from plain JavaScript a misspelled one would be ignored). */
const RECURRING_JOB_FIELDS = [
  'name',
  'job',
  'schedule',
  'timeZone',
  'data',
  'partitionKey',
  'maximumEventAgeSeconds',
  'maximumRetryAttempts',
  'startDate',
  'endDate',
  'enabled',
  'description',
] as const satisfies readonly (keyof RecurringJob)[];

/** What to write instead of keys the EventBridge Scheduler API and CloudFormation spell otherwise. */
const RECURRING_JOB_HINTS: Readonly<Record<string, string>> = {
  scheduleexpression: 'schedule',
  cron: "schedule: 'cron(...)'",
  rate: "schedule: 'rate(...)'",
  scheduleexpressiontimezone: 'timeZone',
  timezone: 'timeZone',
  input: 'data',
  payload: 'data',
  messagegroupid: 'partitionKey',
  retrypolicy: 'maximumEventAgeSeconds and maximumRetryAttempts',
  state: 'enabled',
  type: 'job',
};

/** Defaults of {@link RecurringJob}'s retry policy: AWS's own, written into every schedule. */
export const RECURRING_JOB_DEFAULTS = {
  maximumEventAgeSeconds: 86_400,
  maximumRetryAttempts: 185,
} as const;

/** Limits of the retry policy [retry-policy] and the schedule name [schedule-name]. */
const LIMITS = {
  minEventAgeSeconds: 60,
  maxEventAgeSeconds: 86_400,
  maxRetryAttempts: 185,
  maxDescriptionChars: 512,
} as const;
const SCHEDULE_NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;

/** Context attribute EventBridge Scheduler replaces in `Input` with the firing's time [context-attributes]. */
export const SCHEDULED_TIME_ATTRIBUTE = '<aws.scheduler.scheduled-time>';

/** What the checks need to know about the queue. */
export interface RecurringJobQueue {
  readonly name: string;
  readonly fifo: boolean;
  /** The job types the worker runs, when the queue's `jobs` say; undefined when unknown. */
  readonly jobTypes: ReadonlySet<string> | undefined;
  /** Largest SQS message the queue takes, in bytes. */
  readonly maxMessageSizeBytes: number;
}

/** What the checks know about a queue from its props: its `jobs`' types when they are given (and well formed). */
export function recurringJobQueueOf(
  props: Pick<JobQueueProps, 'name' | 'jobs'>,
  fifo: boolean,
  maxMessageSizeBytes: number,
): RecurringJobQueue {
  const jobs = Array.isArray(props.jobs) ? props.jobs : undefined;
  const types = jobs?.map((j) => (typeof j === 'object' && j !== null ? j.type : undefined));
  const known = types?.every((t) => typeof t === 'string') === true;
  return {
    name: props.name,
    fifo,
    jobTypes: known ? new Set(types as string[]) : undefined,
    maxMessageSizeBytes,
  };
}

/** The job type of a recurring job's `job`, or undefined when it is malformed. */
export function recurringJobType(job: RecurringJob['job'] | undefined): string | undefined {
  if (typeof job === 'string') return job.length > 0 ? job : undefined;
  if (typeof job === 'object' && job !== null && typeof job.type === 'string' && job.type.length > 0)
    return job.type;
  return undefined;
}

/**
 * Every problem of one recurring job, each line starting with `recurringJobs['<name>']` (or the
 * index when the name is missing) and saying what to write instead. Never throws.
 */
export function recurringJobProblems(job: RecurringJob, index: number, queue: RecurringJobQueue): string[] {
  if (typeof job !== 'object' || job === null)
    return [`recurringJobs[${index}]: must be an object { name, job, schedule, timeZone, data }`];
  const where =
    typeof job.name === 'string' && job.name !== ''
      ? `recurringJobs['${job.name}']`
      : `recurringJobs[${index}]`;
  const problems: string[] = [];
  const add = (message: string) => problems.push(`${where}: ${message}`);
  for (const unknown of unknownKeyProblems(
    job,
    RECURRING_JOB_FIELDS,
    '',
    RECURRING_JOB_HINTS,
    'a recurring job field',
  ))
    add(unknown);

  if (typeof job.name !== 'string' || !SCHEDULE_NAME.test(job.name))
    add(
      `name ${JSON.stringify(job.name)} is not a schedule name: 1–64 letters, digits, '-', '_' or '.', e.g. 'nightly-invoices' [schedule-name]`,
    );

  const type = recurringJobType(job.job);
  if (type === undefined) {
    add("job must be a job definition (defineJob) or its type string, e.g. job: 'billing.issue-invoices'");
  } else {
    const definedFor = typeof job.job === 'object' ? job.job.queue : undefined;
    if (definedFor !== undefined && definedFor !== queue.name)
      add(
        `job '${type}' is defined for queue '${definedFor}', not '${queue.name}': declare the recurring job on the JobQueue named '${definedFor}'`,
      );
    else if (queue.jobTypes !== undefined && !queue.jobTypes.has(type))
      add(
        `job '${type}' is not one of this queue's jobs (${[...queue.jobTypes].join(', ')}): the worker would dead-letter every firing; add its definition to jobs, or use one of these types`,
      );
  }

  const kind = scheduleKind(job, add);
  if (job.timeZone !== undefined) {
    try {
      checkTimeZone(job.timeZone);
    } catch (err) {
      add(`timeZone: ${(err as Error).message}`);
    }
  } else if (kind === 'cron') {
    add(
      "timeZone is required with a cron schedule: name the zone its wall-clock times are in, e.g. timeZone: 'Europe/Berlin' (or 'UTC')",
    );
  }

  if (job.data !== undefined)
    for (const p of jsonValueProblems(job.data, 'data', { undefinedFields: 'refuse', toJSON: 'refuse' }))
      add(`${p.path} ${p.message}: recurring job data must be plain JSON`);

  if (job.partitionKey !== undefined) {
    if (typeof job.partitionKey !== 'string' || !isValidMessageGroupId(job.partitionKey))
      add(
        `partitionKey ${JSON.stringify(job.partitionKey)} is not a valid MessageGroupId: 1–128 printable ASCII characters, no space`,
      );
  } else if (queue.fifo) {
    add(
      "partitionKey is required on a FIFO queue: it is the firing's MessageGroupId (the jobs it runs in order with), e.g. partitionKey: 'invoicing'",
    );
  }

  const age = job.maximumEventAgeSeconds;
  if (
    age !== undefined &&
    !Token.isUnresolved(age) &&
    !(Number.isInteger(age) && age >= LIMITS.minEventAgeSeconds && age <= LIMITS.maxEventAgeSeconds)
  )
    add(
      `maximumEventAgeSeconds ${age} is outside ${LIMITS.minEventAgeSeconds}–${LIMITS.maxEventAgeSeconds} (whole seconds) [retry-policy]`,
    );
  const retries = job.maximumRetryAttempts;
  if (
    retries !== undefined &&
    !Token.isUnresolved(retries) &&
    !(Number.isInteger(retries) && retries >= 0 && retries <= LIMITS.maxRetryAttempts)
  )
    add(
      `maximumRetryAttempts ${retries} is outside 0–${LIMITS.maxRetryAttempts} (whole number) [retry-policy]`,
    );

  for (const field of ['startDate', 'endDate'] as const) {
    const d = job[field];
    if (d !== undefined && !(d instanceof Date && !Number.isNaN(d.getTime())))
      add(`${field} must be a valid Date`);
  }
  if (job.startDate instanceof Date && job.endDate instanceof Date && job.endDate <= job.startDate)
    add('endDate must be after startDate');
  if (job.description !== undefined && job.description.length > LIMITS.maxDescriptionChars)
    add(`description is longer than ${LIMITS.maxDescriptionChars} characters`);

  if (problems.length === 0 && kind !== undefined) {
    // A schedule that can never fire (Feb 30, a past year, an end before any firing) would deploy
    // and stay silent: the same evaluation the local runtime fires by says so now.
    const next = nextFirings(job.schedule, {
      timeZone: job.timeZone ?? 'UTC',
      after: new Date(),
      count: 1,
      ...(job.startDate ? { startDate: job.startDate } : {}),
      ...(job.endDate ? { endDate: job.endDate } : {}),
    });
    if (next.length === 0)
      add(
        job.endDate !== undefined && job.endDate.getTime() <= Date.now()
          ? `endDate ${job.endDate.toISOString()} is in the past: schedule ${job.schedule} would never fire; move endDate later or leave it out`
          : kind === 'rate'
            ? `schedule ${job.schedule} has no firing before endDate ${job.endDate?.toISOString()}: a rate schedule first fires at its startDate (or creation); move endDate later`
            : `schedule ${job.schedule} never fires from now on${job.endDate ? ' (before endDate)' : ''}: check the day, month and year fields`,
      );
  }
  if (problems.length === 0 && typeof job.job === 'object' && job.job !== null && 'schema' in job.job) {
    // Data the job's schema refuses would dead-letter every firing (JobDataInvalidError).
    const schema = (job.job as { schema: StandardSchemaV1 }).schema;
    const checked = schema['~standard'].validate(job.data ?? {});
    if (!(checked instanceof Promise))
      for (const issue of checked.issues ?? [])
        add(
          `${formatIssuePath(issue.path)}: ${issue.message}: the job's schema refuses it, so every firing would be dead-lettered; give data that passes ${type}'s schema`,
        );
  }

  return problems;
}

/** Where EventBridge Scheduler documents the `Input` limit: the Target type of the CreateSchedule API. */
const INPUT_LIMIT_SOURCE = 'https://docs.aws.amazon.com/scheduler/latest/APIReference/API_Target.html';

/**
 * The problems of the exact `Input` a recurring job's schedule carries (`input`: its
 * `Target.Input` as the template holds it, whose envelope `source` names the queue's schedule
 * group, `/sqs-jobs/schedules/<group>`; JobQueueScheduling.recurringJobInputText gives it), each
 * line starting with `recurringJobs['<name>']`:
 * - above {@link MAX_SCHEDULED_MESSAGE_BYTES} UTF-8 bytes: EventBridge Scheduler's Input limit
 *   (256 KB; CreateSchedule API, Target.Input) refuses the schedule at deploy;
 * - a firing (the Input with its context attributes filled in as AWS fills them, e.g. the
 *   scheduled time `2026-01-01T00:00:00Z`) that is not an envelope the worker accepts, or larger
 *   than the queue's `maxMessageSizeBytes`: every firing would be refused or dead-lettered.
 * Made separately from {@link recurringJobProblems} because the group name (so the source, so the
 * size) is known only once the queue's scheduling exists. Never throws.
 */
export function recurringJobInputProblems(
  job: RecurringJob,
  input: string,
  maxMessageSizeBytes: number,
): string[] {
  const where = `recurringJobs['${job.name}']`;
  const inputBytes = Buffer.byteLength(input, 'utf8');
  const excess = inputBytes - MAX_SCHEDULED_MESSAGE_BYTES;
  if (excess > 0)
    return [
      `${where}: the schedule's Input (the message of every firing) is ${inputBytes} bytes, above EventBridge Scheduler's Input limit of ${MAX_SCHEDULED_MESSAGE_BYTES} bytes (256 KB; CreateSchedule API, Target.Input: ${INPUT_LIMIT_SOURCE}); ${excess} byte${excess === 1 ? '' : 's'} too many: keep ids in data and let the job load the rest`,
    ];
  const firing = substituteContextAttributes(input, SAMPLE_FIRING);
  const problems: string[] = [];
  try {
    parseEnvelope(firing);
  } catch (err) {
    problems.push(`${where}: ${(err as Error).message}`);
  }
  const bytes = Buffer.byteLength(firing, 'utf8');
  if (bytes > maxMessageSizeBytes)
    problems.push(
      `${where}: the message of a firing is ${bytes} bytes, above the queue's maxMessageSizeBytes (${maxMessageSizeBytes}): keep ids in data, not documents`,
    );
  return problems;
}

/** Context attribute values of a sample firing, as long as AWS's own (scheduled time: whole seconds, UTC). */
const SAMPLE_FIRING = {
  scheduleArn: 'arn:aws:scheduler:us-east-1:123456789012:schedule/group/name',
  scheduledTime: '2026-01-01T00:00:00Z',
  executionId: '0123456789abcdef',
  attemptNumber: 1,
} as const;

/** Checks `schedule`; returns its kind when it is a cron or rate expression. */
function scheduleKind(job: RecurringJob, add: (m: string) => void): 'cron' | 'rate' | undefined {
  try {
    const parsed = parseScheduleExpression(job.schedule);
    if (parsed.kind === 'at') {
      add(
        `schedule ${job.schedule} is a one-time schedule: a recurring job takes cron(...) or rate(...); send a one-time job with runAt from JobClient`,
      );
      return undefined;
    }
    return parsed.kind;
  } catch (err) {
    add(`schedule: ${(err as Error).message}`);
    return undefined;
  }
}

/** Problems of a list of recurring jobs: each job's, and names used twice. */
export function recurringJobsProblems(
  jobs: readonly RecurringJob[] | undefined,
  queue: RecurringJobQueue,
  takenNames: ReadonlySet<string> = new Set(),
): string[] {
  if (jobs === undefined) return [];
  if (!Array.isArray(jobs))
    return ['recurringJobs: must be an array of { name, job, schedule, timeZone, data }'];
  const seen = new Set(takenNames);
  const problems: string[] = [];
  jobs.forEach((job, i) => {
    problems.push(...recurringJobProblems(job, i, queue));
    const name = (job as Partial<RecurringJob> | null)?.name;
    if (typeof name === 'string') {
      if (seen.has(name))
        problems.push(
          `recurringJobs['${name}']: the name is used twice; schedule names are unique per queue`,
        );
      seen.add(name);
    }
  });
  return problems;
}

/**
 * The SQS message body of every firing: a job envelope whose `id` is `<name>@<scheduled time>`
 * and `time` the scheduled time, both filled in by EventBridge Scheduler from the context
 * attribute [context-attributes]. A firing delivered twice is one job (same id); two firings
 * never share an id. Keys in a fixed order, so the template is stable.
 */
export function recurringJobBody(job: RecurringJob, type: string, source: string): string {
  return JSON.stringify(recurringJobEnvelope(job, type, source));
}

/** {@link recurringJobBody} as an object (tokens in `data` or `source` are kept for `Stack.toJsonString`). */
export function recurringJobEnvelope(
  job: RecurringJob,
  type: string,
  source: string,
): Record<string, unknown> {
  return {
    specversion: SPEC_VERSION,
    id: `${job.name}@${SCHEDULED_TIME_ATTRIBUTE}`,
    source,
    type,
    time: SCHEDULED_TIME_ATTRIBUTE,
    datacontenttype: DATA_CONTENT_TYPE,
    data: job.data ?? {},
    ...(job.partitionKey === undefined ? {} : { partitionkey: job.partitionKey }),
  };
}
