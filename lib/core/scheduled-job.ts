/**
 * The state of a one-time job sent for later (`JobClient.send(..., { runAt })`): one item in the
 * idempotency table that arbitrates between the job running, being cancelled and being
 * rescheduled. The client writes it before the job can arrive (PutItem), cancels and reschedules
 * it (conditional UpdateItem); the worker starts it (conditional UpdateItem) before the job runs.
 * Both sides import this module, so the item format is defined once (docs/contracts.md,
 * "Jobs sent for later").
 *
 * Item (partition key `pk`, TTL attribute `expiresAt`, as every item of the table):
 * - `pk` = `schedule#job#` + SHA-256 hex of the JSON array `[source, id]` ({@link scheduledJobKey}):
 *   one item per job identity, whatever characters `source` and `id` hold (77 bytes). Three
 *   `#`-separated parts with `schedule` first: never a job record's key (two parts: every `#`
 *   inside a part is escaped), a step record's (four) or a group record's (`%group` first).
 * - `recordType` `scheduled-job`; `state` `pending` | `started` | `cancelled`; `generation`
 *   (number, 1 at send, +1 per reschedule); `runAt` (RFC 3339 UTC) and `runAtMs`; `queue`,
 *   `type`, `source`, `jobId`, `partitionKey` (when set); `via` `schedule` | `delay` (how the
 *   current generation travels); `scheduleName` (the EventBridge schedule of the current
 *   generation, when `via` is `schedule`); `body` (the envelope JSON of generation 1, so a
 *   reschedule can send it again); `expiresAt` (epoch seconds: `runAt` + {@link STATE_TTL_MARGIN_SECONDS}).
 *
 * The worker's start condition: `generation = :g AND state IN (pending, started)`: a second
 * delivery of the same generation (a redelivery, a schedule firing twice) passes and is then
 * absorbed by the idempotency guard; a cancelled or superseded generation never runs.
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * Tag key of a schedule dead-letter queue (JobQueue's scheduling DLQ): Scheduler names it in
 * `DeadLetterConfig`, not a RedrivePolicy, so tools that tell dead-letter queues from queues of
 * work (the local runtime, the console) read this tag. Value: the logical name of the queue whose
 * schedules it serves.
 */
export const SCHEDULE_DLQ_TAG = 'sqs-jobs:schedule-dead-letter-queue-of';

/** `recordType` of the state item. */
export const SCHEDULED_JOB_RECORD_TYPE = 'scheduled-job';
/** Prefix of the state item's `pk`: the IAM condition `dynamodb:LeadingKeys` `schedule#*` matches it. */
export const SCHEDULED_JOB_PK_PREFIX = 'schedule#';
/**
 * How long the state item outlives `runAt`, in seconds: 14 days, the longest an SQS message can
 * stay on a queue (`MessageRetentionPeriod` maximum, SetQueueAttributes API), so any message of
 * the job that is still on the queue finds its item. An expired item counts as absent (DynamoDB
 * TTL deletes lazily, so the expiry itself is compared).
 */
export const STATE_TTL_MARGIN_SECONDS = 14 * 24 * 3600;
/** Prefix of a one-time schedule's name. */
export const ONE_TIME_SCHEDULE_PREFIX = 'sj-';

/** Where a one-time job is in its life. */
export type ScheduledJobStateName = 'pending' | 'started' | 'cancelled';

/** How the current generation of a job travels: an EventBridge schedule, or an SQS `DelaySeconds` message. */
export type ScheduledVia = 'schedule' | 'delay';

/** The state item, as read. */
export interface ScheduledJobState {
  readonly pk: string;
  readonly state: ScheduledJobStateName;
  /** 1 at send; +1 per reschedule. The envelope's `schedulegeneration` must match it to run. */
  readonly generation: number;
  /** When the current generation is due, RFC 3339 UTC with milliseconds. */
  readonly runAt: string;
  readonly runAtMs: number;
  /** Logical queue name. */
  readonly queue: string;
  /** Job type. */
  readonly type: string;
  readonly source: string;
  readonly jobId: string;
  readonly partitionKey?: string;
  readonly via: ScheduledVia;
  /** The schedule of the current generation, when `via` is `schedule`. */
  readonly scheduleName?: string;
  /** The envelope JSON as first sent (generation 1). */
  readonly body: string;
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
}

