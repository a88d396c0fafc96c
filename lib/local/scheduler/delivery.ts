/**
 * One firing of a schedule delivered as EventBridge Scheduler delivers to its templated SQS
 * target: SendMessage of the target's `Input` (context attributes substituted, lib/core/
 * scheduler-context.ts) to the queue the target ARN names, with `SqsParameters.MessageGroupId`;
 * on failure, retries under the target's `RetryPolicy` and then the dead-letter event to its
 * `DeadLetterConfig` queue (EventBridge Scheduler User Guide, "Configuring a dead-letter queue"):
 * the body is the payload that could not be delivered, with the message attributes
 * `ERROR_CODE`, `ERROR_MESSAGE`, `EXECUTION_ID`, `EXHAUSTED_RETRY_CONDITION` (retryable errors
 * only: `MaximumRetryAttempts` or `MaximumEventAgeInSeconds`), `IS_PAYLOAD_TRUNCATED`,
 * `RETRY_ATTEMPTS`, `SCHEDULED_TIME`, `SCHEDULE_ARN`, `TARGET_ARN`.
 *
 * Local choices (AWS does not document its own): retries wait 1 s, 2 s, 4 s... capped at 60 s,
 * without jitter; SQS errors whose code says the request itself is wrong (`Invalid...`,
 * `Missing...`, `Unsupported...`) are permanent (dead-lettered at once, no
 * `EXHAUSTED_RETRY_CONDITION`); every other failure (a deleted queue among them, as in AWS's
 * example) is retried. Without a dead-letter queue, or when that send fails too, the event is
 * dropped (AWS counts it as `InvocationDroppedCount`) and a note says so.
 */
import { randomBytes } from 'node:crypto';
import { type MessageAttributeValue, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { substituteContextAttributes } from '../../core/scheduler-context.ts';
import type { SchedulerClock } from './clock.ts';
import { DEFAULT_RETRY_POLICY, type Schedule } from './store.ts';

/** What became of one firing. */
export interface FiringRecord {
  readonly scheduleArn: string;
  readonly name: string;
  readonly groupName: string;
  /** The substituted `<aws.scheduler.scheduled-time>`. */
  readonly scheduledTime: string;
  readonly executionId: string;
  /** An operator's firing (fire now), not the schedule's. */
  readonly manual: boolean;
  /** Times the payload is sent on success: 2 when the firing is delivered twice (duplicate fault). */
  readonly copies: number;
  /** Epoch milliseconds of the first attempt. */
  readonly firedAtMs: number;
  outcome: 'pending' | 'delivered' | 'dead-lettered' | 'dropped';
  /** Attempts made (1 + retries). */
  attempts: number;
  /** SQS message ids of the delivered copies, or of the dead-letter event. */
  readonly messageIds: string[];
  /** The last error, when an attempt failed. */
  error?: { readonly code: string; readonly message: string };
}

/** What a delivery needs. */
export interface DeliveryContext {
  /** The client that sends to the queues (Scheduler's side: exempt from the runtime's faults). */
  readonly sqs: SQSClient;
  /** The queue URL of a queue ARN. @throws the SQS error when the queue does not exist. */
  readonly queueUrlOf: (arn: string) => Promise<string>;
  readonly clock: SchedulerClock;
  /** Stops waiting retries: a firing still retrying when it aborts is left `pending`. */
  readonly signal: AbortSignal;
  readonly onNote: (note: string) => void;
  /** Told +1 when the delivery starts working and -1 when it stops (settled, or waiting for a retry). */
  readonly busy?: (delta: 1 | -1) => void;
}

/** Most a retry waits, in milliseconds. */
const MAX_RETRY_DELAY_MS = 60_000;

/** A new execution id: 16 lower-case hex characters, as AWS's (`d32c5kddcf5bb8c3`). */
export function newExecutionId(): string {
  return randomBytes(8).toString('hex');
}

/** The error code Scheduler reports for an SQS error (a missing queue as SQS's query code, AWS's example). */
export function sqsErrorCode(error: unknown): string {
  const e = error as { name?: string; Code?: string };
  const code = e?.Code ?? e?.name ?? 'UnknownError';
  if (/QueueDoesNotExist|NonExistentQueue/.test(code)) return 'AWS.SimpleQueueService.NonExistentQueue';
  return code;
}

function isPermanent(code: string): boolean {
  return (
    /^(AWS\.SimpleQueueService\.)?(Invalid|Missing|Unsupported)/.test(code) && !/NonExistentQueue/.test(code)
  );
}

function waitUntil(clock: SchedulerClock, atMs: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    const cancel = clock.at(atMs, () => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Delivers `record`'s firing of `schedule` (the schedule as it was when it fired) to its target,
 * retrying and dead-lettering as the module comment says; resolves once the firing is settled
 * (or the context's signal aborted a wait). `record` is updated as it goes.
 */
export async function deliverFiring(
  schedule: Schedule,
  record: FiringRecord,
  ctx: DeliveryContext,
): Promise<FiringRecord> {
  ctx.busy?.(1);
  try {
    return await attempts(schedule, record, ctx);
  } finally {
    ctx.busy?.(-1);
  }
}

async function attempts(
  schedule: Schedule,
  record: FiringRecord,
  ctx: DeliveryContext,
): Promise<FiringRecord> {
  const target = schedule.Target;
  const policy = { ...DEFAULT_RETRY_POLICY, ...target.RetryPolicy };
  let body = '';
  for (;;) {
    record.attempts += 1;
    body = substituteContextAttributes(target.Input ?? '', {
      scheduleArn: schedule.Arn,
      scheduledTime: record.scheduledTime,
      executionId: record.executionId,
      attemptNumber: record.attempts,
    });
    try {
      const queueUrl = await ctx.queueUrlOf(target.Arn);
      for (let copy = record.messageIds.length; copy < record.copies; copy++) {
        const sent = await ctx.sqs.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: body,
            MessageGroupId: target.SqsParameters?.MessageGroupId,
          }),
        );
        record.messageIds.push(sent.MessageId ?? '');
      }
      record.outcome = 'delivered';
      return record;
    } catch (error) {
      record.error = { code: sqsErrorCode(error), message: (error as Error).message };
    }
    const code = (record.error as { code: string }).code;
    if (isPermanent(code)) return deadLetter(schedule, record, body, undefined, ctx);
    const retries = record.attempts - 1;
    if (retries >= policy.MaximumRetryAttempts)
      return deadLetter(schedule, record, body, 'MaximumRetryAttempts', ctx);
    const retryAt = ctx.clock.now() + Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** retries);
    if (retryAt - record.firedAtMs > policy.MaximumEventAgeInSeconds * 1000)
      return deadLetter(schedule, record, body, 'MaximumEventAgeInSeconds', ctx);
    ctx.busy?.(-1);
    const due = await waitUntil(ctx.clock, retryAt, ctx.signal);
    ctx.busy?.(1);
    if (!due) return record;
  }
}

