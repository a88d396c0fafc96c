/**
 * Queue URLs by logical queue name, as the `JobQueue` construct passes them to a Lambda:
 * `JOBS_QUEUE_URL_<NAME>` with `<NAME>` = the logical name upper-cased and `-` → `_`
 * (docs/contracts.md, "Environment of a worker Lambda").
 */

/** Prefix of the environment variables holding the URL of each queue a service sends to. */
export const QUEUE_URL_ENV_PREFIX = 'JOBS_QUEUE_URL_';

/**
 * What a producer does about an unknown queue, the end of the client's problem text (a worker's
 * child sender replaces it with the CDK fix: lib/runtime/child-sender.ts).
 */
export const UNKNOWN_QUEUE_ADVICE = 'pass its URL in queueUrls or set JOBS_QUEUE_URL_<NAME>';

/** Prefix of the variables naming each queue's EventBridge Scheduler schedule group (jobs sent for later). */
export const SCHEDULE_GROUP_ENV_PREFIX = 'JOBS_SCHEDULE_GROUP_';
/** Prefix of the variables naming the role each queue's schedules deliver with. */
export const SCHEDULER_ROLE_ENV_PREFIX = 'JOBS_SCHEDULER_ROLE_ARN_';
/** Prefix of the variables naming the ARN of each queue's schedule dead-letter queue (deliveries Scheduler gave up on). */
export const SCHEDULE_DLQ_ARN_ENV_PREFIX = 'JOBS_SCHEDULE_DLQ_ARN_';

/** `<prefix><NAME>`: `<NAME>` = the logical queue name upper-cased, `-` → `_` (docs/contracts.md). */
function perQueueEnvName(prefix: string, queue: string): string {
  return `${prefix}${queue.toUpperCase().replaceAll('-', '_')}`;
}

/**
 * Name of the environment variable carrying a logical queue's URL.
 * @example queueUrlEnvName('booking-retries') === 'JOBS_QUEUE_URL_BOOKING_RETRIES'
 */
export function queueUrlEnvName(queue: string): string {
  return perQueueEnvName(QUEUE_URL_ENV_PREFIX, queue);
}

/** The schedule-group variable of a queue, e.g. `JOBS_SCHEDULE_GROUP_BOOKING` (set by `jobQueue.grantScheduleJobs`). */
export function scheduleGroupEnvName(queue: string): string {
  return perQueueEnvName(SCHEDULE_GROUP_ENV_PREFIX, queue);
}

/** The scheduler-role variable of a queue, e.g. `JOBS_SCHEDULER_ROLE_ARN_BOOKING` (set by `jobQueue.grantScheduleJobs`). */
export function schedulerRoleEnvName(queue: string): string {
  return perQueueEnvName(SCHEDULER_ROLE_ENV_PREFIX, queue);
}

/** The schedule-DLQ variable of a queue, e.g. `JOBS_SCHEDULE_DLQ_ARN_BOOKING` (set by `jobQueue.grantScheduleJobs`). */
export function scheduleDlqArnEnvName(queue: string): string {
  return perQueueEnvName(SCHEDULE_DLQ_ARN_ENV_PREFIX, queue);
}

/**
 * Reads every `JOBS_QUEUE_URL_<NAME>` variable and maps it back to the logical queue name:
 * `<NAME>` lower-cased with `_` → `-` (so `JOBS_QUEUE_URL_BOOKING_RETRIES` → `booking-retries`).
 * Logical names therefore use lowercase letters, digits and dashes; an underscore in a logical
 * name does not survive the round trip. Empty values are skipped. `JOBS_QUEUE_URL` (no suffix,
 * the worker's own queue) is not included.
 *
 * @param env the environment to read. @default process.env
 * @returns logical queue name → queue URL, e.g. `{ booking: 'https://sqs.eu-west-1.amazonaws.com/123/booking.fifo' }`.
 */
export function queueUrlsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith(QUEUE_URL_ENV_PREFIX) || key.length === QUEUE_URL_ENV_PREFIX.length) continue;
    const url = value?.trim();
    if (!url) continue;
    urls[key.slice(QUEUE_URL_ENV_PREFIX.length).toLowerCase().replaceAll('_', '-')] = url;
  }
  return urls;
}

/**
 * Whether a queue URL names a FIFO queue: FIFO queue names end in `.fifo`
 * (Amazon SQS Developer Guide, "Amazon SQS FIFO queue key terms" / CreateQueue API, QueueName).
 * The name is the last segment of the path: trailing slashes, a query and a fragment are not
 * part of it (`…/booking.fifo/` is the FIFO queue `booking.fifo`).
 */
export function isFifoQueueUrl(url: string): boolean {
  return url
    .replace(/[?#].*$/s, '')
    .replace(/\/+$/, '')
    .endsWith('.fifo');
}
