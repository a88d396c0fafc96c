/**
 * The items of the idempotency table: one job record per job key, one step record per `once`
 * step (and one group record per parked FIFO message group: group-record.ts). Table contract (docs/contracts.md): partition key `pk` (String), no sort key, TTL
 * attribute `expiresAt` (epoch seconds).
 *
 * Every attribute is written with its DynamoDB type; numbers are integers. Expressions always
 * alias attribute names (`#status`, `#result` ...): several are DynamoDB reserved words
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ReservedWords.html).
 *
 * Why one file: it is the table's item format; the conditional writes and the reads that parse
 * what they wrote must change together.
 */
import { randomBytes } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { IdempotencyRecordError } from './errors.ts';
import { unescapeKeyPart } from './keys.ts';

/**
 * Status of a job record.
 * - `IN_PROGRESS`: a run holds the lease until `leaseExpiresAtMs`.
 * - `COMPLETED`: done; duplicates get the stored result.
 * - `RELEASED`: the last run failed transiently and gave the lease back; the next delivery runs.
 * - `FAILED`: the last run failed permanently (or was dead-lettered); a redrive runs again.
 */
export type JobRecordStatus = 'IN_PROGRESS' | 'COMPLETED' | 'RELEASED' | 'FAILED';

const STATUSES: ReadonlySet<string> = new Set(['IN_PROGRESS', 'COMPLETED', 'RELEASED', 'FAILED']);

/**
 * Why a result or step value was not stored whole (the marker left in its place): `over-size-cap`,
 * or `not-json` when its JSON text would not read back the same value (a `Date`, a `Map`, `NaN`...:
 * faithful-json.ts) or it has none; the record's `...OmittedDetail` then says what and where.
 */
export type OmittedReason = 'over-size-cap' | 'not-json';

/** A job record as read from the table. Attribute names are the property names. */
export interface JobRecord {
  /** Partition key: {@link jobRecordKey}. */
  readonly pk: string;
  /** Always `"job"`. */
  readonly recordType: 'job';
  readonly status: JobRecordStatus;
  /** Fencing token: a random UUID written by each acquisition; later writes require it. */
  readonly leaseToken: string;
  /** When the lease of the latest acquisition ends, epoch ms. Always present. */
  readonly leaseExpiresAtMs: number;
  /** TTL attribute: the record counts as absent from this time on, epoch seconds. */
  readonly expiresAt: number;
  /** SHA-256 hex of the canonical JSON of the job data. */
  readonly payloadHash: string;
  /** 1-based count of runs of this key in the current cycle; survives releases; reset by a redrive. */
  readonly attempt: number;
  /** Random UUID of the record's life, kept across releases and redrives; new when the key starts fresh. Step records must match it. */
  readonly generation: string;
  /** Number of times a FAILED record was taken again (redrives). */
  readonly redriveCount: number;
  /** The job type (also the first part of `pk`). */
  readonly jobType: string;
  /** SQS messageId of the delivery that last acquired the lease: evidence, and how a redelivery of a dead-lettered message is told from a redrive (new messageId). */
  readonly messageId: string;
  /** When the record's current generation started, epoch ms. */
  readonly createdAtMs: number;
  /** When the latest lease was taken, epoch ms. */
  readonly acquiredAtMs: number;
  /** Last write, epoch ms. */
  readonly updatedAtMs: number;
  /** When the latest run completed, released or failed, epoch ms. */
  readonly endedAtMs: number | undefined;
  /** When the key completed, epoch ms (COMPLETED only). */
  readonly completedAtMs: number | undefined;
  /** COMPLETED only: `true` when `result` holds the whole result. */
  readonly resultStored: boolean | undefined;
  /** COMPLETED only: the result as JSON text; absent when the result was `undefined` or not stored. */
  readonly result: string | undefined;
  /** COMPLETED only: UTF-8 bytes of the result's JSON text (0 for `undefined`). */
  readonly resultBytes: number | undefined;
  /** COMPLETED only: the marker saying why the result was not stored. */
  readonly resultOmittedReason: OmittedReason | undefined;
  /**
   * COMPLETED only, with `resultOmittedReason` `not-json`: the sentence naming what was not a JSON
   * value and where (`job 'x' returned a Date at result.at: ...`), at most {@link MAX_ERROR_BYTES}.
   * Absent on records written before it existed.
   */
  readonly resultOmittedDetail?: string | undefined;
  /** `Name: message` of the last failure, truncated to {@link MAX_ERROR_BYTES}. */
  readonly lastError: string | undefined;
  /** `transient`, `permanent` or `lease-expired`: how the last failure ended its run. */
  readonly lastErrorKind: string | undefined;
  /** First failure in the current cycle, epoch ms. */
  readonly firstFailureAtMs: number | undefined;
  /** Latest failure, epoch ms. */
  readonly lastFailureAtMs: number | undefined;
  /**
   * Set when a lease expired without completion and the job's policy is `dead-letter`, epoch ms
   * of that lease's expiry; cleared by a permanent failure (the worker dead-lettered it).
   */
  readonly interruptedAtMs: number | undefined;
  /** Chain link up: the parent job's record key (the envelope's `parentjob`); children only. */
  readonly parentJob?: string | undefined;
  /** Chain links down, COMPLETED only: record keys of the children its run sent (String Set). */
  readonly childJobs?: readonly string[] | undefined;
}

