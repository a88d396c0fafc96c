/**
 * A message read from a dead-letter queue, with the evidence the worker wrote as message
 * attributes (docs/contracts.md, "DLQ evidence"; written by lib/runtime/dead-letter.ts) and the
 * job's identity read from the body when the body is a job envelope.
 *
 * A message moved into the DLQ by the queue's own redrive policy (receive count above
 * `maxReceiveCount`: a crash, a timeout, throttling) carries no evidence: its reason is
 * {@link NO_EVIDENCE_REASON}.
 */
import { createHash } from 'node:crypto';
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import { EVIDENCE_TRUNCATED_ATTRIBUTE } from '../runtime/dead-letter.ts';

/** Reason of a message without an `ErrorReason` attribute (moved by `maxReceiveCount`, not by the worker). */
export const NO_EVIDENCE_REASON = 'no-evidence';
/**
 * Reason of an EventBridge Scheduler dead-letter event (a schedule's DLQ): Scheduler gave up
 * delivering a firing or a one-time job to its queue; its `ERROR_CODE` is the error name.
 */
export const SCHEDULE_DELIVERY_REASON = 'schedule-delivery-failed';
/** Job type of a message with neither a `JobType` attribute nor a readable envelope `type`. */
export const UNKNOWN_JOB_TYPE = '(unknown)';
/** Error name of a message without an `ErrorName` attribute. */
export const NO_ERROR_NAME = '(none)';

/** Names of the evidence attributes (docs/contracts.md), as `MessageAttributeNames` to receive. */
export const EVIDENCE_ATTRIBUTE_NAMES = [
  'JobType',
  'ErrorName',
  'ErrorMessage',
  'ErrorStack',
  'ErrorReason',
  'Attempts',
  'FirstFailureAt',
  'LastFailureAt',
  'HandlerVersion',
  'SourceMessageId',
] as const;

/** The evidence attributes of one message; each is absent when the worker did not write it. */
export interface DeadLetterEvidenceAttributes {
  readonly jobType?: string;
  readonly errorName?: string;
  readonly errorMessage?: string;
  readonly errorStack?: string;
  readonly errorReason?: string;
  /** Runs made, the failing one included. */
  readonly attempts?: number;
  /** ISO 8601. */
  readonly firstFailureAt?: string;
  /** ISO 8601. */
  readonly lastFailureAt?: string;
  readonly handlerVersion?: string;
  /** SQS messageId of the record on the source queue when it was dead-lettered. */
  readonly sourceMessageId?: string;
}

/**
 * The identity of the job in a body, read leniently (a dead-lettered body may be a bad envelope),
 * with its lineage: the DLQ message keeps the original body, which carries it (docs/contracts.md,
 * "Lineage and trace context"), while the 10 message attributes SQS allows hold the evidence.
 */
export interface JobIdentity {
  /** Envelope `id`. */
  readonly id: string;
  /** Envelope `source`, when present. */
  readonly source: string | undefined;
  /** Envelope `type`, when present. */
  readonly type: string | undefined;
  /** Envelope `partitionkey`, when present. */
  readonly partitionKey: string | undefined;
  /** Envelope `causationid`: the parent job's id (children only). */
  readonly parentId?: string;
  /** Envelope `rootid`: the chain's first job's id (children only). */
  readonly rootId?: string;
  /** Envelope `parentjob`: the parent's job reference `<type>#<key>` (children only). */
  readonly parentJob?: string;
  /** Envelope `correlationid`, when present. */
  readonly correlationId?: string;
  /** Envelope `traceparent`, when present. */
  readonly traceparent?: string;
  /** The trace id of `traceparent` (its 32 hex digits after the version), when it has that shape. */
  readonly traceId?: string;
}

/** What EventBridge Scheduler's attributes say of an undelivered firing. */
export interface ScheduleDeliveryFailure {
  /** `ERROR_CODE`, e.g. `AWS.SimpleQueueService.NonExistentQueue` (the queue was deleted). */
  readonly errorCode: string;
  readonly errorMessage: string | undefined;
  /** `RETRY_ATTEMPTS`: retries made before giving up. */
  readonly retryAttempts: number | undefined;
  /** `EXHAUSTED_RETRY_CONDITION`: `MaximumRetryAttempts` or `MaximumEventAgeInSeconds` (retryable errors only). */
  readonly exhaustedRetryCondition: string | undefined;
  readonly scheduledTime: string | undefined;
  readonly scheduleArn: string | undefined;
  readonly targetArn: string | undefined;
  readonly executionId: string | undefined;
}

