/**
 * The idempotency table must be given, or switched off explicitly. The runtime and the construct
 * agree: a worker made by `createWorker` without an `idempotency` option uses the DynamoDB table
 * named by `JOBS_IDEMPOTENCY_TABLE`, and when that is unset it refuses to run unguarded: every
 * invocation logs the configuration error and reports every record failed, so nothing is ever
 * processed (lib/runtime/default-guard.ts). Refusing at synth says so before deploying.
 * `idempotencyTable: false` matches `createWorker({ idempotency: false })` or a custom guard.
 */
import { error, type JobQueueRule } from './types.ts';

export const idempotencyRule: JobQueueRule = ({ props }) => {
  const table: unknown = props.idempotencyTable;
  if (table === false) return [];
  if (table === undefined || table === null) {
    return [
      error(
        "idempotencyTable: required: pass the IdempotencyTable's table (the worker's default idempotency store needs it; without JOBS_IDEMPOTENCY_TABLE it reports every record failed), or false when the entry runs createWorker({ idempotency: false }) or its own guard",
      ),
    ];
  }
  const t = (typeof table === 'object' ? table : {}) as Partial<Record<string, unknown>>;
  if (typeof t.grant === 'function' && typeof t.tableName === 'string') return [];
  if (typeof (t.table as { grant?: unknown } | undefined)?.grant === 'function') {
    return [error('idempotencyTable: got an IdempotencyTable construct: pass its .table')];
  }
  return [error('idempotencyTable: must be a DynamoDB table (IdempotencyTable .table) or false')];
};