/** A step record of `once`, under `<jobPk>#step#<stepName>`. */
export interface StepRecord {
  readonly pk: string;
  /** Always `"step"`. */
  readonly recordType: 'step';
  /** Always `COMPLETED`: a step record exists only once its step ran. */
  readonly status: 'COMPLETED';
  /** `generation` of the job record it belongs to; a different one means a leftover. */
  readonly generation: string;
  readonly stepName: string;
  /** `true` when `value` holds the whole value. */
  readonly valueStored: boolean;
  /** The step's value as JSON text; absent for `undefined` or when not stored. */
  readonly value: string | undefined;
  /** UTF-8 bytes of the value's JSON text. */
  readonly valueBytes: number;
  readonly valueOmittedReason: OmittedReason | undefined;
  /**
   * With `valueOmittedReason` `not-json`: the sentence naming what was not a JSON value and where
   * (`step 'charge' returned a Map at value.items: ...`), at most {@link MAX_ERROR_BYTES}. Absent on
   * records written before it existed.
   */
  readonly valueOmittedDetail?: string | undefined;
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
  /** When the step completed, epoch ms. */
  readonly completedAtMs: number;
  /** Attempt and lease token of the run that recorded it (evidence). */
  readonly attempt: number;
  readonly leaseToken: string;
  /**
   * Random UUID of the write that recorded it: how an SDK retry of that write (after a lost
   * response) recognises its own record. Absent on records written before it existed.
   */
  readonly writeId: string | undefined;
}

/** DynamoDB's item size limit: 400 KB, names and values included, 1 KB = 1,024 bytes. */
export const DYNAMODB_MAX_ITEM_BYTES = 400 * 1024;
/**
 * Bytes kept free in an item for everything but the result or step value. A job record
 * without its result stays under 8 KiB: `pk` at most 2,048 bytes, `lastError` at most
 * {@link MAX_ERROR_BYTES}, `messageId` and `jobType` at most {@link MAX_TEXT_BYTES} each,
 * about 20 short attributes.
 */
export const ITEM_RESERVE_BYTES = 16 * 1024;
/** The largest allowed `maxResultBytes`: 409,600 − 16,384 = 393,216 bytes. */
export const MAX_STORABLE_RESULT_BYTES = DYNAMODB_MAX_ITEM_BYTES - ITEM_RESERVE_BYTES;
/** `lastError` is cut to this many UTF-8 bytes. */
export const MAX_ERROR_BYTES = 2048;
/** Evidence strings (`messageId`, `jobType`, `stepName`) are cut to this many UTF-8 bytes. */
export const MAX_TEXT_BYTES = 1024;

