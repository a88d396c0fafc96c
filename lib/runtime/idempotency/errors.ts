/**
 * Errors of the idempotency store. SDK exceptions never leave the store bare: they are wrapped
 * in {@link IdempotencyStoreError} with the SDK error as `cause` and the operation, key and
 * table as `context`. A failed condition is not an error: the store handles it.
 */
import { PermanentError, TransientError } from '../../core/errors.ts';

/**
 * A DynamoDB call of the store failed (throttling, network, 5xx, but also a missing table or
 * missing permissions). Always transient: the store's trouble is not the job's fault, so the
 * record is retried (the worker spends no attempt on it) and never dead-lettered on its
 * account; a lasting outage shows in the queue's age-of-oldest-message alarm, and the queue's
 * `maxReceiveCount` is the safety net. `cause` is the SDK error (its `name`, `$metadata`).
 */
export class IdempotencyStoreError extends TransientError {}

/**
 * The same idempotency key was used with a different payload (a different `payloadHash`): two
 * different jobs collided on one key, or a producer reused an id. Permanent: never retried.
 * `context` has `jobType`, `key`, `pk`, `storedPayloadHash`, `payloadHash`.
 */
export class PayloadMismatchError extends PermanentError {}

/**
 * A `once` step completed on an earlier run but its value was not stored, so it cannot be returned
 * to this retry, and the step is not run again (its side effect happened): the value was over the
 * size cap (keep step values small: ids, or store them elsewhere and return the reference), or it
 * was not a JSON value that reads back the same (a `Date`, a `Map`, `NaN`...; the first run logged
 * that at WARN). Permanent: the job is dead-lettered with this evidence. `context` has `pk`,
 * `stepName`, `valueBytes`, `maxResultBytes`, `reason` (`over-size-cap` or `not-json`) and `detail`
 * (for `not-json`: what was found where, e.g. `step 'charge' returned a Map at value.items: ...`).
 */
export class StepValueNotStoredError extends PermanentError {}

/**
 * A record under a key is not what the key says: a step record where a job record is expected
 * or the reverse (a key built before keys were injective, or another writer on the table), or
 * a record with a required attribute missing, mistyped or unreadable (e.g. stored JSON that
 * does not parse). Permanent: every retry would read the same record, so the job goes to the
 * DLQ with this evidence instead of being retried until `maxReceiveCount`. An operator checks
 * the record (`context.pk`), deletes it if it is a leftover, then redrives.
 * `context` has `pk`, `expected` (`job` or `step`), `found` (the `recordType` read) and, for a
 * malformed record, `attribute`.
 */
export class IdempotencyRecordError extends PermanentError {}
