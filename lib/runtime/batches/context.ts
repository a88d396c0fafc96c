/**
 * `ctx.batch`: what a batch's completion job reads of its batch: the counts (read once before it
 * runs) and each child's outcome (read while iterating, BatchGetItem of 100 children a request).
 */
import { type BatchChildStatus, type BatchRecord, batchChildId, batchKey } from '../../core/batch.ts';
import { PermanentError } from '../../core/errors.ts';
import type { BatchLedger } from './ledger.ts';

/** One child's outcome, as the completion job sees it. */
export interface BatchChildOutcome {
  /** Position of the child in the batch's `children` (0-based). */
  readonly index: number;
  /** The child's envelope id. */
  readonly childId: string;
  /** The child's job type; undefined when not counted. */
  readonly jobType: string | undefined;
  /**
   * `succeeded`, `dead-lettered` (counted as failed), `waiting-for-redrive` (dead-lettered, not
   * counted), or `not-counted` (no outcome: only when the batch was completed some other way).
   */
  readonly status: BatchChildStatus | 'not-counted';
  /** The child's result (JSON), when it was at most 4,096 bytes; undefined otherwise. */
  readonly result: unknown;
  /** Whether `result` holds the child's result (false: over the size cap, or not JSON: see `reason`). */
  readonly resultStored: boolean;
  /** Dead-lettered: the dead letter's reason (`ErrorReason`); succeeded without a stored result: why. */
  readonly reason: string | undefined;
  /** Dead-lettered: its error, `Name: message`. */
  readonly error: string | undefined;
}

/** `ctx.batch` of a completion job (undefined for every other job). */
export interface BatchContext {
  /** The batch id. */
  readonly id: string;
  /** Children in the batch. */
  readonly total: number;
  /** Children that completed. */
  readonly succeeded: number;
  /** Children dead-lettered and counted (`complete-with-failures`). */
  readonly deadLettered: number;
  /**
   * Every child's outcome in order, read 100 at a time (one BatchGetItem each, strongly consistent).
   * @throws {IdempotencyStoreError} (transient: the completion job is retried) when DynamoDB fails.
   */
  children(): AsyncIterable<BatchChildOutcome>;
}

/** The {@link BatchContext} of a batch read before its completion job runs. */
export function batchContextOf(batch: BatchRecord, ledger: BatchLedger): BatchContext {
  return {
    id: batch.batchId,
    total: batch.total,
    succeeded: batch.succeeded,
    deadLettered: batch.deadLettered,
    async *children() {
      for (let start = 0; start < batch.total; start += 100) {
        const ids: string[] = [];
        for (let index = start; index < Math.min(batch.total, start + 100); index++) {
          ids.push(batchChildId(batch.batchId, index));
        }
        const found = await ledger.readChildren(batch.batchId, ids);
        for (const [offset, childId] of ids.entries()) {
          const record = found.get(childId);
          const result =
            record?.resultJson === undefined ? undefined : (JSON.parse(record.resultJson) as unknown);
          yield {
            index: start + offset,
            childId,
            jobType: record?.jobType,
            status: record?.status ?? 'not-counted',
            result,
            resultStored: record?.resultJson !== undefined,
            reason: record?.reason,
            error: record?.error,
          };
        }
      }
    },
  };
}

/**
 * A completion job (envelope `completesbatch`) whose batch item is not in the table: the batch id
 * is wrong (a hand-made envelope), or the batch expired (its TTL, 14 days after its open limit)
 * before the completion job was redriven. Permanent: every run would find no batch, so it is
 * dead-lettered on its first delivery with this evidence. `context` has `batchId` and `batchKey`.
 */
export class BatchNotFoundError extends PermanentError {
  constructor(batchId: string, tableName: string) {
    super(
      `this is the completion job of batch ${JSON.stringify(batchId)}, but table ${tableName} has no item ${batchKey(batchId)}: the batch id is wrong or the batch expired (TTL), so ctx.batch cannot be read. It was not run; check the envelope's completesbatch, or delete the message`,
      { context: { batchId, batchKey: batchKey(batchId) } },
    );
  }
}