/** Cuts a string to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const buf = Buffer.from(text, 'utf8').subarray(0, maxBytes);
  // Drop a trailing partial sequence: decoding replaces it with U+FFFD, which we strip.
  return buf.toString('utf8').replace(/\uFFFD+$/, '');
}

/** JSON text of a value and its size, or why it cannot be kept. */
export type Serialized =
  | { readonly ok: true; readonly json: string | undefined; readonly bytes: number }
  | { readonly ok: false; readonly reason: 'not-json'; readonly bytes: number };

/** Serializes a result or step value as JSON text (`undefined` stays `undefined`, 0 bytes). */
export function serialize(value: unknown): Serialized {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return { ok: false, reason: 'not-json', bytes: 0 };
  }
  return { ok: true, json, bytes: json === undefined ? 0 : Buffer.byteLength(json, 'utf8') };
}

/**
 * Estimated size of an item in bytes, after the DynamoDB developer guide "DynamoDB item sizes
 * and formats" (CapacityUnitCalculations.html): names plus values; strings in UTF-8 bytes;
 * numbers about 1 byte per 2 significant digits plus 1; booleans and null 1; lists and maps 3
 * plus 1 per element. Rounded up, so it never under-counts.
 */
export function estimateItemBytes(item: Record<string, AttributeValue>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) {
    total += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  }
  return total;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.N !== undefined) return Math.ceil(value.N.replace(/[^0-9]/g, '').length / 2) + 1;
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueBytes(v), 0);
  if (value.M !== undefined) {
    return 3 + Object.entries(value.M).reduce((s, [k, v]) => s + 1 + Buffer.byteLength(k) + valueBytes(v), 0);
  }
  if (value.SS !== undefined) return value.SS.reduce((sum, v) => sum + Buffer.byteLength(v, 'utf8'), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, v) => sum + Math.ceil(v.length / 2) + 1, 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, v) => sum + v.byteLength, 0);
  return 0;
}

/** String attribute value. */
export const S = (value: string): AttributeValue => ({ S: value });
/** Number attribute value of an integer. */
export const N = (value: number): AttributeValue => ({ N: String(Math.trunc(value)) });
/** Boolean attribute value. */
export const BOOL = (value: boolean): AttributeValue => ({ BOOL: value });

/**
 * Writes a job record as a full item (PutItem replaces the whole item). Only what cannot be
 * derived is written (docs/contracts.md, "Idempotency table"): `jobType` is the first part of
 * `pk`; `createdAtMs` only when it differs from `acquiredAtMs`; `redriveCount` only above 0;
 * `updatedAtMs` and `completedAtMs` never (read as the latest of `acquiredAtMs`/`endedAtMs`, and
 * `endedAtMs` of a COMPLETED record); the result attributes as {@link resultAttributes}. Every
 * attribute the previous record format required is still written (`attempt`, `generation`, hex
 * `payloadHash`), so a rolled-back worker reads these records too.
 */
