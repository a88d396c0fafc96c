/**
 * The store's calls to its DynamoDB table: conditional PutItem and UpdateItem, and strongly
 * consistent GetItem. SDK exceptions are translated here (sdk-errors.ts); nothing above this
 * module sees one.
 *
 * DynamoDB rules relied on (developer guide / API reference pages):
 * - Conditional writes (WorkingWithItems.html#WorkingWithItems.ConditionalUpdate): the condition
 *   is evaluated atomically against the item as it is at write time; a false condition fails the
 *   write with `ConditionalCheckFailedException` and changes nothing.
 * - `ReturnValuesOnConditionCheckFailure: ALL_OLD` (API_PutItem.html, API_DeleteItem.html): the
 *   item that failed the condition comes back on the exception as `Item`, without a read. Asked
 *   on PutItem (a duplicate's acquisition fails on the stored record, which then answers it) and
 *   DeleteItem, not on UpdateItem (see {@link RecordTable.update}). Some emulators (dynalite 4)
 *   leave it out: the store then reads the item with a strongly consistent `GetItem`
 *   (API_GetItem.html, `ConsistentRead: true`).
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Expr } from './expr.ts';
import { S } from './record.ts';
import { isConditionFailure, translateSdkError } from './sdk-errors.ts';

/** Tries of a transaction cancelled by `TransactionConflict` (another transaction on one of its items). */
export const TRANSACTION_CONFLICT_TRIES = 6;

/** Result of a conditional write: `old` is the item that failed the condition, when known. */
export type WriteResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly old: Record<string, AttributeValue> | undefined };

/**
 * One idempotency table. `operation` names the store operation in translated errors
 * (`acquire`, `complete`, `release`, `fail`, `once`, `fence-check`, `read`, `park`, `unpark`,
 * `read-park`).
 */
export class RecordTable {
  readonly tableName: string;
  readonly #client: DynamoDBClient;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#client = client;
    this.tableName = tableName;
  }

  async put(
    operation: string,
    pk: string,
    item: Record<string, AttributeValue>,
    expr: Expr,
    condition: string,
  ): Promise<WriteResult> {
    return this.#conditional(operation, pk, () =>
      this.#client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: condition,
          ...expr.params(),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
  }

  async update(
    operation: string,
    pk: string,
    update: string,
    expr: Expr,
    condition: string,
  ): Promise<WriteResult> {
    return this.#conditional(operation, pk, () =>
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(pk) },
          UpdateExpression: update,
          ConditionExpression: condition,
          ...expr.params(),
          // No ReturnValuesOnConditionCheckFailure: a lease-ending update fails its condition
          // only after a takeover or a lost response (rare), where the caller reads the item
          // with one consistent GetItem; on the common path that parameter is bytes for nothing.
        }),
      ),
    );
  }

  /** Conditional DeleteItem (API_DeleteItem.html); a failed condition deletes nothing. */
  async delete(operation: string, pk: string, expr: Expr, condition: string): Promise<WriteResult> {
    return this.#conditional(operation, pk, () =>
      this.#client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: { pk: S(pk) },
          ConditionExpression: condition,
          ...expr.params(),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
  }

  /** Strongly consistent GetItem: sees every write acknowledged before it (API_GetItem.html). */
  async get(operation: string, pk: string): Promise<Record<string, AttributeValue> | undefined> {
    try {
      const out = await this.#client.send(
        new GetItemCommand({ TableName: this.tableName, Key: { pk: S(pk) }, ConsistentRead: true }),
      );
      return out.Item;
    } catch (err) {
      throw translateSdkError(`${operation} (GetItem)`, pk, this.tableName, err);
    }
  }

  /**
   * TransactWriteItems (API_TransactWriteItems.html): all actions or none. `token` is the
   * `ClientRequestToken` (1–36 characters): the same token within 10 minutes is answered as success
   * without applying the actions again, so a retry after a lost response changes nothing. A
   * transaction cancelled by a failed condition is a result: `reasons` has one code per action
   * (`ConditionalCheckFailed`, `None`, ...); any other failure is translated and thrown.
   *
   * A transaction cancelled only because another one was writing one of its items at that moment
   * (`TransactionConflict`: children of one batch counted at once all update its counter) wrote
   * nothing: it is sent again, up to {@link TRANSACTION_CONFLICT_TRIES} tries in all, after a short
   * random wait, with a token of its own per try (the cancelled try was not applied, so no answer
   * to it can stand for this one). Still conflicting, it is thrown (transient).
   */
  async transact(
    operation: string,
    pk: string,
    items: TransactWriteItem[],
    token: string,
    random: () => number = Math.random,
  ): Promise<{ readonly ok: true } | { readonly ok: false; readonly reasons: readonly string[] }> {
    for (let attempt = 1; ; attempt++) {
      const tokenOfTry = attempt === 1 ? token : `${token.slice(0, 33)}-${attempt}`;
      try {
        await this.#client.send(
          new TransactWriteItemsCommand({ TransactItems: items, ClientRequestToken: tokenOfTry }),
        );
        return { ok: true };
      } catch (err) {
        const cancelled = (err as { name?: unknown; CancellationReasons?: { Code?: string }[] }) ?? {};
        if (
          cancelled.name === 'TransactionCanceledException' &&
          Array.isArray(cancelled.CancellationReasons)
        ) {
          const codes = cancelled.CancellationReasons.map((reason) => reason.Code ?? 'None');
          if (codes.includes('ConditionalCheckFailed')) return { ok: false, reasons: codes };
          if (codes.includes('TransactionConflict') && attempt < TRANSACTION_CONFLICT_TRIES) {
            await new Promise((resolve) => setTimeout(resolve, Math.round(random() * 25 * 2 ** attempt)));
            continue;
          }
        }
        throw translateSdkError(`${operation} (TransactWriteItems)`, pk, this.tableName, err);
      }
    }
  }

  /**
   * Strongly consistent BatchGetItem of `pks` (API_BatchGetItem.html: at most 100 keys per request;
   * `UnprocessedKeys` asked again). Returns the items found, in no particular order.
   */
  async batchGet(operation: string, pks: readonly string[]): Promise<Record<string, AttributeValue>[]> {
    const found: Record<string, AttributeValue>[] = [];
    for (let start = 0; start < pks.length; start += 100) {
      let keys: Record<string, AttributeValue>[] = pks.slice(start, start + 100).map((pk) => ({ pk: S(pk) }));
      for (let round = 0; keys.length > 0; round++) {
        let out: BatchGetItemCommandOutput;
        try {
          out = await this.#client.send(
            new BatchGetItemCommand({
              RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
            }),
          );
        } catch (err) {
          throw translateSdkError(`${operation} (BatchGetItem)`, pks[start] ?? '', this.tableName, err);
        }
        found.push(...(out.Responses?.[this.tableName] ?? []));
        keys = out.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        // Unprocessed keys come back when throughput ran out: wait a little, more each round.
        if (keys.length > 0)
          await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** round)));
      }
    }
    return found;
  }

  /** Runs a conditional write; a failed condition is a result, any other failure is translated. */
  async #conditional(operation: string, pk: string, write: () => Promise<unknown>): Promise<WriteResult> {
    try {
      await write();
      return { ok: true };
    } catch (err) {
      if (isConditionFailure(err)) return { ok: false, old: err.Item };
      throw translateSdkError(operation, pk, this.tableName, err);
    }
  }
}
