/**
 * Bring your producers: a job that accepts SQS messages which are not sqs-jobs envelopes, so a
 * consumer can move to sqs-jobs before its producers do (docs/migrate-from-powertools.md). What
 * a raw message looks like (`from`), where the job's identity is read (`id`), the check of those
 * options at `defineJob`, and the reading of a record into the envelope the pipeline runs on.
 *
 * Message shapes [AWS-FACTS.md; SNS "Amazon SNS message delivery" / "raw message delivery";
 * EventBridge "Amazon EventBridge events"]:
 * - `json`: the body is the message (a JSON value), as a producer's plain `SendMessage` leaves it.
 * - `sns`: with raw message delivery on, the body is the published message and its message
 *   attributes are the SQS message's; with it off, the body is the SNS notification JSON
 *   (`Type: "Notification"`, `MessageId`, `TopicArn`, `Message` as a string, `Timestamp`,
 *   `MessageAttributes` as `{ Type, Value }`, signature fields). Both are accepted.
 * - `eventbridge`: the body is the event (`version`, `id`, `detail-type`, `source`, `account`,
 *   `time`, `region`, `resources`, `detail`); the job's data is its `detail`.
 *
 * A raw message becomes an envelope with `type` = the job's type, `id` = its identity, `source` =
 * `raw:<where the identity is read>` (so the job key is that place and its value, whatever
 * delivered the message) and `data` = the message. Nothing of it is written back to SQS: the DLQ
 * and a redrive keep the original body.
 */
import type { SQSRecord } from 'aws-lambda';
import { DATA_CONTENT_TYPE, type JobEnvelope, SPEC_VERSION } from '../core/envelope.ts';
import { parseJsonText } from '../core/json-parse.ts';
import { shownValue } from '../core/shown-value.ts';
import { EVIDENCE_MAX_BYTES, EVIDENCE_TRUNCATED_ATTRIBUTE } from './dead-letter.ts';
import { RawMessageError } from './worker-errors.ts';

/** What a raw message's body is: see the module docstring. */
export type RawMessageFormat = 'json' | 'sns' | 'eventbridge';

/**
 * Where a raw message's identity (its job id, hence its idempotency key) is read, and what each
 * choice absorbs as a duplicate:
 * - `{ field: 'orderId' }`: a field of the message (the job's data before its schema; a dot path,
 *   `'order.id'`, for nested objects; for `eventbridge`, a field of `detail`). A string or a
 *   finite number. Absorbs SQS redeliveries and producer retries alike, as long as the producer
 *   sends the same business id (the best choice when the message carries one).
 * - `{ attribute: 'order-id' }`: an SQS message attribute (`String` or `Number`); for `sns`
 *   without raw delivery, the notification's `MessageAttributes`. Same reach as a field. The DLQ
 *   keeps it next to the body, and a redrive puts it back.
 * - `'sqs-message-id'`: the SQS `messageId`. Absorbs redeliveries of one SQS message only: a
 *   producer retry is a new SQS message with a new id and runs again, and so does a redriven
 *   message (a redrive gives it a new id).
 * - `'sns-message-id'` (`from: 'sns'`, raw delivery off): the SNS `MessageId`, the same on every
 *   SNS redelivery of one publish; a second `Publish` of the same content is a new id.
 * - `'event-id'` (`from: 'eventbridge'`): the event's `id`, the same on every EventBridge
 *   redelivery of one event; a second `PutEvents` of the same content is a new id.
 */
export type RawJobIdentity =
  | { readonly field: string }
  | { readonly attribute: string }
  | 'sqs-message-id'
  | 'sns-message-id'
  | 'event-id';

/** A job's `raw` option: it accepts messages that are not sqs-jobs envelopes. */
export interface RawMessageOptions {
  /** What the body is ({@link RawMessageFormat}). */
  readonly from: RawMessageFormat;
  /** Where the job's identity is read ({@link RawJobIdentity}). */
  readonly id: RawJobIdentity;
}

const FORMATS: readonly RawMessageFormat[] = ['json', 'sns', 'eventbridge'];
/**
 * Names the DLQ evidence uses (docs/contracts.md, "DLQ evidence"): an identity attribute carried
 * to the DLQ under one of them could not be told from the evidence.
 */
