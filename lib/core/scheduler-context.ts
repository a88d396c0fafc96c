/**
 * EventBridge Scheduler's context attributes, substituted inside a schedule target's `Input` when
 * the schedule invokes its target, as AWS does it (EventBridge Scheduler User Guide, "Adding
 * context attributes"): `<aws.scheduler.schedule-arn>`, `<aws.scheduler.scheduled-time>` (e.g.
 * `2022-03-22T18:59:43Z`: UTC, whole seconds, no fraction), `<aws.scheduler.execution-id>` (e.g.
 * `d32c5kddcf5bb8c3`) and `<aws.scheduler.attempt-number>` (`1` for the first attempt).
 *
 * Shared by the local Scheduler emulator (which fires schedules) and the operator's "fire now"
 * (which sends a recurring schedule's `Input` itself), so both write the same bodies.
 *
 * An operator's firing gets a scheduled time of its own ({@link manualScheduledTime}): the ISO
 * time of the request WITH milliseconds (`2026-12-01T23:00:00.000Z`). It is a valid RFC 3339 time
 * (a job envelope's `time` must be one), and as a string it can never equal a real firing's
 * scheduled time, which AWS always writes without a fraction; so a job id made of the schedule
 * name and the scheduled time never collides with the real firing's.
 */

/** The values substituted for the context attributes of one invocation attempt. */
export interface SchedulerContext {
  /** ARN of the schedule, `arn:aws:scheduler:<region>:<account>:schedule/<group>/<name>`. */
  readonly scheduleArn: string;
  /** The firing's scheduled time, as written by {@link scheduledTimeText} or {@link manualScheduledTime}. */
  readonly scheduledTime: string;
  /** One id per firing (kept across its retries), 16 lower-case hex characters on AWS. */
  readonly executionId: string;
  /** 1 for the first attempt, 2 for the first retry... */
  readonly attemptNumber: number;
}

/** The context attribute keywords, as written in a target's `Input`. */
export const CONTEXT_ATTRIBUTES = {
  scheduleArn: '<aws.scheduler.schedule-arn>',
  scheduledTime: '<aws.scheduler.scheduled-time>',
  executionId: '<aws.scheduler.execution-id>',
  attemptNumber: '<aws.scheduler.attempt-number>',
} as const;

/** A firing's scheduled time as AWS writes it: UTC, whole seconds, `Z` (`2022-03-22T18:59:43Z`). */
export function scheduledTimeText(instant: Date): string {
  return `${instant.toISOString().slice(0, 19)}Z`;
}

/**
 * The scheduled time of an operator's firing ("run tonight's invoices now"): the request time with
 * milliseconds, `2026-12-01T23:00:00.000Z`. See the module comment for why it never collides.
 */
export function manualScheduledTime(now: Date): string {
  return now.toISOString();
}

/** True when `scheduledTime` is an operator's firing ({@link manualScheduledTime}), not a schedule's. */
export function isManualScheduledTime(scheduledTime: string): boolean {
  return /\.\d{3}Z$/.test(scheduledTime);
}

/**
 * `input` with every context attribute keyword replaced by its value. Other text, including other
 * `<aws.scheduler.*>` words, is left as it is (AWS substitutes only the four it documents).
 */
export function substituteContextAttributes(input: string, context: SchedulerContext): string {
  return input
    .replaceAll(CONTEXT_ATTRIBUTES.scheduleArn, context.scheduleArn)
    .replaceAll(CONTEXT_ATTRIBUTES.scheduledTime, context.scheduledTime)
    .replaceAll(CONTEXT_ATTRIBUTES.executionId, context.executionId)
    .replaceAll(CONTEXT_ATTRIBUTES.attemptNumber, String(context.attemptNumber));
}
