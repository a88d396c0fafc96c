/**
 * Keys of the idempotency table and the keys derived from them. Every encoding here is
 * injective: distinct (job type, job key, step) never share a `pk` or an external
 * `Idempotency-Key`, whatever characters producers put in `source`, `id`, job types, keys or
 * step names (contract: docs/contracts.md, "Idempotency keys").
 *
 * Record keys (`pk`) are parts joined by `#`, each part percent-escaped so it holds no `#`:
 * - job record `<jobType>#<key>`, e.g. `payments.capture#/checkout\nord-42` (the default key of
 *   source `/checkout` and id `ord-42`, see {@link defaultJobKey});
 * - step record of `once` `<jobType>#<key>#step#<stepName>`;
 * - group record of a parked FIFO message group `%group#<queueName>#<messageGroupId>`
 *   ({@link groupRecordKey}): its first part `%group` is never an escaped part (every `%` of one
 *   starts `%25`, `%23` or `%u`) nor a hashed one (`%sha256:`), and it has three parts where job
 *   records have two and step records four.
 * Escaping ({@link escapeKeyPart}): `%` → `%25`, `#` → `%23`, a lone UTF-16 surrogate (which
 * has no UTF-8 form: DynamoDB and SHA-256 would both see U+FFFD) → `%uXXXX`; everything else,
 * newlines included, stays as it is, so keys without `#`, `%` or lone surrogates keep the `pk`
 * they had before escaping existed. Splitting a `pk` on `#` gives its parts back: two for a job
 * record, four with `step` third for a step record ({@link decodeRecordKey}), three with `%group`
 * first for a group record ({@link decodeGroupRecordKey}).
 *
 * Partition key values are at most 2,048 bytes (DynamoDB developer guide, "Constraints":
 * partition key length). A part that would make the key too long is replaced by
 * `%sha256:<hex>`, the SHA-256 of its escaped (well-formed) text; `%s` never occurs in an escaped
 * part, so a hashed part never equals a verbatim one. Longest keys: job record
 * {@link MAX_VERBATIM_JOB_KEY_BYTES}, step record 1,024 + 6 + {@link MAX_VERBATIM_STEP_NAME_BYTES}.
 */
import { createHash } from 'node:crypto';
import { JobError } from '../../core/errors.ts';
import { utf8Bytes } from '../../core/message-size.ts';

/** Longest job record key kept verbatim, in UTF-8 bytes; beyond it the key part is hashed. Leaves room for step suffixes. */
export const MAX_VERBATIM_JOB_KEY_BYTES = 1024;
/** Longest escaped step name kept verbatim in a step record key, in UTF-8 bytes; longer names are hashed. */
export const MAX_VERBATIM_STEP_NAME_BYTES = 512;
/** Longest escaped job type kept verbatim in a record key, in UTF-8 bytes; longer types are hashed. */
export const MAX_VERBATIM_JOB_TYPE_BYTES = 256;
/** DynamoDB's limit on a partition key value, in UTF-8 bytes (Constraints.html). Every key here stays under it. */
export const DYNAMODB_MAX_PARTITION_KEY_BYTES = 2048;

/** Separator of the parts of a record key; never found inside an escaped part. */
const SEPARATOR = '#';
/** Third part of a step record key. */
const STEP_MARKER = 'step';
/** Prefix of a hashed part. */
const HASHED_PREFIX = '%sha256:';
/** First part of a group record key: never an escaped or hashed part. */
const GROUP_MARKER = '%group';
/** Longest escaped queue name kept verbatim in a group record key, in UTF-8 bytes; longer names are hashed. */
export const MAX_VERBATIM_QUEUE_NAME_BYTES = 256;
/** Longest escaped message group id kept verbatim in a group record key (SQS allows 128 characters). */
export const MAX_VERBATIM_GROUP_ID_BYTES = 512;

