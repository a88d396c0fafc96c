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
 * Stable key for an external API's `Idempotency-Key` header: SHA-256 hex (64 chars) of
 * `<jobType>\n<key>\n<stepName>`. The same job key and step always give the same value, across
 * retries, redrives and workers, with or without the store (the worker derives the same value
 * when idempotency is off); different job types or steps never share one.
 * @throws {JobError} when `stepName` is empty.
 */
export function deriveIdempotencyKey(jobType: string, key: string, stepName: string): string {
  if (typeof stepName !== 'string' || stepName.length === 0) {
    throw new JobError('idempotency: stepName must be a non-empty string');
  }
  return sha256Hex(`${jobType}\n${key}\n${stepName}`);
}
