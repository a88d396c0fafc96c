/**
 * The job envelope: a CloudEvents 1.0 event in structured JSON mode, carried as the SQS body.
 *
 * Spec: CloudEvents 1.0.2 core (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/spec.md),
 * JSON format (json-format.md §3) and the Partitioning extension (`partitionkey`).
 * The same rules are shipped as JSON Schema in `envelope.schema.json` for producers in
 * other languages; tests hold the two to the same cases.
 *
 * Why one file: parse and create apply the same field rules (the schema's), which must stay side
 * by side.
 */

import { createHash, randomUUID } from 'node:crypto';
import { JobError } from './errors.ts';
import { parseJsonText } from './json-parse.ts';
import { isValidMessageGroupId } from './message-parameters.ts';
import { traceparentProblem, tracestateProblem } from './trace-context.ts';

/** CloudEvents spec version this library writes and accepts. */
export const SPEC_VERSION = '1.0';
/** The only `datacontenttype` accepted: job data is JSON (ids only). */
export const DATA_CONTENT_TYPE = 'application/json';

/** A job as it travels on the queue. */
export interface JobEnvelope<Data = unknown> {
  /** Always `"1.0"`. */
  readonly specversion: typeof SPEC_VERSION;
  /** Unique per job within `source`; with `source` the default idempotency key. 1–256 characters (code points). */
  readonly id: string;
  /** URI-reference naming the producer, e.g. `"/services/checkout"`. */
  readonly source: string;
  /** The job type, routing the record to its handler, e.g. `"booking.reserve-inventory"`. */
  readonly type: string;
  /** Creation time, RFC 3339 (e.g. `2026-11-29T07:00:00.000Z`). */
  readonly time: string;
  /** Always `"application/json"`. */
  readonly datacontenttype: typeof DATA_CONTENT_TYPE;
  /** The job's input: ids only, reloaded by the worker. */
  readonly data: Data;
  /**
   * Partitioning extension: becomes `MessageGroupId` on FIFO queues (e.g. the user id), so it
   * obeys that rule wherever it appears: 1–128 printable ASCII characters, no space
   * (`isValidMessageGroupId`, SendMessage API reference). Children inherit it.
   */
  readonly partitionkey?: string;
  /**
   * Correlation extension (CloudEvents `correlationid`): an id a producer gives a whole flow (an
   * order, a request); every descendant job keeps it. 1–256 characters.
   */
  readonly correlationid?: string;
  /**
   * Correlation extension (CloudEvents `causationid`): the envelope `id` of the job that enqueued
   * this one, its parent. Set on children by the worker (`ctx.enqueue`). 1–256 characters.
   */
  readonly causationid?: string;
  /** The envelope `id` of the chain's first job (the root a producer sent). Set on children. 1–256 characters. */
  readonly rootid?: string;
  /**
   * The parent job's reference: the key of its idempotency record, `<type>#<key>`
   * (`jobRecordKey`, docs/contracts.md "Idempotency keys"); the child's record links to it, so a
   * job's chain can be walked up. Set on children. 1–2,048 characters.
   */
  readonly parentjob?: string;
  /**
   * Distributed Tracing extension: the W3C traceparent `00-<trace id>-<parent id>-<flags>`. A
   * child keeps the trace id and flags and gets a parent id of its own, so a chain is one trace.
   */
  readonly traceparent?: string;
  /** Distributed Tracing extension: the W3C tracestate, passed on to children as it is. Needs `traceparent`. */
  readonly tracestate?: string;
  /**
   * A job sent for later (`JobClient.send(..., { runAt })`): when it was due, RFC 3339 UTC
   * (e.g. `2026-12-24T18:00:00.000Z`). The worker starts such a job only through its state item
   * (lib/core/scheduled-job.ts): a cancelled or rescheduled one does not run, and one that
   * arrives early waits. Needs `schedulegeneration`. Not inherited by children.
   */
  readonly runat?: string;
  /**
   * With `runat`: the generation of the job's schedule this message belongs to, a positive
   * integer written as a string (`"1"` at send, +1 per reschedule; CloudEvents extension values
   * are strings here so every producer language writes the same JSON). Needs `runat`.
   */
  readonly schedulegeneration?: string;
  /**
   * Batch extension: the id of the batch this job is a child of (lib/core/batch.ts); its
   * completion or dead letter is counted in that batch (docs/contracts.md, "Batches"). Set by
   * `startBatch`. 1–128 characters.
   */
  readonly batchid?: string;
  /**
   * Batch extension: the id of the batch whose completion job this is; `ctx.batch` reads that
   * batch, and its completion marks the batch completed. Set by `startBatch`. 1–128 characters.
   */
  readonly completesbatch?: string;
  /**
   * Batch extension: the id of the batch this message watches: the worker does not run the job
   * named by `type` but checks the batch (`BatchOverdue` when still open). Set by `startBatch`.
   * 1–128 characters.
   */
  readonly batchwatch?: string;
}