const EVIDENCE_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(EVIDENCE_MAX_BYTES),
  EVIDENCE_TRUNCATED_ATTRIBUTE,
]);
// SQS message attribute names: A-Z, a-z, 0-9, `_`, `-`, `.`; up to 256 characters; no leading or
// trailing period, no two in a row; not starting with `AWS.` or `Amazon.` (SendMessage API,
// MessageAttributes; "Amazon SQS message attributes").
const ATTRIBUTE_NAME = /^(?!\.)(?!.*\.\.)(?!.*\.$)[A-Za-z0-9_.-]{1,256}$/;

/** What is wrong with a job's `raw` option (`type` names the job); empty when fine or absent. */
export function rawOptionsProblems(raw: unknown): string[] {
  if (raw === undefined) return [];
  if (typeof raw !== 'object' || raw === null) {
    return [`raw must be an object { from, id }, got ${shownValue(raw)}`];
  }
  const { from, id, ...rest } = raw as Record<string, unknown>;
  const problems = Object.keys(rest).map((field) => `unknown field raw.${field} (known: from, id)`);
  if (!FORMATS.includes(from as RawMessageFormat)) {
    problems.push(`raw.from must be 'json', 'sns' or 'eventbridge', got ${shownValue(from)}`);
  }
  problems.push(...identityProblems(id, from));
  return problems;
}

function identityProblems(id: unknown, from: unknown): string[] {
  if (id === 'sqs-message-id') return [];
  if (id === 'sns-message-id') {
    return from === 'sns' ? [] : [`raw.id 'sns-message-id' needs raw.from 'sns', got ${shownValue(from)}`];
  }
  if (id === 'event-id') {
    return from === 'eventbridge'
      ? []
      : [`raw.id 'event-id' needs raw.from 'eventbridge', got ${shownValue(from)}`];
  }
  if (typeof id === 'object' && id !== null) {
    const keys = Object.keys(id);
    const { field, attribute } = id as { field?: unknown; attribute?: unknown };
    if (keys.length === 1 && keys[0] === 'field') {
      return typeof field === 'string' && field.split('.').every((part) => part !== '')
        ? []
        : [`raw.id.field must be a field name or dot path ('orderId', 'order.id'), got ${shownValue(field)}`];
    }
    if (keys.length === 1 && keys[0] === 'attribute') {
      if (
        typeof attribute !== 'string' ||
        !ATTRIBUTE_NAME.test(attribute) ||
        /^(AWS|Amazon)\./i.test(attribute)
      ) {
        return [
          `raw.id.attribute must be an SQS message attribute name (A-Z, a-z, 0-9, _, -, .; up to 256; not starting with AWS. or Amazon.), got ${shownValue(attribute)}`,
        ];
      }
      return EVIDENCE_NAMES.has(attribute)
        ? [
            `raw.id.attribute ${JSON.stringify(attribute)} is a DLQ evidence attribute name; rename the attribute`,
          ]
        : [];
    }
  }
  return [
    `raw.id must be { field: 'path' }, { attribute: 'name' }, 'sqs-message-id', 'sns-message-id' (from 'sns') or 'event-id' (from 'eventbridge'), got ${shownValue(id)}`,
  ];
}

/** The place `id` names, as the raw envelope's `source`: `raw:field:orderId`, `raw:sqs-message-id`. */
export function rawSourceOf(id: RawJobIdentity): string {
  if (typeof id === 'string') return `raw:${id}`;
  return 'field' in id ? `raw:field:${id.field}` : `raw:attribute:${id.attribute}`;
}

/** The SQS message attribute a raw job's identity is read from, when it is one. */
export function identityAttributeOf(raw: RawMessageOptions | undefined): string | undefined {
  return raw !== undefined && typeof raw.id === 'object' && 'attribute' in raw.id
    ? raw.id.attribute
    : undefined;
}

