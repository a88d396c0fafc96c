/**
 * Dead-lettering by the worker: the original body goes to the queue's DLQ unchanged, with the
 * evidence as message attributes (names fixed by docs/contracts.md, "DLQ evidence").
 *
 * Limits (SendMessage API reference; "Amazon SQS message attributes"): at most 10 attributes;
 * name, type and value of every attribute count toward the 1 MiB (1,048,576 bytes) message
 * size together with the body; values must not be empty. The original message's own attributes
 * are not copied: the evidence uses all 10 slots (the envelope carries everything in the body).
 */

import { createHash } from 'node:crypto';
import { type MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { bodyToSendOn } from '../sqs/characters.ts';
import { isFifoQueueUrl } from '../sqs/queue-urls.ts';
import type { SqsSender } from './sqs-port.ts';

/** SQS maximum message size in bytes, body and attributes together (1 MiB). */
export const MAX_MESSAGE_BYTES = 1_048_576;
/** `ErrorMessage` is cut at this many UTF-8 bytes even when more would fit: it is read by people. */
export const MAX_ERROR_MESSAGE_BYTES = 8_192;
/** `ErrorStack` is cut at this many UTF-8 bytes even when more would fit. */
export const MAX_ERROR_STACK_BYTES = 65_536;

const TRUNCATED = '…[truncated]';
const MAX_CAUSE_DEPTH = 5;

/** The facts written next to a dead-lettered body. */
export interface DeadLetterEvidence {
  /** Envelope `type`; undefined when the body could not be read (the attribute is then left out). */
  readonly jobType: string | undefined;
  /** What failed; its `name`, `message` and stack (with `cause` chain) are written. */
  readonly error: unknown;
  /** The classification reason (`classifyError(...).reason`), to group by cause. */
  readonly reason: string;
  /** Runs made, this one included. */
  readonly attempts: number;
  /** Epoch ms of the first failure of this job. */
  readonly firstFailureAtMs: number;
  /** Epoch ms of this failure. */
  readonly lastFailureAtMs: number;
  readonly handlerVersion: string;
  /** The SQS messageId of the record being dead-lettered. */
  readonly sourceMessageId: string;
}

/** Attributes dropped first when even truncated text does not fit (least useful first). */
const DROP_ORDER = [
  'ErrorStack',
  'ErrorMessage',
  'HandlerVersion',
  'FirstFailureAt',
  'LastFailureAt',
  'ErrorReason',
  'Attempts',
  'JobType',
  'ErrorName',
] as const;

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes, the marker included, never splitting a
 * character. Returns `''` when not even the marker fits.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  const room = maxBytes - utf8Bytes(TRUNCATED);
  if (room <= 0) return '';
  let cut = Buffer.from(text, 'utf8').subarray(0, room).toString('utf8');
  // A character cut in half decodes to U+FFFD (3 bytes): drop it and re-check the size.
  while (cut.endsWith('\uFFFD') || utf8Bytes(cut) > room) cut = cut.slice(0, -1);
  return cut + TRUNCATED;
}

function errorParts(error: unknown): { name: string; message: string; stack: string } {
  if (error instanceof Error) {
    const lines = [error.stack ?? `${error.name}: ${error.message}`];
    let cause: unknown = error.cause;
    for (let depth = 0; cause !== undefined && depth < MAX_CAUSE_DEPTH; depth++) {
      lines.push(`Caused by: ${cause instanceof Error ? (cause.stack ?? String(cause)) : safeString(cause)}`);
      cause = cause instanceof Error ? cause.cause : undefined;
    }
    return { name: error.name || 'Error', message: error.message, stack: lines.join('\n') };
  }
  return { name: 'NonErrorThrown', message: safeString(error), stack: '' };
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}

function attributeBytes(attributes: Record<string, MessageAttributeValue>): number {
  let total = 0;
  for (const [name, value] of Object.entries(attributes)) {
    total += utf8Bytes(name) + utf8Bytes(value.DataType ?? '') + utf8Bytes(value.StringValue ?? '');
  }
  return total;
}