/** `%`, `#`, a high surrogate not followed by a low one, a low surrogate not preceded by a high one. */
const TO_ESCAPE = /[%#]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPED = /%(?:25|23|u(D[89A-F][0-9A-F]{2}))/g;
const HASHED_PART = /^%sha256:[0-9a-f]{64}$/;

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function requireText(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new JobError(`idempotency: ${what} must be a non-empty string`);
  }
}

/**
 * One part of a record key, escaped: `%` → `%25`, `#` → `%23`, a lone surrogate → `%u` and
 * four upper-case hex digits; everything else unchanged. The result holds no `#`, is
 * well-formed UTF-16 (so its UTF-8 form is lossless), and {@link unescapeKeyPart} inverts it.
 */
export function escapeKeyPart(text: string): string {
  return text.replace(TO_ESCAPE, (found) => {
    if (found === '%') return '%25';
    if (found === '#') return '%23';
    return `%u${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

/**
 * Inverse of {@link escapeKeyPart}.
 * @throws {JobError} when `part` holds `#` or a `%` that starts no escape (not an escaped part).
 */
export function unescapeKeyPart(part: string): string {
  if (part.includes(SEPARATOR)) throw new JobError(`idempotency: key part ${JSON.stringify(part)} holds '#'`);
  const unescaped = part.replace(ESCAPED, (found, surrogate: string | undefined) =>
    surrogate === undefined
      ? found === '%25'
        ? '%'
        : '#'
      : String.fromCharCode(Number.parseInt(surrogate, 16)),
  );
  // Every `%` of an escaped part starts an escape: a left-over one means the part was not escaped.
  if (part.replace(ESCAPED, '').includes('%')) {
    throw new JobError(`idempotency: key part ${JSON.stringify(part)} holds a '%' that starts no escape`);
  }
  return unescaped;
}

/** The escaped part, or its hash when the escaped form is over `maxBytes`. */
function boundedPart(text: string, maxBytes: number): string {
  const escaped = escapeKeyPart(text);
  return utf8Bytes(escaped) <= maxBytes ? escaped : hashedPart(escaped);
}

function hashedPart(escaped: string): string {
  return `${HASHED_PREFIX}${sha256Hex(escaped)}`;
}

/**
 * The default job key of an envelope: `source` and `id`, which together identify a job
 * (CloudEvents 1.0 §3.1.1 `id`). `<source>\n<id>` when `source` holds no newline (what every
 * version so far wrote, so existing records keep their keys); otherwise the JSON array
 * `["<source>","<id>"]`, which holds no raw newline. Injective: the first form always contains
 * a newline and splits at its first one; the second never does and is JSON.
 * @example defaultJobKey('/checkout', 'ord-42') === '/checkout\nord-42'
 */
export function defaultJobKey(source: string, id: string): string {
  return source.includes('\n') ? JSON.stringify([source, id]) : `${source}\n${id}`;
}

/** `source` and `id` of a key made by {@link defaultJobKey}; undefined for a key it cannot have made. */
export function decodeDefaultJobKey(key: string): { source: string; id: string } | undefined {
  const newline = key.indexOf('\n');
  if (newline >= 0) return { source: key.slice(0, newline), id: key.slice(newline + 1) };
  try {
    const parsed: unknown = JSON.parse(key);
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string' &&
      parsed[0].includes('\n')
    ) {
      return { source: parsed[0], id: parsed[1] };
    }
  } catch {
    // not JSON: not a default key
  }
  return undefined;
}

/**
 * The `pk` of a job's idempotency record: `<jobType>#<key>`, both parts escaped
 * ({@link escapeKeyPart}), scoped by job type so two job types may use the same key. A job type
 * over {@link MAX_VERBATIM_JOB_TYPE_BYTES}, or a key that makes the whole longer than
 * {@link MAX_VERBATIM_JOB_KEY_BYTES}, is replaced by `%sha256:<hex>`.
 * @example jobRecordKey('payments.capture', '/checkout\nord-42') === 'payments.capture#/checkout\nord-42'
 * @example jobRecordKey('payments.capture', '/s\nc#step#charge') === 'payments.capture#/s\nc%23step%23charge'
 * @throws {JobError} when `jobType` or `key` is empty.
 */
export function jobRecordKey(jobType: string, key: string): string {
  requireText(jobType, 'jobType');
  requireText(key, `key of ${jobType}`);
  const typePart = boundedPart(jobType, MAX_VERBATIM_JOB_TYPE_BYTES);
  const keyPart = escapeKeyPart(key);
  const verbatim = `${typePart}${SEPARATOR}${keyPart}`;
  if (utf8Bytes(verbatim) <= MAX_VERBATIM_JOB_KEY_BYTES) return verbatim;
  return `${typePart}${SEPARATOR}${hashedPart(keyPart)}`;
}

/**
 * The `pk` of a step record of `once`: `<jobRecordKey>#step#<stepName>`, the step name escaped,
 * or `%sha256:<hex>` when its escaped form is over {@link MAX_VERBATIM_STEP_NAME_BYTES}.
 * @example stepRecordKey('payments.capture#/checkout\nord-42', 'charge') === 'payments.capture#/checkout\nord-42#step#charge'
 * @throws {JobError} when `stepName` is empty or `jobPk` is not a job record key.
 */
export function stepRecordKey(jobPk: string, stepName: string): string {
  requireText(stepName, 'stepName');
  if (typeof jobPk !== 'string' || jobPk.split(SEPARATOR).length !== 2) {
    throw new JobError(`idempotency: ${JSON.stringify(jobPk)} is not a job record key (jobRecordKey)`);
  }
  return `${jobPk}${SEPARATOR}${STEP_MARKER}${SEPARATOR}${boundedPart(stepName, MAX_VERBATIM_STEP_NAME_BYTES)}`;
}

/**
 * The `pk` of the group record of a FIFO message group of a queue (a parked group,
 * `onDeadLetter: 'park'`): `%group#<queueName>#<messageGroupId>`, both parts escaped
 * ({@link escapeKeyPart}), each hashed when over {@link MAX_VERBATIM_QUEUE_NAME_BYTES} /
 * {@link MAX_VERBATIM_GROUP_ID_BYTES}. Scoped by the queue, so one table can serve several FIFO
 * queues that use the same group ids (user ids). Never equal to a job or step record key.
 * @example groupRecordKey('booking', 'user-7') === '%group#booking#user-7'
 * @throws {JobError} when `queueName` or `messageGroupId` is empty.
 */
export function groupRecordKey(queueName: string, messageGroupId: string): string {
  requireText(queueName, 'queueName');
  requireText(messageGroupId, 'messageGroupId');
  return [
    GROUP_MARKER,
    boundedPart(queueName, MAX_VERBATIM_QUEUE_NAME_BYTES),
    boundedPart(messageGroupId, MAX_VERBATIM_GROUP_ID_BYTES),
  ].join(SEPARATOR);
}

/** First part of a limit record key (concurrency slots, rate buckets): never an escaped or hashed part. */
const LIMIT_MARKER = '%limit';
/** Longest escaped limit name or limit key kept verbatim in a limit record key; longer ones are hashed. */
export const MAX_VERBATIM_LIMIT_PART_BYTES = 512;

/**
 * The `pk` of a limit record (lib/runtime/limits/): `%limit#<kind>#<name>#<key>`, name and key
 * escaped ({@link escapeKeyPart}), each hashed when over {@link MAX_VERBATIM_LIMIT_PART_BYTES}.
 * Never equal to a job, step or group record key (its first part is `%limit`).
 * @example limitRecordKey('concurrency', 'report.build', 'tenant-7') === '%limit#concurrency#report.build#tenant-7'
 * @throws {JobError} when `name` or `key` is empty.
 */
export function limitRecordKey(kind: 'concurrency' | 'rate', name: string, key: string): string {
  requireText(name, 'limit name');
  requireText(key, `key of limit ${name}`);
  return [
    LIMIT_MARKER,
    kind,
    boundedPart(name, MAX_VERBATIM_LIMIT_PART_BYTES),
    boundedPart(key, MAX_VERBATIM_LIMIT_PART_BYTES),
  ].join(SEPARATOR);
}

/** A decoded part of a record key: its text, or only the SHA-256 hex of its escaped text when it was hashed. */
export type RecordKeyPart = { readonly text: string } | { readonly sha256: string };

/** What a record key says: the kind of record and its parts. */
export type DecodedRecordKey =
  | { readonly kind: 'job'; readonly jobType: RecordKeyPart; readonly key: RecordKeyPart }
  | {
      readonly kind: 'step';
      readonly jobType: RecordKeyPart;
      readonly key: RecordKeyPart;
      readonly stepName: RecordKeyPart;
    };

function decodePart(part: string): RecordKeyPart {
  if (HASHED_PART.test(part)) return { sha256: part.slice(HASHED_PREFIX.length) };
  return { text: unescapeKeyPart(part) };
}

/**
 * Reads a `pk` built by {@link jobRecordKey} or {@link stepRecordKey} (for operators and tests);
 * a group record key is read by {@link decodeGroupRecordKey}.
 * @throws {JobError} when `pk` is neither.
 */
export function decodeRecordKey(pk: string): DecodedRecordKey {
  const parts = pk.split(SEPARATOR);
  if (parts.length === 2 && parts[0] !== '' && parts[1] !== '') {
    return { kind: 'job', jobType: decodePart(parts[0] as string), key: decodePart(parts[1] as string) };
  }
  if (parts.length === 4 && parts[2] === STEP_MARKER && parts.every((p) => p !== '')) {
    return {
      kind: 'step',
      jobType: decodePart(parts[0] as string),
      key: decodePart(parts[1] as string),
      stepName: decodePart(parts[3] as string),
    };
  }
  throw new JobError(`idempotency: ${JSON.stringify(pk)} is not a job or step record key`);
}

/**
 * Reads a `pk` built by {@link groupRecordKey} (for operators and tests).
 * @throws {JobError} when `pk` is not a group record key.
 */
export function decodeGroupRecordKey(pk: string): {
  readonly queueName: RecordKeyPart;
  readonly messageGroupId: RecordKeyPart;
} {
  const parts = pk.split(SEPARATOR);
  if (parts.length === 3 && parts[0] === GROUP_MARKER && parts[1] !== '' && parts[2] !== '') {
    return { queueName: decodePart(parts[1] as string), messageGroupId: decodePart(parts[2] as string) };
  }
  throw new JobError(`idempotency: ${JSON.stringify(pk)} is not a group record key`);
}

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Stable key for an external API's `Idempotency-Key` header: SHA-256 hex (64 chars) of a
 * canonical encoding of job type, key and step. The same job key and step always give the same
 * value, across retries, redrives and workers, with or without the store (the worker derives
 * the same value when idempotency is off); distinct (job type, key, step) never share one.
 *
 * Encoding hashed (UTF-8): `<jobType>\n<key>\n<stepName>` when job type and step name hold no
 * newline and no part holds a lone surrogate (the form every version so far used, so keys
 * already sent to external APIs stay the same); otherwise the JSON array
 * `["<jobType>","<key>","<stepName>"]`, which holds no raw newline and no lone surrogate.
 * Injective: the first form splits at its first and last newline; the second has none.
 * @throws {JobError} when `stepName` is empty.
 */
export function deriveIdempotencyKey(jobType: string, key: string, stepName: string): string {
  requireText(stepName, 'stepName');
  const plain =
    !jobType.includes('\n') &&
    !stepName.includes('\n') &&
    !LONE_SURROGATE.test(jobType) &&
    !LONE_SURROGATE.test(key) &&
    !LONE_SURROGATE.test(stepName);
  return sha256Hex(plain ? `${jobType}\n${key}\n${stepName}` : JSON.stringify([jobType, key, stepName]));
}
