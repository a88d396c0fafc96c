/**
 * TransactWriteItems on the embedded DynamoDB emulator (lib/local/dynamodb-transactions.ts): all
 * or nothing, the failed condition named in CancellationReasons, a ClientRequestToken repeated
 * within 10 minutes answered without applying twice, and writes kept out while one runs.
 */
import {
  GetItemCommand,
  PutItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

let db: DynaliteHandle;
let table: string;

beforeAll(async () => {
  db = await startDynalite();
  table = await db.createTable();
});
afterAll(() => db?.stop());

const S = (value: string) => ({ S: value });

async function read(pk: string) {
  return (
    await db.client.send(new GetItemCommand({ TableName: table, Key: { pk: S(pk) }, ConsistentRead: true }))
  ).Item;
}

function counting(child: string, token?: string): TransactWriteItemsCommandInput {
  return {
    ...(token === undefined ? {} : { ClientRequestToken: token }),
    TransactItems: [
      {
        Put: {
          TableName: table,
          Item: { pk: S(`batch#b#child#${child}`) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          TableName: table,
          Key: { pk: S('batch#b') },
          UpdateExpression: 'ADD done :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': { N: '1' } },
        },
      },
    ],
  };
}

describe('TransactWriteItems on dynalite', () => {
  it('applies every action, or none with the failed one named', async () => {
    await db.client.send(
      new PutItemCommand({ TableName: table, Item: { pk: S('batch#b'), done: { N: '0' } } }),
    );
    await db.client.send(new TransactWriteItemsCommand(counting('1')));
    expect((await read('batch#b'))?.done).toEqual({ N: '1' });
    expect(await read('batch#b#child#1')).toBeDefined();

    const error = await db.client.send(new TransactWriteItemsCommand(counting('1'))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect((error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      'ConditionalCheckFailed',
      'None',
    ]);
    expect((await read('batch#b'))?.done).toEqual({ N: '1' });

    // The second action fails (no batch item): the first one is put back (its item deleted).
    const missing = counting('2');
    const update = missing.TransactItems?.[1]?.Update;
    if (update) update.Key = { pk: S('batch#none') };
    await expect(db.client.send(new TransactWriteItemsCommand(missing))).rejects.toBeInstanceOf(
      TransactionCanceledException,
    );
    expect(await read('batch#b#child#2')).toBeUndefined();
  });

  it('answers a repeated ClientRequestToken without applying it again', async () => {
    await db.client.send(
      new PutItemCommand({ TableName: table, Item: { pk: S('batch#b'), done: { N: '0' } } }),
    );
    await db.client.send(new TransactWriteItemsCommand(counting('3', 'token-3')));
    await db.client.send(new TransactWriteItemsCommand(counting('3', 'token-3')));
    expect((await read('batch#b'))?.done).toEqual({ N: '1' });
    const other = await db.client
      .send(new TransactWriteItemsCommand(counting('4', 'token-3')))
      .catch((e: unknown) => e);
    expect((other as Error).name).toBe('IdempotentParameterMismatchException');
  });

  it('counts exactly once under concurrent transactions and writes', async () => {
    await db.client.send(
      new PutItemCommand({ TableName: table, Item: { pk: S('batch#b'), done: { N: '0' } } }),
    );
    const children = Array.from({ length: 40 }, (_, i) => `c${i % 20}`);
    const results = await Promise.allSettled([
      ...children.map((child) => db.client.send(new TransactWriteItemsCommand(counting(child)))),
      ...children.map(() =>
        db.client.send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: S('batch#b') },
            UpdateExpression: 'ADD touched :one',
            ExpressionAttributeValues: { ':one': { N: '1' } },
          }),
        ),
      ),
    ]);
    const rejected = results.flatMap((r) =>
      r.status === 'rejected' ? [String((r.reason as Error).name)] : [],
    );
    expect(rejected.filter((name) => name !== 'TransactionCanceledException')).toEqual([]);
    expect(rejected).toHaveLength(20);
    const item = await read('batch#b');
    expect(item?.done).toEqual({ N: '20' });
    expect(item?.touched).toEqual({ N: '40' });
  });
});