export function jobRecordToItem(record: JobRecord): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {
    pk: S(record.pk),
    recordType: S('job'),
    status: S(record.status),
    leaseToken: S(record.leaseToken),
    leaseExpiresAtMs: N(record.leaseExpiresAtMs),
    expiresAt: N(record.expiresAt),
    payloadHash: S(record.payloadHash),
    attempt: N(record.attempt),
    generation: S(record.generation),
    messageId: S(truncateUtf8(record.messageId, MAX_TEXT_BYTES)),
    acquiredAtMs: N(record.acquiredAtMs),
  };
  if (record.createdAtMs !== record.acquiredAtMs) item.createdAtMs = N(record.createdAtMs);
  if (record.redriveCount > 0) item.redriveCount = N(record.redriveCount);
  const optionalNumbers = {
    endedAtMs: record.endedAtMs,
    firstFailureAtMs: record.firstFailureAtMs,
    lastFailureAtMs: record.lastFailureAtMs,
    interruptedAtMs: record.interruptedAtMs,
  };
  for (const [name, value] of Object.entries(optionalNumbers)) {
    if (value !== undefined) item[name] = N(value);
  }
  if (record.status === 'COMPLETED' && record.resultStored !== undefined) {
    Object.assign(
      item,
      resultAttributes({
        stored: record.resultStored,
        json: record.result,
        bytes: record.resultBytes ?? 0,
        reason: record.resultOmittedReason,
        detail: record.resultOmittedDetail,
      }),
    );
  }
  if (record.lastError !== undefined) item.lastError = S(truncateUtf8(record.lastError, MAX_ERROR_BYTES));
  if (record.lastErrorKind !== undefined) item.lastErrorKind = S(record.lastErrorKind);
  if (record.parentJob !== undefined) item.parentJob = S(record.parentJob);
  return item;
}

/**
 * The result attributes of a COMPLETED record: `result` (the JSON text) when stored and not
 * `undefined`; when not stored, `resultStored` `false`, `resultBytes`, `resultOmittedReason` and
 * `resultOmittedDetail` (cut to {@link MAX_ERROR_BYTES}). A stored result writes no
 * `resultStored` and no `resultBytes`: a COMPLETED record without `resultStored` holds its whole
 * result, and its size is that of `result`.
 */
export function resultAttributes(result: {
  readonly stored: boolean;
  readonly json: string | undefined;
  readonly bytes: number;
  readonly reason: OmittedReason | undefined;
  readonly detail: string | undefined;
}): Record<string, AttributeValue> {
  if (result.stored) return result.json === undefined ? {} : { result: S(result.json) };
  const item: Record<string, AttributeValue> = { resultStored: BOOL(false), resultBytes: N(result.bytes) };
  if (result.reason !== undefined) item.resultOmittedReason = S(result.reason);
  if (result.detail !== undefined) item.resultOmittedDetail = S(truncateUtf8(result.detail, MAX_ERROR_BYTES));
  return item;
}

/**
 * A new lease token or generation: 16 random bytes (128 bits, as a random UUID has 122) as 22
 * base64url characters, 14 bytes fewer than a UUID in every write that carries one.
 */
export function randomToken(): string {
  return randomBytes(16).toString('base64url');
}

/** Writes a step record as a full item. */
export function stepRecordToItem(record: StepRecord): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {
    pk: S(record.pk),
    recordType: S('step'),
    status: S('COMPLETED'),
    generation: S(record.generation),
    stepName: S(truncateUtf8(record.stepName, MAX_TEXT_BYTES)),
    valueStored: BOOL(record.valueStored),
    valueBytes: N(record.valueBytes),
    expiresAt: N(record.expiresAt),
    completedAtMs: N(record.completedAtMs),
    attempt: N(record.attempt),
    leaseToken: S(record.leaseToken),
  };
  if (record.writeId !== undefined) item.writeId = S(record.writeId);
  if (record.value !== undefined) item.value = S(record.value);
  if (record.valueOmittedReason !== undefined) item.valueOmittedReason = S(record.valueOmittedReason);
  if (record.valueOmittedDetail !== undefined)
    item.valueOmittedDetail = S(truncateUtf8(record.valueOmittedDetail, MAX_ERROR_BYTES));
  return item;
}

/** The kind of record a key holds (`recordType`): group records are in group-record.ts. */
export type RecordKind = 'job' | 'step' | 'group';

function pkOf(item: Record<string, AttributeValue>): string {
  return item.pk?.S ?? '(no pk)';
}