/** The Scheduler attributes of a message, when it carries `ERROR_CODE` and `SCHEDULE_ARN`. */
function scheduleDeliveryOf(
  attrs: Readonly<Record<string, MessageAttributeValue>>,
): ScheduleDeliveryFailure | undefined {
  const text = (name: string) => {
    const value = attrs[name]?.StringValue;
    return value === undefined || value === '' ? undefined : value;
  };
  const errorCode = text('ERROR_CODE');
  if (errorCode === undefined || text('SCHEDULE_ARN') === undefined) return undefined;
  const retries = Number(text('RETRY_ATTEMPTS'));
  return {
    errorCode,
    errorMessage: text('ERROR_MESSAGE'),
    retryAttempts: text('RETRY_ATTEMPTS') === undefined || !Number.isFinite(retries) ? undefined : retries,
    exhaustedRetryCondition: text('EXHAUSTED_RETRY_CONDITION'),
    scheduledTime: text('SCHEDULED_TIME'),
    scheduleArn: text('SCHEDULE_ARN'),
    targetArn: text('TARGET_ARN'),
    executionId: text('EXECUTION_ID'),
  };
}

/** One DLQ message as the operations use it. */
export interface DeadLetterMessage {
  /** The message's id in the DLQ. */
  readonly messageId: string;
  /** The receipt handle of the latest receive (needed to delete or release it). */
  readonly receiptHandle: string;
  /** The original body, unchanged. */
  readonly body: string;
  readonly evidence: DeadLetterEvidenceAttributes;
  /** Whether any evidence attribute is present. */
  readonly hasEvidence: boolean;
  /**
   * EventBridge Scheduler's dead-letter event attributes, when the message is one (a schedule's
   * DLQ: the body is the payload Scheduler could not deliver; EventBridge Scheduler User Guide,
   * "Configuring a schedule's dead-letter queue"). Absent on the DLQ of a job queue.
   */
  readonly scheduleDelivery?: ScheduleDeliveryFailure;
  /** The job in the body, when the body is a JSON object with a string `id`. */
  readonly job: JobIdentity | undefined;
  /** `JobType` attribute, else the body's `type`, else {@link UNKNOWN_JOB_TYPE}. */
  readonly jobType: string;
  /** `ErrorReason` attribute, else {@link NO_EVIDENCE_REASON}. */
  readonly reason: string;
  /** `ErrorName` attribute, else {@link NO_ERROR_NAME}. */
  readonly errorName: string;
  /** FIFO DLQs: the message group (system attribute `MessageGroupId`). */
  readonly messageGroupId: string | undefined;
  /** FIFO DLQs: `SequenceNumber`. */
  readonly sequenceNumber: string | undefined;
  /** `SentTimestamp`: when the message entered the DLQ, epoch ms. */
  readonly sentAtMs: number | undefined;
  /** `ApproximateReceiveCount` in the DLQ (listing raises it). */
  readonly receiveCount: number | undefined;
  /**
   * Identity used to recognise the same job when it comes back: `source` + `id` of the envelope,
   * else a SHA-256 of the body (`body:<hex>`).
   */
  readonly jobKey: string;
  /**
   * Every message attribute as received (the evidence and any other), to send the message on
   * unchanged (the report's FIFO read, lib/sample/workload/dead-letters.ts). Not part of any output.
   */
  readonly messageAttributes: Readonly<Record<string, MessageAttributeValue>>;
}

function readIdentity(body: string): JobIdentity | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const obj = parsed as Record<string, unknown>;
  const text = (key: string) => (typeof obj[key] === 'string' && obj[key] !== '' ? obj[key] : undefined);
  const id = text('id');
  if (id === undefined) return undefined;
  const identity: { -readonly [K in keyof JobIdentity]: JobIdentity[K] } = {
    id,
    source: text('source'),
    type: text('type'),
    partitionKey: text('partitionkey'),
  };
  const lineage = {
    parentId: text('causationid'),
    rootId: text('rootid'),
    parentJob: text('parentjob'),
    correlationId: text('correlationid'),
    traceparent: text('traceparent'),
  };
  for (const [key, value] of Object.entries(lineage)) {
    if (value !== undefined) identity[key as keyof typeof lineage] = value;
  }
  const traceparent = identity.traceparent;
  if (traceparent !== undefined && /^[0-9a-f]{2}-[0-9a-f]{32}-/.test(traceparent)) {
    identity.traceId = traceparent.slice(3, 35);
  }
  return identity;
}

