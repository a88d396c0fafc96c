/**
 * Keys of the idempotency table and the hashes derived from them.
 *
 * Partition key values are at most 2,048 bytes (DynamoDB developer guide, "Constraints":
 * partition key length). Job keys come from producers, so long ones are replaced by their
 * SHA-256 instead of failing the write.
 */
import { createHash } from 'node:crypto';
import { JobError } from '../errors.ts';

/** Longest job record key kept verbatim, in UTF-8 bytes; longer keys are hashed. Leaves room for step suffixes. */
export const MAX_VERBATIM_JOB_KEY_BYTES = 1024;
/** Longest step name kept verbatim in a step record key, in UTF-8 bytes; longer names are hashed. */
export const MAX_VERBATIM_STEP_NAME_BYTES = 512;

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The `pk` of a job's idempotency record: `<jobType>#<key>`, scoped by job type so two job types
 * may use the same key. When that is longer than {@link MAX_VERBATIM_JOB_KEY_BYTES} it becomes
 * `<jobType>#sha256:<hex of key>` (job types are short names).
 * @throws {JobError} when `jobType` or `key` is empty.
 */
export function jobRecordKey(jobType: string, key: string): string {
  if (typeof jobType !== 'string' || jobType.length === 0) {
    throw new JobError('idempotency: jobType must be a non-empty string');
  }
  if (typeof key !== 'string' || key.length === 0) {
    throw new JobError(`idempotency: key of ${jobType} must be a non-empty string`);
  }
  const verbatim = `${jobType}#${key}`;
  if (Buffer.byteLength(verbatim, 'utf8') <= MAX_VERBATIM_JOB_KEY_BYTES) return verbatim;
  const hashed = `${jobType}#sha256:${sha256Hex(key)}`;
  if (Buffer.byteLength(hashed, 'utf8') > MAX_VERBATIM_JOB_KEY_BYTES) {
    return `sha256:${sha256Hex(verbatim)}`;
  }
  return hashed;
}

/**
 * The `pk` of a step record of `once`: `<jobRecordKey>#step#<stepName>` (contract in
 * docs/contracts.md, "Idempotency table"); a step name longer than
 * {@link MAX_VERBATIM_STEP_NAME_BYTES} is replaced by `sha256:<hex>`.
 * @throws {JobError} when `stepName` is empty.
 */
export function stepRecordKey(jobPk: string, stepName: string): string {
  if (typeof stepName !== 'string' || stepName.length === 0) {
    throw new JobError('idempotency: stepName must be a non-empty string');
  }
  const name =
    Buffer.byteLength(stepName, 'utf8') <= MAX_VERBATIM_STEP_NAME_BYTES
      ? stepName
      : `sha256:${sha256Hex(stepName)}`;
  return `${jobPk}#step#${name}`;
}

/**
 * Stable key for an external API's `Idempotency-Key` header: SHA-256 hex (64 chars) of the job
 * record key and the step name. The same job key and step always give the same value, across
 * retries, redrives and workers; different job types or steps never share one.
 */
export function deriveIdempotencyKey(jobType: string, key: string, stepName: string): string {
  return deriveFromRecordKey(jobRecordKey(jobType, key), stepName);
}

/** {@link deriveIdempotencyKey} from an already built job record key. */
export function deriveFromRecordKey(jobPk: string, stepName: string): string {
  if (typeof stepName !== 'string' || stepName.length === 0) {
    throw new JobError('idempotency: stepName must be a non-empty string');
  }
  return sha256Hex(`${jobPk}\n${stepName}`);
}

/** Rebuilds a JSON value with object keys sorted, recursively (arrays keep their order). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj).sort()) out[k] = sortKeys(obj[k]);
    return out;
  }
  return value;
}

/**
 * Canonical JSON of a value: what `JSON.stringify` writes (so `toJSON`, dropped `undefined`
 * members and the like behave as on the wire), with object keys sorted by UTF-16 code unit.
 * `undefined` at the top level becomes `null`.
 * @throws {TypeError} from `JSON.stringify` (BigInt, cycles).
 */
export function canonicalJson(value: unknown): string {
  const wire = JSON.stringify(value);
  if (wire === undefined) return 'null';
  return JSON.stringify(sortKeys(JSON.parse(wire)));
}

/**
 * The `payloadHash` of {@link BeginRequest}: SHA-256 hex of {@link canonicalJson} of the job
 * data, so `{a:1,b:2}` and `{b:2,a:1}` hash the same.
 */
export function hashPayload(data: unknown): string {
  return sha256Hex(canonicalJson(data));
}
