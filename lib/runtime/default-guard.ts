/**
 * THE single place where a worker gets its default idempotency guard: the DynamoDB store on the
 * table named by `JOBS_IDEMPOTENCY_TABLE` (docs/contracts.md). `createWorker` calls it when its
 * `idempotency` option is neither a guard nor `false`.
 *
 * The DynamoDB store (lib/runtime/idempotency/store.ts) is being written in parallel; until it is
 * wired in here, asking for the default is a configuration error, and the worker reports every
 * record of every event failed (nothing is run unguarded, nothing is deleted by accident).
 */
import type { IdempotencyGuard } from './idempotency/guard.ts';
import { WorkerConfigError } from './worker-errors.ts';

/**
 * Creates the default idempotency guard for a worker.
 *
 * @param tableName value of `JOBS_IDEMPOTENCY_TABLE`; undefined when unset.
 * @throws {WorkerConfigError} when the table is not set (the worker refuses to run unguarded
 *   unless idempotency is switched off explicitly with `idempotency: false`), or while the
 *   DynamoDB store is not wired in.
 */
export function createDefaultIdempotencyGuard(tableName: string | undefined): IdempotencyGuard {
  if (tableName === undefined) {
    throw new WorkerConfigError([
      'JOBS_IDEMPOTENCY_TABLE is not set: set it (the JobQueue construct does), pass an ' +
        '`idempotency` guard, or switch idempotency off with `idempotency: false`',
    ]);
  }
  // Wire the DynamoDB store from lib/runtime/idempotency/store.ts here once it exists.
  throw new WorkerConfigError([
    `the default DynamoDB idempotency store for table ${JSON.stringify(tableName)} is not available yet ` +
      '(lib/runtime/idempotency/store.ts): pass an `idempotency` guard or `idempotency: false`',
  ]);
}