/**
 * Builds the evidence attributes for a body, cut so that body + attributes fit `maxBytes`:
 * first the stack is shortened, then the message, then whole attributes are dropped (stack,
 * message, handler version, times, reason, attempts, type, name; `SourceMessageId` last of all).
 * Empty values are left out (SQS refuses them). When the body alone is over the limit the
 * attributes are returned whole and the send fails: the record is then reported failed and the
 * queue's redrive policy moves it.
 */
export function evidenceAttributes(
  body: string,
  evidence: DeadLetterEvidence,
  maxBytes: number = MAX_MESSAGE_BYTES,
): Record<string, MessageAttributeValue> {
  const { name, message, stack } = errorParts(evidence.error);
  const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });
  const candidates: Record<string, MessageAttributeValue | undefined> = {
    JobType: evidence.jobType ? text(evidence.jobType) : undefined,
    ErrorName: text(name),
    ErrorMessage: text(truncateUtf8(message, MAX_ERROR_MESSAGE_BYTES)),
    ErrorStack: text(truncateUtf8(stack, MAX_ERROR_STACK_BYTES)),
    ErrorReason: text(evidence.reason),
    Attempts: { DataType: 'Number', StringValue: String(evidence.attempts) },
    FirstFailureAt: text(new Date(evidence.firstFailureAtMs).toISOString()),
    LastFailureAt: text(new Date(evidence.lastFailureAtMs).toISOString()),
    HandlerVersion: text(evidence.handlerVersion),
    SourceMessageId: text(evidence.sourceMessageId),
  };
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [key, value] of Object.entries(candidates)) {
    if (value?.StringValue) attributes[key] = value;
  }

  const bodyBytes = utf8Bytes(body);
  if (bodyBytes >= maxBytes) return attributes;
  const over = () => bodyBytes + attributeBytes(attributes) - maxBytes;
  for (const key of ['ErrorStack', 'ErrorMessage'] as const) {
    const current = attributes[key]?.StringValue;
    if (over() <= 0 || current === undefined) continue;
    const cut = truncateUtf8(current, Math.max(0, utf8Bytes(current) - over()));
    if (cut === '') delete attributes[key];
    else attributes[key] = text(cut);
  }
  for (const key of DROP_ORDER) {
    if (over() <= 0) break;
    delete attributes[key];
  }
  return attributes;
}

/**
 * FIFO `MessageDeduplicationId` of a dead-lettered record: SHA-256 hex of its messageId.
 * Stable across retries of the DLQ send for the same delivery (a send retried within the
 * 5-minute dedup window is stored once), and new after a redrive, because a redriven message
 * gets a new messageId (sqs-configure-dead-letter-queue-redrive), so a message that fails again
 * after a redrive is not silently dropped as a duplicate of its first dead-lettering.
 */
export function deadLetterDeduplicationId(messageId: string): string {
  return createHash('sha256').update(`dead-letter\n${messageId}`).digest('hex');
}

/** Input of {@link sendToDeadLetterQueue}. */
export interface DeadLetterRequest {
  readonly sqs: SqsSender;
  readonly dlqUrl: string;
  readonly record: SQSRecord;
  readonly evidence: DeadLetterEvidence;
}

/**
 * Sends the record's original body to the DLQ with the evidence. The body goes untouched when SQS
 * takes it (every body SQS delivered does); otherwise the characters SQS refuses are written as
 * JSON escapes (`bodyToSendOn`, lib/sqs/characters.ts: the same JSON value). On a FIFO DLQ it keeps the
 * record's `MessageGroupId` (a FIFO queue's DLQ must be FIFO too; when the record has no group,
 * the job type is used) and sets {@link deadLetterDeduplicationId}.
 *
 * @throws whatever the SQS client throws (the caller reports the record failed: never lost).
 */
export async function sendToDeadLetterQueue(request: DeadLetterRequest): Promise<void> {
  const { record, evidence, dlqUrl } = request;
  const body = bodyToSendOn(record.body);
  const fifo = isFifoQueueUrl(dlqUrl)
    ? {
        MessageGroupId: record.attributes.MessageGroupId ?? evidence.jobType ?? 'dead-letter',
        MessageDeduplicationId: deadLetterDeduplicationId(record.messageId),
      }
    : {};
  await request.sqs.send(
    new SendMessageCommand({
      QueueUrl: dlqUrl,
      MessageBody: body,
      MessageAttributes: evidenceAttributes(body, evidence),
      ...fifo,
    }),
  );
}
