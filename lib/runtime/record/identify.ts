/**
 * The identity stage: a job's idempotency key and the hash of its data, from its message alone.
 * What fails here fails on every delivery, so it is a permanent {@link JobIdentityError}, decided
 * before any store is asked.
 */

import { payloadHash } from '../../core/canonical-json.ts';
import type { JobEnvelope } from '../../core/envelope.ts';
import { keyResultProblem } from '../../core/key-function.ts';
import { defaultJobKey } from '../idempotency/keys.ts';
import { JobIdentityError } from '../worker-errors.ts';
import type { AnyJob } from './deps.ts';

/** A job's key, and the hash of its data when the idempotency guard will be asked. */
export interface RecordIdentity {
  readonly key: string;
  readonly payloadHash: string | undefined;
}

/**
 * The job's identity from its message: its idempotency key (the job's `idempotency.key(data)`,
 * default `source` + `id`), and the hash of its data when the idempotency guard will be asked
 * (`hashed`; the hash is made nowhere else): of the envelope's `data` as sent, or for a raw message
 * (`rawMessage`, `defineJob({ raw })`) of `data` as the job's schema returned it, so that fields
 * the schema drops (a producer's `sentAt`, a trace id) may differ between a producer's retries
 * without being taken for a different job. Pure functions of the message: whatever they throw
 * becomes a {@link JobIdentityError} (permanent), so it can never pass for a store outage.
 * @throws {JobIdentityError} when the key function throws or returns no non-empty string, or the data cannot be hashed.
 */
export function identify(
  job: AnyJob,
  envelope: JobEnvelope,
  data: unknown,
  hashed: boolean,
  rawMessage = false,
): RecordIdentity {
  let key: unknown;
  try {
    key = job.idempotency?.key ? job.idempotency.key(data) : defaultJobKey(envelope.source, envelope.id);
  } catch (error) {
    throw new JobIdentityError(
      job.type,
      'key',
      `idempotency.key(data) threw ${describeThrown(error)}`,
      error,
    );
  }
  if (typeof key !== 'string' || key === '') {
    throw new JobIdentityError(job.type, 'key', keyResultProblem(key, 'idempotency.key'));
  }
  if (!hashed) return { key, payloadHash: undefined };
  try {
    return { key, payloadHash: payloadHash(rawMessage ? data : envelope.data) };
  } catch (error) {
    throw new JobIdentityError(
      job.type,
      'payload-hash',
      `hashing the data threw ${describeThrown(error)}`,
      error,
    );
  }
}

/** `Name: message` of a thrown value, for an error message; never throws. */
function describeThrown(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : `a non-error (${typeof error})`;
  } catch {
    return 'an error that cannot be described';
  }
}
