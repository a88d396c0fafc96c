/**
 * The counting of batch children on a second, independent DynamoDB: moto's server, which
 * implements TransactWriteItems itself (the embedded dynalite answers it through our emulation,
 * lib/local/dynamodb-transactions.ts). The store's transaction (lease completion + outcome +
 * counter) is all or nothing, a lost response counts once, a second count is cancelled with the
 * failed condition named where ledger.ts and the store read it, and the children's outcomes come
 * back through BatchGetItem.
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchChildKey, batchKey, batchRecordToItem } from '../../lib/core/batch.ts';
import type { ChildCount } from '../../lib/runtime/batches/ledger.ts';
import type { Lease } from '../../lib/runtime/idempotency/guard.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { lossyDynamo } from '../factories/lossy-dynamo.ts';
import { type MotoServer, startMotoServer } from '../factories/moto-server.ts';
import { createClient, createTable } from '../support/dynalite.ts';

let moto: MotoServer;
let tableName: string;

beforeAll(async () => {
  moto = await startMotoServer();
  tableName = await createTable(createClient(moto.endpoint));
}, 60_000);
afterAll(() => moto?.stop());

async function item(pk: string) {
  return (
    await createClient(moto.endpoint).send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk } }, ConsistentRead: true }),
    )
  ).Item;
}

async function batch(batchId: string, total: number): Promise<void> {
  await createClient(moto.endpoint).send(
    new PutItemCommand({
      TableName: tableName,
      Item: batchRecordToItem({
        pk: batchKey(batchId),
        recordType: 'batch',
        batchId,
        total,
        succeeded: 0,
        deadLettered: 0,
        waiting: 0,
        policy: 'complete-with-failures',
        completionEnvelope: '{}',
        completionQueue: 'work',
        createdAtMs: Date.now(),
        openLimitSeconds: 60,
        state: 'open',
        expiresAt: Math.floor(Date.now() / 1000) + 3600,
      }),
    }),
  );
}

async function lease(store: DynamoIdempotencyStore, key: string): Promise<Lease> {
  const begun = await store.begin({
    jobType: 'work.child',
    key,
    payloadHash: 'h',
    leaseExpiresAtMs: Date.now() + 60_000,
    onLeaseExpired: 'rerun',
    messageId: `m-${key}`,
  });
  if (begun.status !== 'acquired') throw new Error(`not acquired: ${begun.status}`);
  return begun.lease;
}

const count = (batchId: string, childId: string): ChildCount => ({
  batchId,
  childId,
  jobType: 'work.child',
  status: 'succeeded',
  resultJson: JSON.stringify({ childId }),
});

describe('batch counting on moto', () => {
  it('writes lease, outcome and counter together, once under a lost response', async () => {
    const lossy = lossyDynamo(moto.endpoint);
    const store = new DynamoIdempotencyStore({ tableName, client: lossy.client });
    const ledger = store.batchLedger();
    await batch('b1', 2);
    lossy.dropNextResponse((operation) => operation === 'TransactWriteItems');
    const held = await lease(store, 'c1');
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const written = await held.completeTogether?.(
      { n: 1 },
      undefined,
      ledger.countItems(count('b1', 'c1'), expiresAt),
    );
    expect(written).toBe('ok');
    expect(lossy.dropped).toEqual(['TransactWriteItems']);
    expect((await item(batchKey('b1')))?.succeeded).toEqual({ N: '1' });
    expect((await item(batchChildKey('b1', 'c1')))?.childStatus).toEqual({ S: 'succeeded' });
    expect((await store.readRecord('work.child', 'c1'))?.status).toBe('COMPLETED');
  });

  it('cancels a second count of the same child, naming the outcome condition, and writes nothing', async () => {
    const store = new DynamoIdempotencyStore({ tableName, client: createClient(moto.endpoint) });
    const ledger = store.batchLedger();
    await batch('b2', 2);
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const first = await lease(store, 'd1');
    expect(
      await first.completeTogether?.(1, undefined, ledger.countItems(count('b2', 'd1'), expiresAt)),
    ).toBe('ok');
    // Another job counted as the same child (a re-run after a takeover would be): cancelled.
    const second = await lease(store, 'd2');
    const written = await second.completeTogether?.(
      2,
      undefined,
      ledger.countItems(count('b2', 'd1'), expiresAt),
    );
    expect(written).toEqual({ cancelled: ['ConditionalCheckFailed', 'None'] });
    expect((await item(batchKey('b2')))?.succeeded).toEqual({ N: '1' });
    expect((await store.readRecord('work.child', 'd2'))?.status).toBe('IN_PROGRESS');

    const outcomes = await ledger.readChildren('b2', ['d1', 'd9']);
    expect([...outcomes.keys()]).toEqual(['d1']);
    expect(outcomes.get('d1')?.resultJson).toBe('{"childId":"d1"}');
  });
});
