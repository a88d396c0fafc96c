/**
 * Translation of AWS SDK exceptions at the store's boundary: a failed condition is a result the
 * store handles; anything else leaves as an {@link IdempotencyStoreError} naming the operation,
 * key and table, with the SDK error as `cause`.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { IdempotencyStoreError } from './errors.ts';

/**
 * Whether a write failed its condition (`ConditionalCheckFailedException`). With
 * `ReturnValuesOnConditionCheckFailure: ALL_OLD` the item that failed it is on the exception as
 * `Item` (API_PutItem.html, API_UpdateItem.html); some emulators (dynalite 4) leave it out.
 */
export function isConditionFailure(err: unknown): err is { Item?: Record<string, AttributeValue> } {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'ConditionalCheckFailedException'
  );
}

/** Wraps any other SDK failure of `operation` on `pk` (throttling, network, 5xx, missing table...). */
export function translateSdkError(
  operation: string,
  pk: string,
  tableName: string,
  err: unknown,
): IdempotencyStoreError {
  const name = (err as { name?: unknown } | null)?.name;
  const message = err instanceof Error ? err.message : String(err);
  return new IdempotencyStoreError(
    `idempotency ${operation} of ${pk} on table ${tableName} failed: ${typeof name === 'string' ? name : 'Error'}: ${message}`,
    { cause: err, context: { operation, pk, tableName } },
  );
}
