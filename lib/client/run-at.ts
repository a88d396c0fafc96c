/**
 * When a job sent for later is due: the `runAt` or `delayMs` of a send (or a reschedule), checked
 * and turned into epoch milliseconds, and how it travels: SQS `DelaySeconds` (a standard queue, due
 * within 15 minutes) or a one-time EventBridge schedule (later, or any FIFO queue).
 *
 * Rules and their sources:
 * - SendMessage API: `DelaySeconds` 0–900 per message on standard queues only.
 * - EventBridge Scheduler, "Schedule types": `at(yyyy-mm-ddThh:mm:ss)` has whole seconds; the job's
 *   `runAt` is rounded up to the second there (never early).
 * - A `runAt` at or before now is due now: the job is sent at once (`DelaySeconds` 0, or straight
 *   to a FIFO queue), still as a job sent for later, so it can be cancelled until it starts. Like
 *   Sidekiq `perform_at` and BullMQ with a past timestamp; a clock a little behind the caller's
 *   must not make a send fail.
 * - A leap second (`:60`) is refused, naming the next second to pass: a JavaScript Date cannot
 *   represent it (ECMAScript time values count no leap seconds).
 * - At most {@link MAX_RUN_AT_DAYS} days ahead: sqs-jobs' own limit (the state item's lifetime,
 *   and a delay of years is more often milliseconds given as seconds than a plan).
 */
import { MAX_DELAY_SECONDS } from '../core/message-parameters.ts';
import { describeValue } from './option-keys.ts';

/** The furthest ahead a job can be sent for, in days. */
export const MAX_RUN_AT_DAYS = 366;
const MAX_RUN_AT_MS = MAX_RUN_AT_DAYS * 86_400_000;
// RFC 3339 date-time with a mandatory offset (as the envelope's `time`); Date.parse then reads it.
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The time options of a send: `runAt` or `delayMs` (one of them). */
export interface RunAtOptions {
  readonly runAt?: Date | string | undefined;
  readonly delayMs?: number | undefined;
}

/**
 * The instant a job is due, epoch ms, or the problem with the options; undefined when neither
 * `runAt` nor `delayMs` is given (an ordinary send).
 * @param where how the caller spelled the options (`options` for a send, `runAt` for a reschedule).
 */
export function runAtMsOf(
  options: RunAtOptions,
  nowMs: number,
  where = 'options',
): { runAtMs: number } | { problem: string } | undefined {
  const { runAt, delayMs } = options;
  if (runAt === undefined && delayMs === undefined) return undefined;
  if (runAt !== undefined && delayMs !== undefined) {
    return {
      problem: `${where}.runAt and ${where}.delayMs are both given: give one (a time, or a delay from now)`,
    };
  }
  let runAtMs: number;
  if (delayMs !== undefined) {
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
      return {
        problem: `${where}.delayMs must be a number of milliseconds >= 0, got ${describeValue(delayMs)}`,
      };
    }
    if (delayMs > MAX_RUN_AT_MS) {
      return {
        problem: `${where}.delayMs is ${delayMs} ms, more than ${MAX_RUN_AT_DAYS} days (the furthest a job can be sent for); check the units (delayMs is milliseconds)`,
      };
    }
    runAtMs = nowMs + delayMs;
  } else if (runAt instanceof Date) {
    runAtMs = runAt.getTime();
    if (Number.isNaN(runAtMs)) return { problem: `${where}.runAt is an invalid Date` };
  } else if (typeof runAt === 'string' && RFC_3339.test(runAt) && runAt.slice(17, 19) === '60') {
    return { problem: leapSecondProblem(runAt, where) };
  } else if (typeof runAt === 'string' && RFC_3339.test(runAt)) {
    // Date.parse rolls 2027-02-30 over to March 2 and 24:00 to the next day, and gives NaN for
    // 23:60: refuse what is no real time.
    if (Number.isNaN(Date.parse(runAt)) || !isRealDateTime(runAt)) {
      return {
        problem: `${where}.runAt ${JSON.stringify(runAt)} is not a real date and time (check the day of the month, the hour and the minute)`,
      };
    }
    runAtMs = Date.parse(runAt);
  } else {
    return {
      problem: `${where}.runAt must be a Date or an RFC 3339 time with an offset (e.g. 2026-12-24T18:00:00Z), got ${describeValue(runAt)}`,
    };
  }
  if (runAtMs - nowMs > MAX_RUN_AT_MS) {
    return {
      problem: `${where}.runAt is ${new Date(runAtMs).toISOString()}, more than ${MAX_RUN_AT_DAYS} days ahead (the furthest a job can be sent for); check the units (delayMs is milliseconds)`,
    };
  }
  return { runAtMs };
}

/**
 * How a job due at `runAtMs` travels, decided at send: `delay` with its `DelaySeconds` (rounded
 * up, so never early) on a standard queue when due within 900 seconds, and on a FIFO queue when
 * due now (0: sent at once); otherwise `schedule`.
 */
export function travelOf(
  runAtMs: number,
  nowMs: number,
  fifo: boolean,
): { via: 'delay'; delaySeconds: number } | { via: 'schedule' } {
  const delaySeconds = Math.max(0, Math.ceil((runAtMs - nowMs) / 1000));
  if (delaySeconds === 0) return { via: 'delay', delaySeconds: 0 };
  if (!fifo && delaySeconds <= MAX_DELAY_SECONDS) return { via: 'delay', delaySeconds };
  return { via: 'schedule' };
}

/**
 * Why a leap second (`23:59:60`, RFC 3339 section 5.7) is refused, and what to pass: JavaScript's
 * Date, and so the job's `runat`, counts no leap seconds (ECMAScript time values ignore them), so
 * `:60` cannot be represented; the job runs at the next second instead only if the caller says so,
 * never silently shifted.
 */
function leapSecondProblem(runAt: string, where: string): string {
  const next = Date.parse(`${runAt.slice(0, 17)}59${runAt.slice(19).replace(/^\.\d+/, '')}`) + 1000;
  const suggestion = Number.isNaN(next)
    ? 'the first second of the next minute'
    : `${new Date(next).toISOString().slice(0, 19)}Z, the next second`;
  return `${where}.runAt ${JSON.stringify(runAt)} is a leap second (:60), which a JavaScript Date cannot represent (ECMAScript time values count no leap seconds), so no job can be due at it: pass ${suggestion}`;
}

/** Whether the date and time fields of an RFC 3339 text name a real calendar day and clock time. */
function isRealDateTime(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const [hour, minute, second] = text.slice(11, 19).split(':').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(year, month - 1, day));
  return (
    probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day && hour < 24 && minute < 60 && second < 60
  );
}