/** The batch attributes of an envelope (lib/core/batch.ts). */
export type EnvelopeBatchAttributes = Pick<JobEnvelope, 'batchid' | 'completesbatch' | 'batchwatch'>;

/** The attributes of a job sent for later (both or neither). */
export type EnvelopeSchedule = Required<Pick<JobEnvelope, 'runat' | 'schedulegeneration'>>;

/** The lineage and trace attributes of an envelope (every one optional). */
export type EnvelopeLineage = Pick<
  JobEnvelope,
  'correlationid' | 'causationid' | 'rootid' | 'parentjob' | 'traceparent' | 'tracestate'
>;

/** Thrown when a body is not a valid envelope; `field` names the attribute at fault. */
export class EnvelopeError extends JobError {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`invalid job envelope: ${field} ${message}`, { context: { field } });
    this.field = field;
  }
}

const MAX_ID_CHARS = 256;
/** Longest batch id (`batchid`, `completesbatch`, `batchwatch`; lib/core/batch.ts). */
const MAX_BATCH_ID_CHARS = 128;
/** Longest `parentjob`: a job record key (at most 1,542 bytes, docs/contracts.md) with room to spare. */
const MAX_PARENT_JOB_CHARS = 2048;
// RFC 3339 date-time (§5.6): full-date "T" full-time with a mandatory offset. Hours 00-23,
// minutes and seconds 00-59 (no leap second: a JS Date cannot hold one); the day is checked
// against its month. The same rule is the `pattern` of `time` in envelope.schema.json
// (`^\d{4}-\d{2}-\d{2}[Tt]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$`
// with the calendar check on top), read here character by character: the regular expression with
// its captures was a third of the envelope's checks per record (issue 10 profile). A property test
// holds the two to the same answers (test/unit/envelope-time.test.ts).

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** The number of the two ASCII digits at `at`, or -1 when they are not two digits. */
function twoDigits(value: string, at: number): number {
  const tens = value.charCodeAt(at) - 48;
  const ones = value.charCodeAt(at + 1) - 48;
  // charCodeAt past the end is NaN: every comparison with it is false.
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

/** `HH:MM` at `at` with hours 00-23 and minutes 00-59 (a time or an offset). */
function isHoursMinutes(value: string, at: number): boolean {
  const hours = twoDigits(value, at);
  const minutes = twoDigits(value, at + 3);
  return hours >= 0 && hours <= 23 && value.charCodeAt(at + 2) === 58 && minutes >= 0 && minutes <= 59;
}

/** RFC 3339 date-time with the calendar check of §5.7 (29 February only in leap years). */
function isRfc3339DateTime(value: string): boolean {
  // YYYY-MM-DDTHH:MM:SS then Z, or .fraction and/or an offset.
  if (value.length < 20) return false;
  const century = twoDigits(value, 0);
  const yearOfCentury = twoDigits(value, 2);
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  const separator = value.charCodeAt(10);
  if (
    century < 0 ||
    yearOfCentury < 0 ||
    value.charCodeAt(4) !== 45 ||
    value.charCodeAt(7) !== 45 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    (separator !== 84 && separator !== 116) ||
    !isHoursMinutes(value, 11) ||
    value.charCodeAt(16) !== 58
  ) {
    return false;
  }
  const seconds = twoDigits(value, 17);
  if (seconds < 0 || seconds > 59) return false;
  let at = 19;
  if (value.charCodeAt(at) === 46) {
    const first = ++at;
    while (at < value.length && isDigitCode(value.charCodeAt(at))) at++;
    if (at === first) return false;
  }
  const offset = value.charCodeAt(at);
  if (offset === 90 || offset === 122) {
    if (at + 1 !== value.length) return false;
  } else if (offset === 43 || offset === 45) {
    if (at + 6 !== value.length || !isHoursMinutes(value, at + 1)) return false;
  } else {
    return false;
  }
  const year = century * 100 + yearOfCentury;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  // No Date.parse on top: after these checks it accepts every string (V8, checked over 300,000
  // random valid timestamps: lower-case t/z, year 0000, any fraction).
  return day <= daysInMonth;
}

/** Whether a UTF-16 code unit is an ASCII digit. */
function isDigitCode(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Length in Unicode code points, as JSON Schema `maxLength` counts (not UTF-16 units). */
function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}
// CloudEvents §3.1.1: attribute names are lowercase a-z and 0-9.
const ATTRIBUTE_NAME = /^[a-z0-9]{1,20}$/;
const KNOWN = new Set([
  'specversion',
  'id',
  'source',
  'type',
  'time',
  'datacontenttype',
  'data',
  'partitionkey',
  'correlationid',
  'causationid',
  'rootid',
  'parentjob',
  'traceparent',
  'tracestate',
  'runat',
  'schedulegeneration',
  'batchid',
  'completesbatch',
  'batchwatch',
]);

/** The optional attributes an envelope keeps (the rest of KNOWN is required). */
const OPTIONAL = [
  'partitionkey',
  'correlationid',
  'causationid',
  'rootid',
  'parentjob',
  'traceparent',
  'tracestate',
  'runat',
  'schedulegeneration',
  'batchid',
  'completesbatch',
  'batchwatch',
] as const satisfies readonly (keyof JobEnvelope)[];

function requireString(
  obj: Record<string, unknown>,
  field: string,
  maxChars = Number.POSITIVE_INFINITY,
): string {
  const value = obj[field];
  if (value === undefined) throw new EnvelopeError(field, 'is missing');
  if (typeof value !== 'string') throw new EnvelopeError(field, `must be a string, got ${typeof value}`);
  if (value.length === 0) throw new EnvelopeError(field, 'must not be empty');
  // A string has at most as many code points as UTF-16 units: count only when it could be over.
  if (value.length > maxChars && codePointLength(value) > maxChars) {
    throw new EnvelopeError(field, `must be at most ${maxChars} characters`);
  }
  return value;
}

/**
 * Parses and checks an SQS body as a job envelope. Every field that becomes an SQS parameter
 * obeys the producer's rule for it, so an envelope accepted here can be sent on: `partitionkey`
 * is a valid `MessageGroupId`; `source` and `id` only reach SQS hashed
 * ({@link deduplicationIdOf}: 64 hex characters), whatever characters they hold.
 *
 * @param body the raw SQS message body (a JSON string).
 * @returns the envelope; unknown extension attributes are kept out of the result.
 * @throws {EnvelopeError} naming the field at fault (`body` when the JSON itself is bad, or too
 *   deeply nested to parse: "could not be parsed").
 */
export function parseEnvelope(body: string): JobEnvelope {
  let parsed: unknown;
  try {
    parsed = parseJsonText(body);
  } catch (err) {
    // A SyntaxError is bad JSON; anything else is valid JSON the parser could not take (a body
    // nested too deep for the reviver path of parseJsonText): permanent either way, named apart.
    const problem = err instanceof SyntaxError ? 'is not JSON' : 'could not be parsed';
    throw new EnvelopeError('body', `${problem} (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new EnvelopeError('body', 'must be a JSON object');
  }
  const obj = parsed as Record<string, unknown>;
  const specversion = requireString(obj, 'specversion');
  if (specversion !== SPEC_VERSION) {
    throw new EnvelopeError('specversion', `must be "${SPEC_VERSION}", got "${specversion}"`);
  }
  const id = requireString(obj, 'id', MAX_ID_CHARS);
  const source = requireString(obj, 'source');
  const type = requireString(obj, 'type');
  const time = requireString(obj, 'time');
  if (!isRfc3339DateTime(time)) {
    throw new EnvelopeError('time', `must be an RFC 3339 timestamp, got "${time}"`);
  }
  const datacontenttype = requireString(obj, 'datacontenttype');
  if (datacontenttype !== DATA_CONTENT_TYPE) {
    throw new EnvelopeError('datacontenttype', `must be "${DATA_CONTENT_TYPE}", got "${datacontenttype}"`);
  }
  if (!('data' in obj)) throw new EnvelopeError('data', 'is missing');
  let extensions = false;
  for (const key of Object.keys(obj)) {
    if (KNOWN.has(key)) continue;
    if (!ATTRIBUTE_NAME.test(key)) {
      throw new EnvelopeError(key, 'is not a valid CloudEvents attribute name (lowercase a-z, 0-9, max 20)');
    }
    extensions = true;
  }
  if (obj.partitionkey !== undefined) {
    const partitionkey = requireString(obj, 'partitionkey', 128);
    // The worker sends it on as the MessageGroupId of children (and of FIFO dead letters): an
    // envelope whose key could not be sent on is malformed now, before any side effect.
    if (!isValidMessageGroupId(partitionkey)) {
      throw new EnvelopeError(
        'partitionkey',
        'must be 1-128 characters of a-z, A-Z, 0-9 and punctuation (printable ASCII, no space): it becomes the MessageGroupId (SendMessage API)',
      );
    }
  }
  // Lineage and trace context: absent on most producers' envelopes; each is checked only when there.
  if (obj.correlationid !== undefined) requireString(obj, 'correlationid', MAX_ID_CHARS);
  if (obj.causationid !== undefined) requireString(obj, 'causationid', MAX_ID_CHARS);
  if (obj.rootid !== undefined) requireString(obj, 'rootid', MAX_ID_CHARS);
  if (obj.parentjob !== undefined) requireString(obj, 'parentjob', MAX_PARENT_JOB_CHARS);
  if (obj.batchid !== undefined) requireString(obj, 'batchid', MAX_BATCH_ID_CHARS);
  if (obj.completesbatch !== undefined) requireString(obj, 'completesbatch', MAX_BATCH_ID_CHARS);
  if (obj.batchwatch !== undefined) requireString(obj, 'batchwatch', MAX_BATCH_ID_CHARS);
  if (obj.traceparent !== undefined) {
    const problem = traceparentProblem(requireString(obj, 'traceparent'));
    if (problem !== undefined) throw new EnvelopeError('traceparent', problem);
  }
  if (obj.tracestate !== undefined) {
    const problem = tracestateProblem(requireString(obj, 'tracestate'));
    if (problem !== undefined) throw new EnvelopeError('tracestate', problem);
    if (obj.traceparent === undefined) {
      throw new EnvelopeError(
        'tracestate',
        'needs a traceparent (W3C Trace Context: tracestate goes with it)',
      );
    }
  }
  if (obj.runat !== undefined || obj.schedulegeneration !== undefined) checkSchedule(obj);
  // Every attribute is now checked. Without extensions the parsed object holds exactly the
  // envelope's attributes: it is the envelope (one object less per record, issue 10 profile).
  if (!extensions) return obj as unknown as JobEnvelope;
  const envelope: Record<string, unknown> = {
    specversion: SPEC_VERSION,
    id,
    source,
    type,
    time,
    datacontenttype,
    data: obj.data,
  };
  for (const key of OPTIONAL) if (obj[key] !== undefined) envelope[key] = obj[key];
  return envelope as unknown as JobEnvelope;
}

/** Longest `schedulegeneration`: 15 digits stay exact as a JavaScript number and a DynamoDB number. */
const SCHEDULE_GENERATION = /^[1-9][0-9]{0,14}$/;

/** `runat` and `schedulegeneration`: both or neither; an RFC 3339 time and a positive integer string. */
function checkSchedule(obj: Record<string, unknown>): void {
  const runat = requireString(obj, 'runat');
  if (!isRfc3339DateTime(runat))
    throw new EnvelopeError('runat', `must be an RFC 3339 timestamp, got "${runat}"`);
  const generation = requireString(obj, 'schedulegeneration');
  if (!SCHEDULE_GENERATION.test(generation)) {
    throw new EnvelopeError(
      'schedulegeneration',
      `must be a positive integer written as a string ("1", "2", ...), got "${generation}"`,
    );
  }
}

/** Input of {@link createEnvelope}. */
export interface CreateEnvelopeInput<Data> {
  readonly type: string;
  readonly source: string;
  readonly data: Data;
  /** @default a random UUID v4 */
  readonly id?: string;
  readonly partitionKey?: string;
  /** @default now */
  readonly time?: Date;
  /** Lineage and trace attributes, written as given (`correlationid`, `traceparent`...). */
  readonly lineage?: EnvelopeLineage;
  /** A job sent for later: `runat` and `schedulegeneration`, written last. @default none */
  readonly schedule?: EnvelopeSchedule;
  /** Batch attributes, written as given (`batchid`, `completesbatch`, `batchwatch`). */
  readonly batch?: EnvelopeBatchAttributes;
}

/**
 * Builds an envelope for sending. Validates with the same rules as {@link parseEnvelope}.
 * @throws {EnvelopeError} naming the first field at fault (e.g. an empty `type` or `source`).
 */
export function createEnvelope<Data>(input: CreateEnvelopeInput<Data>): JobEnvelope<Data> {
  const envelope: JobEnvelope<Data> = {
    specversion: SPEC_VERSION,
    id: input.id ?? randomUUID(),
    source: input.source,
    type: input.type,
    time: (input.time ?? new Date()).toISOString(),
    datacontenttype: DATA_CONTENT_TYPE,
    data: input.data,
    ...(input.partitionKey === undefined ? {} : { partitionkey: input.partitionKey }),
    ...lineageAttributes(input.lineage),
    ...(input.schedule === undefined
      ? {}
      : { runat: input.schedule.runat, schedulegeneration: input.schedule.schedulegeneration }),
    ...batchAttributes(input.batch),
  };
  parseEnvelope(JSON.stringify(envelope));
  return envelope;
}

/** The lineage attributes that are set, in a fixed order (so equal lineage gives equal bodies). */
function lineageAttributes(lineage: EnvelopeLineage | undefined): EnvelopeLineage {
  if (lineage === undefined) return {};
  const out: { -readonly [K in keyof EnvelopeLineage]: EnvelopeLineage[K] } = {};
  if (lineage.correlationid !== undefined) out.correlationid = lineage.correlationid;
  if (lineage.causationid !== undefined) out.causationid = lineage.causationid;
  if (lineage.rootid !== undefined) out.rootid = lineage.rootid;
  if (lineage.parentjob !== undefined) out.parentjob = lineage.parentjob;
  if (lineage.traceparent !== undefined) out.traceparent = lineage.traceparent;
  if (lineage.tracestate !== undefined) out.tracestate = lineage.tracestate;
  return out;
}

/** The batch attributes that are set, in a fixed order. */
function batchAttributes(batch: EnvelopeBatchAttributes | undefined): EnvelopeBatchAttributes {
  if (batch === undefined) return {};
  const out: { -readonly [K in keyof EnvelopeBatchAttributes]: EnvelopeBatchAttributes[K] } = {};
  if (batch.batchid !== undefined) out.batchid = batch.batchid;
  if (batch.completesbatch !== undefined) out.completesbatch = batch.completesbatch;
  if (batch.batchwatch !== undefined) out.batchwatch = batch.batchwatch;
  return out;
}

/**
 * FIFO `MessageDeduplicationId` of a job: SHA-256 hex (64 chars, under the 128-char limit of the
 * SendMessage API) of the JSON text of `[source, id, type, data]`. The same job sent twice within
 * SQS's 5-minute deduplication interval is delivered once ("Amazon SQS FIFO queue key terms",
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html).
 * A different job under a reused `id` (another `type` or other `data`) gets another dedup id, so
 * SQS does not swallow it: it reaches the worker, where a job of the same type and key with other
 * data is dead-lettered as `PayloadMismatchError` with evidence, and a job of another type runs
 * under its own identity (the idempotency key is scoped by type). Deduplication by SQS saves a
 * delivery; what keeps a job to one run is the worker's idempotency record, so two texts of the
 * same data (another key order) only cost a delivery the worker absorbs.
 */
export function deduplicationIdOf(envelope: Pick<JobEnvelope, 'source' | 'id' | 'type' | 'data'>): string {
  // JSON array encoding keeps the parts apart ("a\nb" + "c" never hashes like "a" + "b\nc").
  return createHash('sha256')
    .update(JSON.stringify([envelope.source, envelope.id, envelope.type, envelope.data]))
    .digest('hex');
}

/**
 * Id of a child job enqueued by a parent: derived from the parent's identity and the child's
 * type and position, so a parent that runs again produces the same child id (and so the same
 * FIFO dedup id and idempotency key) instead of a second child.
 */
export function childJobId(
  parent: Pick<JobEnvelope, 'source' | 'id'>,
  childType: string,
  index: number,
): string {
  return childIdentity(parent, childType, index).id;
}

/**
 * {@link childJobId} and the child's trace span id, from one SHA-256: the id takes the first 32
 * hex digits (as a UUID), the span id (the child's traceparent parent id) the next 16. Both are
 * the same on a re-run of the parent.
 */
export function childIdentity(
  parent: Pick<JobEnvelope, 'source' | 'id'>,
  childType: string,
  index: number,
): { readonly id: string; readonly spanId: string } {
  const hash = createHash('sha256')
    .update(JSON.stringify([parent.source, parent.id, childType, index]))
    .digest('hex');
  return {
    id: `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20, 32)}`,
    spanId: hash.slice(32, 48),
  };
}

/**
 * The trace id that children of a parent without a traceparent start: SHA-256 of the parent's
 * identity, so every child of the parent (and a re-run's) shares it.
 */
export function derivedTraceId(parent: Pick<JobEnvelope, 'source' | 'id'>): string {
  return createHash('sha256')
    .update(JSON.stringify(['trace', parent.source, parent.id]))
    .digest('hex')
    .slice(0, 32);
}
