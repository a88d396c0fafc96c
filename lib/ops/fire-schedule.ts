/**
 * An operator's "fire now" of a recurring schedule ("run tonight's invoices now"), on AWS or on
 * the local runtime alike: EventBridge Scheduler has no "invoke now" action, so this reads the
 * schedule (GetSchedule) and sends its target `Input` to its SQS queue itself, as Scheduler would,
 * with the context attributes substituted (lib/core/scheduler-context.ts) and
 * `<aws.scheduler.scheduled-time>` = the request time with milliseconds: a job identity distinct
 * from every real firing's. The schedule itself is not changed. For the `sqs-jobs schedules fire`
 * command.
 */
import { randomBytes } from 'node:crypto';
import { GetScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetQueueUrlCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { manualScheduledTime, substituteContextAttributes } from '../core/scheduler-context.ts';

/** Inputs of {@link fireScheduleNow}. */
export interface FireScheduleNowInput {
  readonly scheduler: Pick<SchedulerClient, 'send'>;
  /** A client for the region of the schedule's target queue. */
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly name: string;
  /** @default 'default' */
  readonly groupName?: string;
  /** Send the firing twice (to show that idempotency absorbs a duplicate). @default false */
  readonly duplicate?: boolean;
  /** @default new Date() */
  readonly now?: Date;
}

/** What {@link fireScheduleNow} sent. */
export interface FiredSchedule {
  readonly scheduleArn: string;
  /** The substituted `<aws.scheduler.scheduled-time>`. */
  readonly scheduledTime: string;
  readonly executionId: string;
  readonly queueUrl: string;
  /** The `id` of the job envelope sent (`<name>@<scheduled time>` for a recurring job); undefined when the Input is not a JSON object with a string `id`. */
  readonly jobId: string | undefined;
  /** One SQS message id per copy sent. */
  readonly messageIds: readonly string[];
}

/**
 * Fires schedule `name` now. Its target must be an SQS queue (the templated SQS target).
 * @throws the SDK's `ResourceNotFoundException` when there is no such schedule, `QueueDoesNotExist`
 *   when its queue is gone, and an Error when its target is not an SQS queue.
 */
export async function fireScheduleNow(input: FireScheduleNowInput): Promise<FiredSchedule> {
  const schedule = await input.scheduler.send(
    new GetScheduleCommand({ Name: input.name, GroupName: input.groupName }),
  );
  const target = schedule.Target;
  const arn = target?.Arn ?? '';
  const [, , service, , account, queueName] = arn.split(':');
  if (service !== 'sqs' || queueName === undefined)
    throw new Error(
      `schedule ${input.name} targets ${arn || 'nothing'}, not an SQS queue: fire it from its target's console instead`,
    );
  const { QueueUrl } = await input.sqs.send(
    new GetQueueUrlCommand({ QueueName: queueName, QueueOwnerAWSAccountId: account }),
  );
  const scheduledTime = manualScheduledTime(input.now ?? new Date());
  const executionId = randomBytes(8).toString('hex');
  const body = substituteContextAttributes(target?.Input ?? '', {
    scheduleArn: schedule.Arn ?? '',
    scheduledTime,
    executionId,
    attemptNumber: 1,
  });
  const messageIds: string[] = [];
  for (let copy = 0; copy < (input.duplicate ? 2 : 1); copy++) {
    const sent = await input.sqs.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: body,
        MessageGroupId: target?.SqsParameters?.MessageGroupId,
      }),
    );
    messageIds.push(sent.MessageId ?? '');
  }
  return {
    scheduleArn: schedule.Arn ?? '',
    scheduledTime,
    executionId,
    queueUrl: QueueUrl ?? '',
    jobId: jobIdOf(body),
    messageIds,
  };
}

/** The envelope `id` of a message body, when it is a JSON object with a string `id`. */
function jobIdOf(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown } | null)?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
