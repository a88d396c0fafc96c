/**
 * THE single place where a worker gets its default idempotency guard: the DynamoDB store
 * (lib/runtime/idempotency/store.ts) on the table named by `JOBS_IDEMPOTENCY_TABLE`
 * (docs/contracts.md). `createWorker` calls it when its `idempotency` option is neither a guard
 * nor `false`.
 */

import type { IdempotencyGuard } from './idempotency/guard.ts';
import { DynamoLeaseStore } from './idempotency/lease-store.ts';
import { WorkerConfigError } from './worker-errors.ts';

/**
 * Creates the default idempotency guard for a worker: a DynamoDB store with its defaults and a
 * `DynamoDBClient` from the environment (region, credentials and `AWS_ENDPOINT_URL`, which the
 * local runtime points at its emulator).
 *
 * @param tableName value of `JOBS_IDEMPOTENCY_TABLE`; undefined when unset.
 * @param createStore the store: `DynamoIdempotencyStore` when a feature of the worker keeps state
 *   in the table (batches, parked groups, jobs sent for later: lib/runtime/features/), else the
 *   core `DynamoLeaseStore`.
 * @throws {WorkerConfigError} when the table is not set (the worker refuses to run unguarded
 *   unless idempotency is switched off explicitly with `idempotency: false`), or when the store
 *   refuses its options.
 */
export function createDefaultIdempotencyGuard(
  tableName: string | undefined,
  createStore: (tableName: string) => IdempotencyGuard = (name) => new DynamoLeaseStore({ tableName: name }),
): IdempotencyGuard {
  if (tableName === undefined) {
    throw new WorkerConfigError([
      'JOBS_IDEMPOTENCY_TABLE is not set: set it (the JobQueue construct does), pass an ' +
        '`idempotency` guard, or switch idempotency off with `idempotency: false`',
    ]);
  }
  try {
    return createStore(tableName);
  } catch (error) {
    throw new WorkerConfigError([`the idempotency store refused its options: ${(error as Error).message}`]);
  }
}
