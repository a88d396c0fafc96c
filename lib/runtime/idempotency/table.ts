/**
 * The store's calls to its DynamoDB table: conditional PutItem and UpdateItem, and strongly
 * consistent GetItem; through {@link RecordTable.conditional}, the DeleteItem of a parked group
 * (group-store.ts); transactions.ts has those of batches. SDK exceptions are translated here
 * (sdk-errors.ts) and there; nothing above sees one.
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
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Expr } from './expr.ts';
import { S } from './record.ts';
import { isConditionFailure, translateSdkError } from './sdk-errors.ts';

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
  /**
   * The table's client, for the calls only features make (transactions.ts: TransactWriteItems and
   * BatchGetItem), kept out of this class so that a worker without those features does not carry them.
   */
  readonly client: DynamoDBClient;

  constructor(client: DynamoDBClient, tableName: string) {
    this.client = client;
    this.tableName = tableName;
  }

  async put(
    operation: string,
    pk: string,
    item: Record<string, AttributeValue>,
    expr: Expr,
    condition: string,
  ): Promise<WriteResult> {
    return this.conditional(operation, pk, () =>
      this.client.send(
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
    return this.conditional(operation, pk, () =>
      this.client.send(
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

  /** Strongly consistent GetItem: sees every write acknowledged before it (API_GetItem.html). */
  async get(operation: string, pk: string): Promise<Record<string, AttributeValue> | undefined> {
    try {
      const out = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: { pk: S(pk) }, ConsistentRead: true }),
      );
      return out.Item;
    } catch (err) {
      throw translateSdkError(`${operation} (GetItem)`, pk, this.tableName, err);
    }
  }

  /**
   * Runs a conditional write; a failed condition is a result, any other failure is translated.
   * Public for the writes only features make (group-store.ts: the DeleteItem of a park).
   */
  async conditional(operation: string, pk: string, write: () => Promise<unknown>): Promise<WriteResult> {
    try {
      await write();
      return { ok: true };
    } catch (err) {
      if (isConditionFailure(err)) return { ok: false, old: err.Item };
      throw translateSdkError(operation, pk, this.tableName, err);
    }
  }
}
