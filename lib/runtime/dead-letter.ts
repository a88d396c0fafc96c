/**
 * Dead-lettering by the worker: the original body goes to the queue's DLQ unchanged, with the
 * evidence as message attributes (names fixed by docs/contracts.md, "DLQ evidence").
 *
 * Limits (SendMessage API reference; `MessageAttributeValue`; "Amazon SQS message attributes"):
 * at most 10 attributes; name, type and value of every attribute count toward the message size
 * limit (1 MiB, 1,048,576 bytes, or the queue's smaller `MaximumMessageSize`) together with the
 * body; values must not be empty; a `String` value "has the same restrictions on the content as
 * the message body" (lib/core/characters.ts), so raw error text (ANSI colour codes, NUL) is
 * escaped before it is sent. The original message's own attributes are not copied: the evidence
 * uses the 10 slots (the envelope carries everything in the body), except the one a raw job's
 * identity is read from (`defineJob({ raw: { id: { attribute } } })`), which a redrive must put
 * back with the body: it is kept under its own name and the evidence makes room for it.
 */

import { createHash } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { bodyToSendOn, escapeRefusedCharacters } from '../core/characters.ts';
import { isValidMessageGroupId } from '../core/message-parameters.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES, utf8Bytes } from '../core/message-size.ts';
import { isFifoQueueUrl } from '../core/queue-urls.ts';
import { loadSqsModule } from './sqs-module.ts';
import type { SqsSender } from './sqs-port.ts';

/**
 * `ErrorReason` of a FIFO record dead-lettered without running because its message group is
 * parked behind an earlier dead-lettered job (`onDeadLetter: 'park'`, group-park.ts). Its
 * `ErrorName` is `GroupParkedError`, its `ErrorMessage` names the blocking job (type, job id, SQS
 * message id, reason) and the group record, and `Attempts` is 0 (it was not run).
 */
export const GROUP_PARKED_REASON = 'GroupParked';

/** SQS maximum message size in bytes, body and attributes together (1 MiB). */
export const MAX_MESSAGE_BYTES = SQS_MAX_MESSAGE_BYTES;
/** `ErrorMessage` is cut at this many UTF-8 bytes even when more would fit: it is read by people. */
export const MAX_ERROR_MESSAGE_BYTES = 8_192;
/** `ErrorStack` is cut at this many UTF-8 bytes even when more would fit. */
export const MAX_ERROR_STACK_BYTES = 65_536;
/** Most attributes one SQS message may carry (SendMessage API reference, MessageAttributes). */
export const MAX_MESSAGE_ATTRIBUTES = 10;

/**
 * Largest value of each evidence attribute, in UTF-8 bytes after escaping (docs/contracts.md,
 * "DLQ evidence"); a longer value is cut and ends in `…[truncated]`. Together at most 76,480
 * bytes of values: the evidence never takes more than about 75 KiB of the 1 MiB.
 */
export const EVIDENCE_MAX_BYTES = {
  JobType: 1_024,
  ErrorName: 256,
  ErrorMessage: MAX_ERROR_MESSAGE_BYTES,
  ErrorStack: MAX_ERROR_STACK_BYTES,
  ErrorReason: 1_024,
  Attempts: 32,
  FirstFailureAt: 64,
  LastFailureAt: 64,
  HandlerVersion: 256,
  SourceMessageId: 256,
} as const;

/**
 * Name of the attribute that says evidence was cut or left out so that body + evidence fit the
 * message size limit. Its value lists those attributes, comma-separated, in the order they were
 * cut (`ErrorStack,ErrorMessage,HandlerVersion`): a listed attribute that is present was cut
 * (its value ends in `…[truncated]`), one that is absent was left out.
 */
export const EVIDENCE_TRUNCATED_ATTRIBUTE = 'EvidenceTruncated';

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

type EvidenceName = keyof typeof EVIDENCE_MAX_BYTES;

/**
 * Order in which whole attributes go when the evidence must shrink to fit (after `ErrorStack` and
 * `ErrorMessage`, cut largest first): the least useful first; `JobType` is also in the body's
 * envelope; the error's name and reason, which group dead letters by cause, and the id that ties
 * the evidence to the original message go last.
 */
const DROP_ORDER: readonly EvidenceName[] = [
  'HandlerVersion',
  'FirstFailureAt',
  'LastFailureAt',
  'Attempts',
  'JobType',
];
/**
 * Kept last, most useful first: when not even the marker and these fit (a budget of a few hundred
 * bytes), each is kept if it fits in what is left.
 */
const LAST_KEPT: readonly EvidenceName[] = ['SourceMessageId', 'ErrorName', 'ErrorReason'];

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
    const lines = [safeStack(error)];
    let cause: unknown = error.cause;
    for (let depth = 0; cause !== undefined && depth < MAX_CAUSE_DEPTH; depth++) {
      lines.push(`Caused by: ${cause instanceof Error ? safeStack(cause) : safeString(cause)}`);
      cause = cause instanceof Error ? cause.cause : undefined;
    }
    return {
      name: safeString(error.name) || 'Error',
      message: safeString(error.message),
      stack: lines.join('\n'),
    };
  }
  return { name: 'NonErrorThrown', message: safeString(error), stack: '' };
}

