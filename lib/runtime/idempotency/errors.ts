/**
 * Errors of the idempotency store. SDK exceptions never leave the store bare: they are wrapped
 * in {@link IdempotencyStoreError} with the SDK error as `cause`, so `classifyError` decides by
 * the cause (throttling, 5xx and network errors stay transient; other client faults are
 * permanent) while logs name the operation and key.
 */
import { JobError, PermanentError } from '../errors.ts';

/** A DynamoDB call of the store failed (other than an expected failed condition). */
export class IdempotencyStoreError extends JobError {}

/**
 * The same idempotency key was used with a different payload (a different `payloadHash`): two
 * different jobs collided on one key, or a producer reused an id. Permanent: never retried.
 * `context` has `jobType`, `key`, `pk`, `storedPayloadHash`, `payloadHash`.
 */
export class PayloadMismatchError extends PermanentError {}

/**
 * A `once` step completed on an earlier run but its value was over the size cap, so it cannot be
 * returned to this retry. Permanent: keep step values small (ids), or store them elsewhere and
 * return the reference. `context` has `pk`, `stepName`, `valueBytes`, `maxResultBytes`.
 */
export class StepValueNotStoredError extends PermanentError {}