/** {@link DeadLetterMessage.jobKey} of a body. */
export function jobKeyOf(body: string, job: JobIdentity | undefined = readIdentity(body)): string {
  if (job !== undefined) return JSON.stringify([job.source ?? '', job.id]);
  return `body:${createHash('sha256').update(body).digest('hex')}`;
}

/**
 * Reads a received message (with `MessageAttributeNames: ['All']` and
 * `MessageSystemAttributeNames: ['All']`).
 */
export function toDeadLetterMessage(message: Message): DeadLetterMessage {
  const attrs = message.MessageAttributes ?? {};
  const text = (name: (typeof EVIDENCE_ATTRIBUTE_NAMES)[number]): string | undefined => {
    const value = attrs[name]?.StringValue;
    return value === undefined || value === '' ? undefined : value;
  };
  const attemptsText = text('Attempts');
  const attempts = attemptsText === undefined ? undefined : Number(attemptsText);
  const evidence: DeadLetterEvidenceAttributes = Object.fromEntries(
    Object.entries({
      jobType: text('JobType'),
      errorName: text('ErrorName'),
      errorMessage: text('ErrorMessage'),
      errorStack: text('ErrorStack'),
      errorReason: text('ErrorReason'),
      attempts: attempts !== undefined && Number.isFinite(attempts) ? attempts : undefined,
      firstFailureAt: text('FirstFailureAt'),
      lastFailureAt: text('LastFailureAt'),
      handlerVersion: text('HandlerVersion'),
      sourceMessageId: text('SourceMessageId'),
    }).filter(([, value]) => value !== undefined),
  );
  const body = message.Body ?? '';
  const job = readIdentity(body);
  const system = message.Attributes ?? {};
  const number = (value: string | undefined) => {
    const n = Number(value);
    return value === undefined || !Number.isFinite(n) ? undefined : n;
  };
  const hasEvidence = Object.keys(evidence).length > 0;
  const scheduleDelivery = hasEvidence ? undefined : scheduleDeliveryOf(attrs);
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body,
    evidence,
    hasEvidence,
    ...(scheduleDelivery === undefined ? {} : { scheduleDelivery }),
    job,
    jobType: evidence.jobType ?? job?.type ?? UNKNOWN_JOB_TYPE,
    reason:
      evidence.errorReason ??
      (scheduleDelivery === undefined ? NO_EVIDENCE_REASON : SCHEDULE_DELIVERY_REASON),
    errorName: evidence.errorName ?? scheduleDelivery?.errorCode ?? NO_ERROR_NAME,
    messageGroupId: system.MessageGroupId,
    sequenceNumber: system.SequenceNumber,
    sentAtMs: number(system.SentTimestamp),
    receiveCount: number(system.ApproximateReceiveCount),
    jobKey: jobKeyOf(body, job),
    messageAttributes: attrs,
  };
}

/**
 * The message attributes of the original message kept in the DLQ with its body: every attribute
 * that is not evidence (the identity attribute of a raw job, written by the worker; any attribute,
 * when SQS's redrive policy moved the message). A redrive sends them back with the body.
 */
export function originalAttributesOf(
  message: Pick<DeadLetterMessage, 'messageAttributes'>,
): Record<string, MessageAttributeValue> | undefined {
  const kept = Object.entries(message.messageAttributes).filter(([name]) => !isEvidenceName(name));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** EventBridge Scheduler's dead-letter event attributes: evidence of the failed delivery, not of the job. */
const SCHEDULE_DELIVERY_ATTRIBUTE_NAMES: ReadonlySet<string> = new Set([
  'ERROR_CODE',
  'ERROR_MESSAGE',
  'EXECUTION_ID',
  'EXHAUSTED_RETRY_CONDITION',
  'IS_PAYLOAD_TRUNCATED',
  'RETRY_ATTEMPTS',
  'SCHEDULED_TIME',
  'SCHEDULE_ARN',
  'TARGET_ARN',
]);

/** Whether an attribute stays in the DLQ (evidence of the worker, or of Scheduler's failed delivery). */
function isEvidenceName(name: string): boolean {
  return (
    name === EVIDENCE_TRUNCATED_ATTRIBUTE ||
    (EVIDENCE_ATTRIBUTE_NAMES as readonly string[]).includes(name) ||
    SCHEDULE_DELIVERY_ATTRIBUTE_NAMES.has(name)
  );
}
