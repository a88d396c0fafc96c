/**
 * The limit records' DynamoDB calls: conditional PutItem and UpdateItem, strongly consistent
 * GetItem, on the idempotency table (its `pk`, TTL on `expiresAt`). SDK exceptions are
 * translated here; nothing above this module sees one.
 *
 * DynamoDB rules relied on: a condition is evaluated atomically against the item at write time,
 * and a false one changes nothing (`ConditionalCheckFailedException`,
 * WorkingWithItems.html#WorkingWithItems.ConditionalUpdate); `ConsistentRead: true` sees every
 * acknowledged write (API_GetItem.html); `size()` of a Map is its number of entries
 * (Expressions.OperatorsAndFunctions.html#Expressions.OperatorsAndFunctions.Functions).
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { isConditionFailure } from '../idempotency/sdk-errors.ts';
import { LimitStoreError } from './errors.ts';

/** The parts of one conditional expression: text, names, values. */
export interface LimitExpression {
  readonly update?: string;
  readonly condition: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, AttributeValue>;
}

/** Calls on the limit records of one table. `operation` names the caller in errors. */
export class LimitTable {
  readonly tableName: string;
  readonly #client: DynamoDBClient;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#client = client;
    this.tableName = tableName;
  }

  /** Conditional PutItem; false when the condition failed. */
  put(
    operation: string,
    item: Record<string, AttributeValue>,
    expression: LimitExpression,
  ): Promise<boolean> {
    return this.#conditional(operation, item.pk?.S ?? '', () =>
      this.#client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: expression.condition,
          ...params(expression),
        }),
      ),
    );
  }

  /** Conditional UpdateItem; false when the condition failed. */
  update(operation: string, pk: string, expression: LimitExpression): Promise<boolean> {
    return this.#conditional(operation, pk, () =>
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: pk } },
          UpdateExpression: expression.update,
          ConditionExpression: expression.condition,
          ...params(expression),
        }),
      ),
    );
  }

  /** Strongly consistent GetItem. */
  async get(operation: string, pk: string): Promise<Record<string, AttributeValue> | undefined> {
    try {
      const out = await this.#client.send(
        new GetItemCommand({ TableName: this.tableName, Key: { pk: { S: pk } }, ConsistentRead: true }),
      );
      return out.Item;
    } catch (error) {
      throw translate(`${operation} (GetItem)`, pk, this.tableName, error);
    }
  }

  async #conditional(operation: string, pk: string, write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw translate(operation, pk, this.tableName, error);
    }
  }
}

function params(expression: LimitExpression): {
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
} {
  return {
    ...(expression.names && Object.keys(expression.names).length > 0
      ? { ExpressionAttributeNames: expression.names }
      : {}),
    ...(expression.values && Object.keys(expression.values).length > 0
      ? { ExpressionAttributeValues: expression.values }
      : {}),
  };
}

function translate(operation: string, pk: string, tableName: string, error: unknown): LimitStoreError {
  const name = (error as { name?: unknown } | null)?.name;
  const message = error instanceof Error ? error.message : String(error);
  return new LimitStoreError(
    `limit ${operation} of ${pk} on table ${tableName} failed: ${typeof name === 'string' ? name : 'Error'}: ${message}`,
    { cause: error, context: { operation, pk, tableName } },
  );
}

/** A Number attribute holding any finite number (token counts and rates are fractional). */
export const num = (value: number): AttributeValue => ({ N: String(value) });

/** A Number attribute of an item, or undefined. */
export function readNum(item: Record<string, AttributeValue> | undefined, name: string): number | undefined {
  const raw = item?.[name]?.N;
  if (raw === undefined) return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}