/** SHA-256 hex of a text. */
function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The state item's `pk` of the job `source` + `id`: `schedule#job#<64 hex>`. */
export function scheduledJobKey(source: string, id: string): string {
  return `${SCHEDULED_JOB_PK_PREFIX}job#${sha256Hex(JSON.stringify([source, id]))}`;
}

/**
 * The name of a job's one-time EventBridge schedule: `sj-` + the first 56 hex digits of SHA-256
 * of `${source}\n${id}` (59 characters), plus `-g<generation>` for a schedule a reschedule had to
 * create anew (its first one had fired, or the job went with `DelaySeconds`). Deterministic: a
 * retried send finds its own schedule (CreateSchedule's `ConflictException`) instead of making a
 * second. Names are 1–64 of `[0-9a-zA-Z-_.]` (CreateSchedule API, Name): `-g` + up to 3 digits fits.
 */
export function oneTimeScheduleName(source: string, id: string, generation?: number): string {
  const base = `${ONE_TIME_SCHEDULE_PREFIX}${sha256Hex(`${source}\n${id}`).slice(0, 56)}`;
  return generation === undefined || generation <= 1 ? base : `${base}-g${generation}`;
}

/**
 * `expiresAt` of a state item due at `runAtMs`, written at `nowMs`: the margin counts from the
 * later of the two, so a job due in the past (sent at once) keeps a live, cancellable state too.
 */
export function stateExpiresAt(runAtMs: number, nowMs: number): number {
  return Math.ceil(Math.max(runAtMs, nowMs) / 1000) + STATE_TTL_MARGIN_SECONDS;
}

/** The DynamoDB item of a state. */
export function scheduledJobItem(state: ScheduledJobState): Record<string, AttributeValue> {
  return {
    pk: { S: state.pk },
    recordType: { S: SCHEDULED_JOB_RECORD_TYPE },
    state: { S: state.state },
    generation: { N: String(state.generation) },
    runAt: { S: state.runAt },
    runAtMs: { N: String(state.runAtMs) },
    queue: { S: state.queue },
    type: { S: state.type },
    source: { S: state.source },
    jobId: { S: state.jobId },
    ...(state.partitionKey === undefined ? {} : { partitionKey: { S: state.partitionKey } }),
    via: { S: state.via },
    ...(state.scheduleName === undefined ? {} : { scheduleName: { S: state.scheduleName } }),
    body: { S: state.body },
    expiresAt: { N: String(state.expiresAt) },
  };
}

/** Thrown when an item under a `schedule#` key is not a state item this version can read. */
export class ScheduledJobItemError extends Error {
  override readonly name = 'ScheduledJobItemError';
}

const STATES: ReadonlySet<string> = new Set(['pending', 'started', 'cancelled']);

/**
 * Reads a state item.
 * @throws {ScheduledJobItemError} naming the missing or malformed attribute.
 */
export function parseScheduledJobItem(item: Record<string, AttributeValue>): ScheduledJobState {
  const s = (name: string): string => {
    const value = item[name]?.S;
    if (value === undefined) throw new ScheduledJobItemError(`scheduled job item has no ${name}`);
    return value;
  };
  const n = (name: string): number => {
    const value = Number(item[name]?.N);
    if (!Number.isFinite(value)) throw new ScheduledJobItemError(`scheduled job item has no number ${name}`);
    return value;
  };
  const state = s('state');
  if (!STATES.has(state)) throw new ScheduledJobItemError(`scheduled job item has state ${state}`);
  const via = s('via');
  if (via !== 'schedule' && via !== 'delay')
    throw new ScheduledJobItemError(`scheduled job item has via ${via}`);
  return {
    pk: s('pk'),
    state: state as ScheduledJobStateName,
    generation: n('generation'),
    runAt: s('runAt'),
    runAtMs: n('runAtMs'),
    queue: s('queue'),
    type: s('type'),
    source: s('source'),
    jobId: s('jobId'),
    ...(item.partitionKey?.S === undefined ? {} : { partitionKey: item.partitionKey.S }),
    via,
    ...(item.scheduleName?.S === undefined ? {} : { scheduleName: item.scheduleName.S }),
    body: s('body'),
    expiresAt: n('expiresAt'),
  };
}

/** Whether a state item's TTL has passed (it then counts as absent). */
export function isExpiredState(state: Pick<ScheduledJobState, 'expiresAt'>, nowMs: number): boolean {
  return state.expiresAt * 1000 <= nowMs;
}