/** A raw message taken apart: the job's data and what the identity may be read from. */
interface RawParts {
  readonly data: unknown;
  readonly snsMessageId?: string;
  /** The body was an SNS notification (raw delivery off), with or without a `MessageId`. */
  readonly snsNotification?: boolean;
  readonly eventId?: string;
  /** String values of the notification's own `MessageAttributes` (SNS without raw delivery). */
  readonly wrapperAttributes?: Readonly<Record<string, string>>;
}

/** The job types a worker runs (its jobs map, or any set of types). */
export interface WorkerJobTypes {
  has(type: string): boolean;
}

/**
 * Whether a parsed body is an sqs-jobs envelope of this worker (good or broken), so that its own
 * envelope error stands, rather than a raw message for the raw job. The rule: a JSON object with
 * a `specversion` key and a string `type` that names one of this worker's jobs (`jobTypes`).
 * Everything else is a raw message: a body without `specversion`, and one that carries
 * `specversion` without naming a job of this worker (a producer's own schema version such as
 * `{ orderId, specversion: 'v2' }`, or a CloudEvent from another system, `type:
 * 'com.example.order.created'`).
 *
 * Why `type`: it is the one attribute an sqs-jobs producer always sets to a job of the worker it
 * sends to, so a broken envelope from our own producer (a bad `time`, a missing `data`) still
 * dead-letters as an EnvelopeError, whereas a foreign payload has no reason to name our job types.
 * What the rule cannot tell apart (docs/migrate-from-powertools.md, "Raw messages"):
 * - a foreign payload whose `type` happens to equal a job type of this worker is taken as a
 *   broken envelope (EnvelopeError evidence names the field; rename the job or the field);
 * - an sqs-jobs envelope whose `type` names no job of this worker (sent to the wrong queue, or
 *   without a `type`) is handed to the raw job like any foreign CloudEvent: the raw job's schema
 *   and identity then decide (RawMessageError or JobDataInvalidError evidence when they refuse).
 * CloudEvents 1.0 names `specversion`, `id`, `source` and `type` as required of every event, so
 * any producer's event may carry them (https://github.com/cloudevents/spec, spec.md, "Required
 * Attributes").
 */
export function isOwnEnvelope(parsed: unknown, jobTypes: WorkerJobTypes): boolean {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
  if (!('specversion' in parsed)) return false;
  const { type } = parsed as { type?: unknown };
  return typeof type === 'string' && jobTypes.has(type);
}

/**
 * Reads a record as a raw message of `jobType` and returns the envelope the pipeline runs it as.
 * Pure: the same record gives the same envelope (or error) on every delivery.
 * @param jobTypes the worker's job types: they tell an envelope of this worker from a raw message
 *   ({@link isOwnEnvelope}).
 * @returns undefined when the body is an sqs-jobs envelope of this worker after all
 *   ({@link isOwnEnvelope}): its own envelope error stands.
 * @throws {RawMessageError} (permanent) naming what is missing or wrong: the body is not JSON, is
 *   not the shape `from` says, or has no identity where `id` says.
 */