/**
 * {@link errorParts}, or a stand-in when reading the error throws (a getter or proxy that throws,
 * a `cause` chain that cannot be walked): the dead letter is sent all the same, its evidence
 * saying the error could not be described, instead of the record cycling as an unsendable one.
 */
function describedError(error: unknown): { name: string; message: string; stack: string } {
  try {
    return errorParts(error);
  } catch (readError) {
    let why = 'reading it threw';
    try {
      if (readError instanceof Error)
        why = `reading it threw ${String(readError.name)}: ${String(readError.message)}`;
    } catch {
      // the second error cannot be described either: keep the plain sentence
    }
    return { name: 'UndescribableError', message: `the error could not be described (${why})`, stack: '' };
  }
}

function safeStack(error: Error): string {
  const stack: unknown = error.stack;
  return typeof stack === 'string' ? stack : `${safeString(error.name)}: ${safeString(error.message)}`;
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    try {
      return String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
}

function isoTime(ms: number): string | undefined {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function attributesBytes(attributes: Record<string, MessageAttributeValue>): number {
  return messageSizeBytes({ MessageAttributes: attributes });
}

const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });

/**
 * The evidence attributes at full size: each `String` value with the characters SQS refuses
 * escaped (`\u001b`, `\u0000`: lib/core/characters.ts) and cut to {@link EVIDENCE_MAX_BYTES};
 * empty or unknown values left out (SQS refuses empty values, and `Number` needs a number).
 */
function fullEvidence(evidence: DeadLetterEvidence): Record<string, MessageAttributeValue> {
  const { name, message, stack } = describedError(evidence.error);
  const values: Record<EvidenceName, string | undefined> = {
    JobType: evidence.jobType,
    ErrorName: name,
    ErrorMessage: message,
    ErrorStack: stack,
    ErrorReason: evidence.reason,
    Attempts: undefined,
    FirstFailureAt: isoTime(evidence.firstFailureAtMs),
    LastFailureAt: isoTime(evidence.lastFailureAtMs),
    HandlerVersion: evidence.handlerVersion,
    SourceMessageId: evidence.sourceMessageId,
  };
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [key, raw] of Object.entries(values) as [EvidenceName, string | undefined][]) {
    if (key === 'Attempts') {
      // A `Number` attribute must hold a number (SQS: up to 38 digits of precision).
      if (Number.isSafeInteger(evidence.attempts))
        attributes.Attempts = { DataType: 'Number', StringValue: String(evidence.attempts) };
      continue;
    }
    if (typeof raw !== 'string' || raw === '') continue;
    const value = truncateUtf8(escapeRefusedCharacters(raw), EVIDENCE_MAX_BYTES[key]);
    if (value !== '') attributes[key] = text(value);
  }
  return attributes;
}

/**
 * Builds the evidence attributes for a body so that body + attributes fit `maxBytes`. Every value
 * is valid for SQS (refused characters escaped) and at most {@link EVIDENCE_MAX_BYTES} long.
 *
 * When they do not fit whole, the body is kept intact and the evidence shrinks: the marker
 * attribute {@link EVIDENCE_TRUNCATED_ATTRIBUTE} is added (taking the slot of `HandlerVersion`
 * when all 10 are in use), then `ErrorStack` and `ErrorMessage` are cut, the larger first, down to
 * nothing if need be; then whole attributes are left out: `HandlerVersion`, `FirstFailureAt`,
 * `LastFailureAt`, `Attempts`, `JobType`. Below a few hundred bytes the marker goes too and, of
 * `SourceMessageId`, `ErrorName` and `ErrorReason`, each is kept in that order if it still fits (a
 * body of exactly `maxBytes` goes with no attributes).
 * When the body alone is over `maxBytes` nothing can fit: the attributes are returned whole and
 * the send fails; the record is then reported failed and the queue's redrive policy moves it.
 *
 * Attributes of the original message kept beside the evidence (`carried`) count as part of the
 * body: their bytes and slots are taken first, and the evidence shrinks as above to what is left.
 *
 * @param maxBytes the DLQ's message size limit. @default 1,048,576 (1 MiB)
 * @param carried attributes of the original message sent with the body (not returned here).
 */