async function deadLetter(
  schedule: Schedule,
  record: FiringRecord,
  body: string,
  exhausted: 'MaximumRetryAttempts' | 'MaximumEventAgeInSeconds' | undefined,
  ctx: DeliveryContext,
): Promise<FiringRecord> {
  const error = record.error as { code: string; message: string };
  const dlqArn = schedule.Target.DeadLetterConfig?.Arn;
  const what = `schedule ${schedule.GroupName}/${schedule.Name} firing ${record.scheduledTime} (execution ${record.executionId})`;
  if (dlqArn === undefined) {
    record.outcome = 'dropped';
    ctx.onNote(
      `${what} could not be delivered (${error.code}: ${error.message}) and has no dead-letter queue: dropped`,
    );
    return record;
  }
  const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });
  const attributes: Record<string, MessageAttributeValue> = {
    ERROR_CODE: text(error.code),
    ERROR_MESSAGE: text(error.message || error.code),
    EXECUTION_ID: text(record.executionId),
    IS_PAYLOAD_TRUNCATED: text('false'),
    RETRY_ATTEMPTS: text(String(record.attempts - 1)),
    SCHEDULED_TIME: text(record.scheduledTime),
    SCHEDULE_ARN: text(schedule.Arn),
    TARGET_ARN: text(schedule.Target.Arn),
  };
  if (exhausted !== undefined) attributes.EXHAUSTED_RETRY_CONDITION = text(exhausted);
  try {
    const sent = await ctx.sqs.send(
      new SendMessageCommand({
        QueueUrl: await ctx.queueUrlOf(dlqArn),
        MessageBody: body || ' ',
        MessageAttributes: attributes,
      }),
    );
    record.messageIds.push(sent.MessageId ?? '');
    record.outcome = 'dead-lettered';
  } catch (dlqError) {
    record.outcome = 'dropped';
    ctx.onNote(
      `${what} could not be delivered (${error.code}) nor sent to its dead-letter queue ${dlqArn} (${sqsErrorCode(dlqError)}): dropped`,
    );
  }
  return record;
}
