/**
 * The one-time EventBridge Scheduler schedules of jobs sent for later: create (idempotent by name
 * and `ClientToken`), move (UpdateSchedule), delete. Loaded only when a job goes as a schedule or
 * is cancelled or rescheduled (with `@aws-sdk/client-scheduler`).
 *
 * Rules and their sources (EventBridge Scheduler API reference and User Guide):
 * - CreateSchedule: a second schedule of the same name in the group fails with
 *   `ConflictException`; `ClientToken` (1–64 characters) makes a retried request idempotent.
 * - `at(yyyy-mm-ddThh:mm:ss)` with `ScheduleExpressionTimezone` `UTC`; `ActionAfterCompletion:
 *   DELETE` removes the schedule after its invocation; `FlexibleTimeWindow: { Mode: 'OFF' }` fires
 *   at the time.
 * - The SQS templated target: `Arn` = the queue ARN, `RoleArn` = the role Scheduler assumes,
 *   `Input` = the message body (at most 256 KB), `SqsParameters.MessageGroupId` on FIFO queues (the
 *   queue then needs content-based deduplication: the target sets no deduplication id),
 *   `DeadLetterConfig.Arn` = the standard queue a message goes to when Scheduler gives up
 *   (User Guide, "Configuring a dead-letter queue"; without it the message is dropped).
 * - UpdateSchedule replaces the whole definition (every field is sent again).
 * - Get/Update/DeleteSchedule of an absent schedule fail with `ResourceNotFoundException` (a
 *   one-time schedule that fired is gone: ActionAfterCompletion DELETE).
 */
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { atExpressionOf } from '../core/schedule-expression.ts';
import type { SchedulerSender } from './scheduling.ts';

/** What a one-time schedule of a job is. */
export interface OneTimeSchedule {
  readonly name: string;
  readonly groupName: string;
  /** When it fires, epoch ms (rounded up to the second: never early). */
  readonly runAtMs: number;
  readonly queueArn: string;
  readonly roleArn: string;
  /** The SQS message body: the job's envelope JSON. */
  readonly body: string;
  /** FIFO queues: the `MessageGroupId` (the envelope's `partitionkey`). */
  readonly messageGroupId?: string;
  /** The schedule dead-letter queue (`Target.DeadLetterConfig.Arn`): where Scheduler puts the message when it gives up. */
  readonly deadLetterQueueArn?: string;
  /** Shown in the console and `aws scheduler get-schedule`, e.g. `sqs-jobs booking.expire-hold b-1`. */
  readonly description: string;
}

/** Largest `Description` of a schedule (CreateSchedule API). */
const MAX_DESCRIPTION_CHARS = 512;

/** The definition of a schedule, as CreateSchedule and UpdateSchedule take it. */
export function scheduleRequest(schedule: OneTimeSchedule): CreateScheduleCommandInput {
  return {
    Name: schedule.name,
    GroupName: schedule.groupName,
    ScheduleExpression: atExpressionOf(new Date(schedule.runAtMs)),
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    ActionAfterCompletion: 'DELETE',
    State: 'ENABLED',
    Description: schedule.description.slice(0, MAX_DESCRIPTION_CHARS),
    Target: {
      Arn: schedule.queueArn,
      RoleArn: schedule.roleArn,
      Input: schedule.body,
      ...(schedule.deadLetterQueueArn === undefined
        ? {}
        : { DeadLetterConfig: { Arn: schedule.deadLetterQueueArn } }),
      ...(schedule.messageGroupId === undefined
        ? {}
        : { SqsParameters: { MessageGroupId: schedule.messageGroupId } }),
    },
  };
}

/** Whether an SDK error is a `ResourceNotFoundException`. */
function isNotFound(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'ResourceNotFoundException';
}

/** Thrown when a schedule of the job's name exists with another message: not this send's. */
export class ScheduleConflictError extends Error {
  override readonly name = 'ScheduleConflictError';
}

/**
 * Creates the schedule; a `ConflictException` is success when the schedule there has the same
 * message (this send, retried after a lost response or a crash).
 * @returns `created`, or `existed` (the same schedule was there).
 * @throws {ScheduleConflictError} when the schedule there sends another message.
 */
export async function createOneTimeSchedule(
  scheduler: SchedulerSender,
  schedule: OneTimeSchedule,
): Promise<'created' | 'existed'> {
  try {
    // The name is unique per job and generation: as a ClientToken it makes an SDK retry idempotent.
    await scheduler.send(
      new CreateScheduleCommand({ ...scheduleRequest(schedule), ClientToken: schedule.name }),
    );
    return 'created';
  } catch (error) {
    if (!(error instanceof ConflictException) && (error as { name?: unknown })?.name !== 'ConflictException')
      throw error;
    const existing = await getSchedule(scheduler, schedule.name, schedule.groupName);
    if (existing?.Target?.Input === schedule.body) return 'existed';
    // Gone between the two calls: it fired (ActionAfterCompletion DELETE): the job is on its way.
    if (existing === undefined) return 'existed';
    throw new ScheduleConflictError(
      `schedule ${schedule.groupName}/${schedule.name} already exists with another message: the job was sent for later before; cancel or reschedule it`,
    );
  }
}

/** GetSchedule, or undefined when there is none. */
export async function getSchedule(
  scheduler: SchedulerSender,
  name: string,
  groupName: string,
): Promise<GetScheduleCommandOutput | undefined> {
  try {
    return (await scheduler.send(
      new GetScheduleCommand({ Name: name, GroupName: groupName }),
    )) as GetScheduleCommandOutput;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Moves an existing schedule to a new time and message. No `ClientToken` of ours: the SDK makes a
 * fresh one per call, so a second reschedule is never taken for a retry of the first.
 * @returns `not-found` when it already fired or was deleted.
 */
export async function updateOneTimeSchedule(
  scheduler: SchedulerSender,
  schedule: OneTimeSchedule,
): Promise<'updated' | 'not-found'> {
  try {
    await scheduler.send(new UpdateScheduleCommand(scheduleRequest(schedule)));
    return 'updated';
  } catch (error) {
    if (isNotFound(error)) return 'not-found';
    throw error;
  }
}

/** Deletes a schedule. @returns `not-found` when it already fired or was deleted (fine for a cancel). */
export async function deleteOneTimeSchedule(
  scheduler: SchedulerSender,
  name: string,
  groupName: string,
): Promise<'deleted' | 'not-found'> {
  try {
    await scheduler.send(new DeleteScheduleCommand({ Name: name, GroupName: groupName }));
    return 'deleted';
  } catch (error) {
    if (isNotFound(error)) return 'not-found';
    throw error;
  }
}