/** The error for an item of kind `expected` whose `attribute` is missing or mistyped. */
export function malformed(
  item: Record<string, AttributeValue>,
  attribute: string,
  expected: RecordKind,
): IdempotencyRecordError {
  const pk = pkOf(item);
  return new IdempotencyRecordError(
    `idempotency record ${pk} is malformed: ${attribute} missing or of the wrong type (expected a ${expected} record)`,
    { context: { pk, attribute, expected, found: item.recordType?.S } },
  );
}

/**
 * Throws unless `item` is a record of kind `expected` (its `recordType`).
 * @throws {IdempotencyRecordError} naming what was found instead.
 */
export function requireKind(item: Record<string, AttributeValue>, expected: RecordKind): void {
  const found = item.recordType?.S;
  if (found === expected) return;
  const pk = pkOf(item);
  const what =
    found === 'job' || found === 'step' || found === 'group'
      ? `a ${found} record`
      : `a record of type ${JSON.stringify(found ?? null)}`;
  throw new IdempotencyRecordError(
    `idempotency record ${pk} is ${what} where a ${expected} record is expected: the key is used by something else (a key built before keys were injective, or another writer on the table); check the record, delete it if it is a leftover, then redrive`,
    { context: { pk, expected, found } },
  );
}

/**
 * Whether an item's TTL has passed at `nowMs`, read without parsing the rest: an expired item
 * counts as absent whatever it holds (see {@link isExpired}).
 */
export function isExpiredItem(item: Record<string, AttributeValue>, nowMs: number): boolean {
  const raw = item.expiresAt?.N;
  if (raw === undefined) return false;
  const expiresAt = Number(raw);
  return Number.isFinite(expiresAt) && isExpired({ expiresAt }, nowMs);
}

/** A required String attribute. @throws {IdempotencyRecordError} when missing. */
export function reqS(item: Record<string, AttributeValue>, name: string, kind: RecordKind): string {
  const v = item[name]?.S;
  if (v === undefined) throw malformed(item, name, kind);
  return v;
}
/** An optional String attribute. */
export function optS(item: Record<string, AttributeValue>, name: string): string | undefined {
  return item[name]?.S;
}
/** A required Number attribute. @throws {IdempotencyRecordError} when missing or not a number. */
export function reqN(item: Record<string, AttributeValue>, name: string, kind: RecordKind): number {
  const v = optN(item, name, kind);
  if (v === undefined) throw malformed(item, name, kind);
  return v;
}
/** An optional Number attribute. @throws {IdempotencyRecordError} when not a number. */
export function optN(
  item: Record<string, AttributeValue>,
  name: string,
  kind: RecordKind,
): number | undefined {
  const raw = item[name]?.N;
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (!Number.isFinite(v)) throw malformed(item, name, kind);
  return v;
}
function optBool(item: Record<string, AttributeValue>, name: string): boolean | undefined {
  return item[name]?.BOOL;
}
function optReason(item: Record<string, AttributeValue>, name: string): OmittedReason | undefined {
  const v = optS(item, name);
  return v === 'over-size-cap' || v === 'not-json' ? v : undefined;
}

/**
 * Reads a job record.
 * @throws {IdempotencyRecordError} (permanent) when the item is not a job record (a step record,
 *   or no `recordType`) or a required attribute is missing or mistyped.
 */