export function evidenceAttributes(
  body: string,
  evidence: DeadLetterEvidence,
  maxBytes: number = MAX_MESSAGE_BYTES,
  carried: Readonly<Record<string, MessageAttributeValue>> = {},
): Record<string, MessageAttributeValue> {
  const attributes = fullEvidence(evidence);
  const carriedCount = Object.keys(carried).length;
  const slots = MAX_MESSAGE_ATTRIBUTES - carriedCount;
  const budget = maxBytes - utf8Bytes(body) - (carriedCount === 0 ? 0 : attributesBytes({ ...carried }));
  if (budget < 0 || (attributesBytes(attributes) <= budget && Object.keys(attributes).length <= slots))
    return attributes;

  const cut: string[] = [];
  let withMarker = true;
  const note = (key: string): void => {
    if (!cut.includes(key)) cut.push(key);
  };
  const current = (): Record<string, MessageAttributeValue> =>
    withMarker && cut.length > 0
      ? { ...attributes, [EVIDENCE_TRUNCATED_ATTRIBUTE]: text(cut.join(',')) }
      : attributes;
  const over = (): number => attributesBytes(current()) - budget;
  const drop = (key: string): void => {
    if (attributes[key] === undefined) return;
    delete attributes[key];
    note(key);
  };

  // A slot for the marker.
  for (const key of DROP_ORDER) {
    if (Object.keys(attributes).length < slots) break;
    drop(key);
  }
  // The large texts, the larger first (none when making slots was enough).
  for (;;) {
    if (over() <= 0) break;
    const texts = (['ErrorStack', 'ErrorMessage'] as const).filter((key) => attributes[key] !== undefined);
    if (texts.length === 0) break;
    // Listed in the marker before measuring, so the cut leaves room for its name there too.
    const larger = texts.reduce((a, b) =>
      utf8Bytes(attributes[b]?.StringValue ?? '') > utf8Bytes(attributes[a]?.StringValue ?? '') ? b : a,
    );
    note(larger);
    const excess = over();
    if (excess <= 0) break;
    const value = attributes[larger]?.StringValue ?? '';
    const shorter = truncateUtf8(value, utf8Bytes(value) - excess);
    if (shorter === '') drop(larger);
    else attributes[larger] = text(shorter);
  }
  for (const key of DROP_ORDER) {
    if (over() <= 0) break;
    drop(key);
  }
  if (over() > 0) {
    // A budget of a few hundred bytes: no room for the marker; keep what fits, most useful first.
    withMarker = false;
    const last = LAST_KEPT.flatMap((key) => (attributes[key] ? [[key, attributes[key]] as const] : []));
    for (const [key] of last) delete attributes[key];
    for (const [key, value] of last) {
      attributes[key] = value;
      if (over() > 0) delete attributes[key];
    }
  }
  return current();
}

/** The size limit named by a refusal of a send as too large, e.g. "Message must be shorter than 262144 bytes". */
export function messageSizeLimitOf(error: unknown): number | undefined {
  const message = error instanceof Error ? error.message : undefined;
  const match = message === undefined ? null : /shorter than (\d+) bytes/i.exec(message);
  if (!match) return undefined;
  const limit = Number(match[1]);
  return Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
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
  /**
   * Attributes of the original message to keep with its body (a raw job's identity attribute), so
   * a redrive can send them back; names that are not evidence names. @default none
   */
  readonly carried?: Readonly<Record<string, MessageAttributeValue>>;
}

/** `MessageGroupId` of a dead letter on a FIFO DLQ: the record's own group, else the job type when it is a valid group id. */
function deadLetterGroupId(record: SQSRecord, jobType: string | undefined): string {
  const group = record.attributes?.MessageGroupId;
  if (group !== undefined && isValidMessageGroupId(group)) return group;
  return jobType !== undefined && isValidMessageGroupId(jobType) ? jobType : 'dead-letter';
}

/**
 * Sends the record's original body to the DLQ with the evidence ({@link evidenceAttributes}). The
 * body goes untouched when SQS takes it (every body SQS delivered does); otherwise the characters
 * SQS refuses are written as JSON escapes (`bodyToSendOn`, lib/core/characters.ts: the same JSON
 * value). On a FIFO DLQ it keeps the record's `MessageGroupId` (a FIFO queue's DLQ must be FIFO
 * too; when the record has none, the job type if it is a valid group id, else `dead-letter`) and
 * sets {@link deadLetterDeduplicationId}.
 *
 * The evidence is fitted to 1 MiB. A DLQ with a smaller `MaximumMessageSize` refuses a message
 * over it ("Message must be shorter than N bytes"): the send is then made once more with the
 * evidence fitted to that N, so a body that was legal on its queue still reaches the DLQ.
 *
 * @throws whatever the SQS client throws (the caller reports the record failed: never lost).
 */
export async function sendToDeadLetterQueue(request: DeadLetterRequest): Promise<void> {
  const { record, evidence, dlqUrl } = request;
  const body = bodyToSendOn(record.body);
  const fifo = isFifoQueueUrl(dlqUrl)
    ? {
        MessageGroupId: deadLetterGroupId(record, evidence.jobType),
        MessageDeduplicationId: deadLetterDeduplicationId(record.messageId),
      }
    : {};
  const { SendMessageCommand } = await loadSqsModule();
  const carried = request.carried ?? {};
  const send = (maxBytes: number) => {
    const attributes = { ...carried, ...evidenceAttributes(body, evidence, maxBytes, carried) };
    return request.sqs.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: body,
        ...(Object.keys(attributes).length > 0 ? { MessageAttributes: attributes } : {}),
        ...fifo,
      }),
    );
  };
  try {
    await send(MAX_MESSAGE_BYTES);
  } catch (error) {
    const limit = messageSizeLimitOf(error);
    if (limit === undefined || limit >= MAX_MESSAGE_BYTES || utf8Bytes(body) > limit) throw error;
    await send(limit);
  }
}
