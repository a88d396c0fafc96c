/**
 * The batches kept in the idempotency table (item formats: lib/core/batch.ts): reads of a batch
 * and of its children's outcomes, and the items of the writes that count a child or complete a
 * batch. The counting items go into one transaction with the child's lease end (the lease adds its
 * own fenced write: idempotency/store.ts), or alone when the child has no lease (a child
 * dead-lettered before its lease was taken, or counted again after a crash).
 *
 * Why a child is counted at most once: the outcome item is written only if absent
 * (`attribute_not_exists(pk)`), in the same transaction as the counter's `ADD`; so a duplicate
 * delivery, a retry after a lost response or a second run cancels instead of counting again.
 * Why at least once: the counting is written with the lease end, and a record whose transaction
 * failed is not acknowledged; its redelivery finds the job completed or dead-lettered and writes
 * the count alone (the same transaction without the lease: idempotent by the same condition).
 */
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import {
  type BatchChildRecord,
  type BatchChildStatus,
  type BatchRecord,
  batchChildKey,
  batchChildRecordToItem,
  batchKey,
  parseBatchChildRecord,
  parseBatchRecord,
} from '../../core/batch.ts';
import { Expr } from '../idempotency/expr.ts';
import type { RecordTable } from '../idempotency/table.ts';
import { batchGet, transact } from '../idempotency/transactions.ts';

/** A child's outcome, as it is counted. */
export interface ChildCount {
  readonly batchId: string;
  readonly childId: string;
  readonly jobType: string;
  readonly status: BatchChildStatus;
  readonly resultJson?: string;
  readonly reason?: string;
  readonly error?: string;
}

/** The batch counter each status adds to. */
const COUNTER: Readonly<Record<BatchChildStatus, 'succeeded' | 'deadLettered' | 'waiting'>> = {
  succeeded: 'succeeded',
  'dead-lettered': 'deadLettered',
  'waiting-for-redrive': 'waiting',
};

/** Reads and write items of batches on one table. */
export class BatchLedger {
  readonly #table: RecordTable;
  readonly #now: () => number;

  constructor(table: RecordTable, now: () => number) {
    this.#table = table;
    this.#now = now;
  }

  /** The table's name. */
  get tableName(): string {
    return this.#table.tableName;
  }

  /** A batch's item (strongly consistent GetItem), or undefined when there is none. */
  async read(batchId: string): Promise<BatchRecord | undefined> {
    const item = await this.#table.get('read-batch', batchKey(batchId));
    return item === undefined ? undefined : parseBatchRecord(item);
  }

  /** A child's outcome item (strongly consistent GetItem), or undefined when not counted. */
  async readChild(batchId: string, childId: string): Promise<BatchChildRecord | undefined> {
    const item = await this.#table.get('read-batch-child', batchChildKey(batchId, childId));
    return item === undefined ? undefined : parseBatchChildRecord(item);
  }

  /** The outcome items of these children (BatchGetItem, 100 keys a request), by child id. */
  async readChildren(batchId: string, childIds: readonly string[]): Promise<Map<string, BatchChildRecord>> {
    const items = await batchGet(
      this.#table,
      'read-batch-children',
      childIds.map((id) => batchChildKey(batchId, id)),
    );
    const out = new Map<string, BatchChildRecord>();
    for (const item of items) {
      const record = parseBatchChildRecord(item);
      out.set(record.childId, record);
    }
    return out;
  }

  /**
   * The items that count a child: its outcome item (written only if absent, or, for a child that
   * was waiting for its redrive, only if still waiting) and the batch counters (only if the batch
   * exists). Two items, each 2 write units in a transaction.
   * @param previous `waiting-for-redrive` when the child's earlier dead letter is waiting (its
   *   count moves from `waiting` to this status).
   */
  countItems(count: ChildCount, expiresAt: number, previous?: 'waiting-for-redrive'): TransactWriteItem[] {
    const outcomeExpr = new Expr();
    const outcomeCondition =
      previous === undefined ? 'attribute_not_exists(pk)' : `childStatus = ${outcomeExpr.v({ S: previous })}`;
    const outcome: TransactWriteItem = {
      Put: {
        TableName: this.#table.tableName,
        Item: batchChildRecordToItem({
          pk: batchChildKey(count.batchId, count.childId),
          recordType: 'batch-child',
          batchId: count.batchId,
          childId: count.childId,
          jobType: count.jobType,
          status: count.status,
          ...(count.resultJson === undefined ? {} : { resultJson: count.resultJson }),
          ...(count.reason === undefined ? {} : { reason: count.reason }),
          ...(count.error === undefined ? {} : { error: count.error }),
          atMs: this.#now(),
          expiresAt,
        }),
        ConditionExpression: outcomeCondition,
        ...outcomeExpr.params(),
      },
    };
    const batchExpr = new Expr();
    const adds = [`${COUNTER[count.status]} ${batchExpr.v({ N: '1' })}`];
    if (previous !== undefined) adds.push(`${COUNTER[previous]} ${batchExpr.v({ N: '-1' })}`);
    const batch: TransactWriteItem = {
      Update: {
        TableName: this.#table.tableName,
        Key: { pk: { S: batchKey(count.batchId) } },
        UpdateExpression: `ADD ${adds.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ...batchExpr.params(),
      },
    };
    return [outcome, batch];
  }

  /** The item that marks a batch completed (its completion job completed): written with that job's lease. */
  completedItem(batchId: string): TransactWriteItem {
    const expr = new Expr();
    return {
      Update: {
        TableName: this.#table.tableName,
        Key: { pk: { S: batchKey(batchId) } },
        UpdateExpression: `SET #s = ${expr.v({ S: 'completed' })}, completedAtMs = if_not_exists(completedAtMs, ${expr.v({ N: String(this.#now()) })})`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: expr.values,
      },
    };
  }

  /**
   * Writes `items` alone in one transaction (no lease part), `token` its ClientRequestToken.
   * @returns `ok`, or the cancellation codes (one per item) when one failed its condition.
   */
  async transact(
    pk: string,
    items: TransactWriteItem[],
    token: string,
  ): Promise<'ok' | { readonly cancelled: readonly string[] }> {
    const written = await transact(this.#table, 'count-batch-child', pk, items, token);
    return written.ok ? 'ok' : { cancelled: written.reasons };
  }
}