export function parseJobRecord(item: Record<string, AttributeValue>): JobRecord {
  requireKind(item, 'job');
  const J = 'job';
  const status = reqS(item, 'status', J);
  if (!STATUSES.has(status)) throw malformed(item, 'status', J);
  const pk = reqS(item, 'pk', J);
  const acquiredAtMs = optN(item, 'acquiredAtMs', J) ?? 0;
  const endedAtMs = optN(item, 'endedAtMs', J);
  const completed = status === 'COMPLETED';
  const resultStored = optBool(item, 'resultStored') ?? (completed ? true : undefined);
  const result = optS(item, 'result');
  return {
    pk,
    recordType: 'job',
    status: status as JobRecordStatus,
    leaseToken: reqS(item, 'leaseToken', J),
    leaseExpiresAtMs: reqN(item, 'leaseExpiresAtMs', J),
    expiresAt: reqN(item, 'expiresAt', J),
    payloadHash: reqS(item, 'payloadHash', J),
    attempt: reqN(item, 'attempt', J),
    generation: reqS(item, 'generation', J),
    redriveCount: optN(item, 'redriveCount', J) ?? 0,
    // Written by records of the previous format; else the first part of `pk` (escaped there).
    jobType: optS(item, 'jobType') ?? jobTypeOfPk(pk),
    messageId: optS(item, 'messageId') ?? '',
    createdAtMs: optN(item, 'createdAtMs', J) ?? acquiredAtMs,
    acquiredAtMs,
    updatedAtMs: optN(item, 'updatedAtMs', J) ?? Math.max(acquiredAtMs, endedAtMs ?? 0),
    endedAtMs,
    completedAtMs: optN(item, 'completedAtMs', J) ?? (completed ? endedAtMs : undefined),
    resultStored,
    result,
    resultBytes:
      optN(item, 'resultBytes', J) ??
      (completed ? (result === undefined ? 0 : Buffer.byteLength(result, 'utf8')) : undefined),
    resultOmittedReason: optReason(item, 'resultOmittedReason'),
    resultOmittedDetail: optS(item, 'resultOmittedDetail'),
    lastError: optS(item, 'lastError'),
    lastErrorKind: optS(item, 'lastErrorKind'),
    firstFailureAtMs: optN(item, 'firstFailureAtMs', J),
    lastFailureAtMs: optN(item, 'lastFailureAtMs', J),
    interruptedAtMs: optN(item, 'interruptedAtMs', J),
    parentJob: optS(item, 'parentJob'),
    childJobs: item.childJobs?.SS,
  };
}

/** The job type of a job record key `<jobType>#<key>`: its first part unescaped, or as it is when hashed. */
function jobTypeOfPk(pk: string): string {
  const part = pk.slice(0, Math.max(0, pk.indexOf('#')));
  try {
    return unescapeKeyPart(part);
  } catch {
    return part;
  }
}

/**
 * Reads a step record.
 * @throws {IdempotencyRecordError} (permanent) when the item is not a step record (a job record,
 *   or no `recordType`) or a required attribute is missing or mistyped.
 */
export function parseStepRecord(item: Record<string, AttributeValue>): StepRecord {
  requireKind(item, 'step');
  const St = 'step';
  const valueStored = optBool(item, 'valueStored');
  if (valueStored === undefined) throw malformed(item, 'valueStored', St);
  return {
    pk: reqS(item, 'pk', St),
    recordType: 'step',
    status: 'COMPLETED',
    generation: reqS(item, 'generation', St),
    stepName: optS(item, 'stepName') ?? '',
    valueStored,
    value: optS(item, 'value'),
    valueBytes: optN(item, 'valueBytes', St) ?? 0,
    valueOmittedReason: optReason(item, 'valueOmittedReason'),
    valueOmittedDetail: optS(item, 'valueOmittedDetail'),
    expiresAt: reqN(item, 'expiresAt', St),
    completedAtMs: optN(item, 'completedAtMs', St) ?? 0,
    attempt: optN(item, 'attempt', St) ?? 0,
    leaseToken: optS(item, 'leaseToken') ?? '',
    writeId: optS(item, 'writeId'),
  };
}

/**
 * Whether a record's TTL has passed at `nowMs`. DynamoDB deletes expired items lazily
 * (typically within days), and expired items still show up in reads, so the store compares
 * `expiresAt` itself (developer guide, "Working with expired items", ttl-expired-items.html).
 * Expired means `expiresAt <= now` in epoch seconds, the same test as the guide's filter.
 */
export function isExpired(record: { readonly expiresAt: number }, nowMs: number): boolean {
  return record.expiresAt <= Math.floor(nowMs / 1000);
}