export function readRawMessage(
  record: SQSRecord,
  jobType: string,
  raw: RawMessageOptions,
  jobTypes: WorkerJobTypes,
): JobEnvelope | undefined {
  let parsed: unknown;
  try {
    parsed = parseJsonText(record.body);
  } catch (error) {
    throw new RawMessageError(jobType, 'body', `is not JSON (${(error as Error).message})`);
  }
  if (isOwnEnvelope(parsed, jobTypes)) return undefined;
  const parts = partsOf(parsed, jobType, raw.from);
  return {
    specversion: SPEC_VERSION,
    id: identityOf(record, parts, jobType, raw),
    source: rawSourceOf(raw.id),
    type: jobType,
    time: sentTime(record),
    datacontenttype: DATA_CONTENT_TYPE,
    data: parts.data,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An SNS notification as SNS delivers it to SQS without raw message delivery. Recognised by
 * `Type: "Notification"` and a string `Message` alone (SNS always adds `MessageId` and `TopicArn`,
 * a hand-made or forwarded one may not): what is wrong inside it (a `Message` that is not JSON, no
 * `MessageId`) is then named as the notification's, not as a field missing from the data.
 */
function isSnsNotification(value: unknown): value is Record<string, unknown> & { Message: string } {
  return isObject(value) && value.Type === 'Notification' && typeof value.Message === 'string';
}

function partsOf(parsed: unknown, jobType: string, from: RawMessageFormat): RawParts {
  if (from === 'json') return { data: parsed };
  if (from === 'eventbridge') {
    if (!isObject(parsed))
      throw new RawMessageError(jobType, 'body', 'must be an EventBridge event (a JSON object)');
    for (const field of ['id', 'detail-type', 'source'] as const) {
      if (typeof parsed[field] !== 'string' || parsed[field] === '') {
        throw new RawMessageError(jobType, field, 'is missing: the body is not an EventBridge event');
      }
    }
    if (!('detail' in parsed)) {
      throw new RawMessageError(jobType, 'detail', 'is missing: the body is not an EventBridge event');
    }
    return { data: parsed.detail, eventId: parsed.id as string };
  }
  // sns: a notification (raw delivery off) is unwrapped; anything else is the message itself.
  if (!isSnsNotification(parsed)) return { data: parsed };
  let message: unknown;
  try {
    message = parseJsonText(parsed.Message);
  } catch (error) {
    throw new RawMessageError(
      jobType,
      'Message',
      `of the SNS notification is not JSON (${(error as Error).message}); publish JSON messages`,
    );
  }
  return {
    data: message,
    snsNotification: true,
    ...(typeof parsed.MessageId === 'string' && parsed.MessageId !== ''
      ? { snsMessageId: parsed.MessageId }
      : {}),
    wrapperAttributes: snsAttributes(parsed.MessageAttributes),
  };
}

/** `{ name: { Type, Value } }` of an SNS notification, as name → value (String and Number only). */
function snsAttributes(attributes: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(attributes)) return out;
  for (const [name, attribute] of Object.entries(attributes)) {
    if (
      isObject(attribute) &&
      typeof attribute.Value === 'string' &&
      /^(String|Number)/.test(String(attribute.Type))
    )
      out[name] = attribute.Value;
  }
  return out;
}

function identityOf(record: SQSRecord, parts: RawParts, jobType: string, raw: RawMessageOptions): string {
  const { id } = raw;
  if (id === 'sqs-message-id') return record.messageId;
  if (id === 'sns-message-id') {
    if (parts.snsMessageId !== undefined) return parts.snsMessageId;
    if (parts.snsNotification === true) {
      throw new RawMessageError(
        jobType,
        'MessageId',
        "is missing from the SNS notification (SNS always sets it: was the notification built by hand?), and raw.id is 'sns-message-id'",
      );
    }
    throw new RawMessageError(
      jobType,
      'MessageId',
      "is missing: the body is not an SNS notification (is raw message delivery on? then it carries no SNS MessageId: read the identity from a field or attribute), and raw.id is 'sns-message-id'",
    );
  }
  if (id === 'event-id') return parts.eventId as string;
  if ('attribute' in id) {
    const value =
      record.messageAttributes?.[id.attribute]?.stringValue ?? parts.wrapperAttributes?.[id.attribute];
    if (value !== undefined && value !== '') return value;
    throw new RawMessageError(
      jobType,
      id.attribute,
      `is missing: no message attribute ${JSON.stringify(id.attribute)} with a String or Number value, and raw.id is { attribute: ${JSON.stringify(id.attribute)} }`,
    );
  }
  let value: unknown = parts.data;
  for (const part of id.field.split('.')) value = isObject(value) ? value[part] : undefined;
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  const found =
    value === undefined ? 'it is missing' : `got ${value === '' ? 'an empty string' : typeof value}`;
  throw new RawMessageError(
    jobType,
    id.field,
    `must be a non-empty string or a finite number, the job's identity (raw.id is { field: ${JSON.stringify(id.field)} }): ${found}`,
  );
}

/** The record's `SentTimestamp` as RFC 3339 (SQS system attribute; now when absent). */
function sentTime(record: SQSRecord): string {
  const sent = Number(record.attributes?.SentTimestamp);
  return new Date(Number.isFinite(sent) && sent > 0 ? sent : Date.now()).toISOString();
}
