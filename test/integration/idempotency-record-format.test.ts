/**
 * The job record format on dynalite (docs/contracts.md, "Job record"): what a new key's two writes
 * carry, how they are read back, and records of the previous format (every attribute on every
 * write, UUID tokens) read, taken over and completed by this version; and the other way round,
 * every attribute the previous version requires is still written (a rollback reads them).
 */
import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payloadHash } from '../../lib/core/canonical-json.ts';
import type { BeginOutcome, BeginRequest, Lease } from '../../lib/runtime/idempotency/guard.ts';
import { jobRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

const JOB_TYPE = 'payments.capture';
const NOW = Date.parse('2026-11-30T08:00:00.000Z');
const NOW_S = Math.floor(NOW / 1000);
const HASH = payloadHash({ orderId: 'o-1' });

let db: DynaliteHandle;
let tableName: string;

beforeAll(async () => {
  db = await startDynalite();
  tableName = await db.createTable();
});

afterAll(async () => {
  await db?.stop();
});

/** A store whose requests are recorded (command name and input). */
function recordingStore(): { store: DynamoIdempotencyStore; sent: { name: string; input: unknown }[] } {
  const sent: { name: string; input: unknown }[] = [];
  const client = {
    send: (command: { constructor: { name: string }; input: unknown }) => {
      sent.push({ name: command.constructor.name, input: command.input });
      return db.client.send(command as never);
    },
  };
  const store = new DynamoIdempotencyStore({ tableName, client: client as never, now: () => NOW });
  return { store, sent };
}

function delivery(key: string, over: Partial<BeginRequest> = {}): BeginRequest {
  return {
    jobType: JOB_TYPE,
    key,
    payloadHash: HASH,
    leaseExpiresAtMs: NOW + 30_000,
    onLeaseExpired: 'rerun',
    messageId: randomUUID(),
    ...over,
  };
}

function acquired(outcome: BeginOutcome): Lease {
  if (outcome.status !== 'acquired') throw new Error(`expected acquired, got ${JSON.stringify(outcome)}`);
  return outcome.lease;
}

async function rawItem(key: string): Promise<Record<string, AttributeValue>> {
  const out = await db.client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: { S: jobRecordKey(JOB_TYPE, key) } },
      ConsistentRead: true,
    }),
  );
  if (!out.Item) throw new Error('no item');
  return out.Item;
}

/** A job record as the previous version wrote it: every attribute, UUID tokens. */
function previousFormatItem(
  key: string,
  over: Record<string, AttributeValue>,
): Record<string, AttributeValue> {
  const n = (v: number) => ({ N: String(v) });
  return {
    pk: { S: jobRecordKey(JOB_TYPE, key) },
    recordType: { S: 'job' },
    status: { S: 'COMPLETED' },
    leaseToken: { S: randomUUID() },
    leaseExpiresAtMs: n(NOW - 60_000),
    expiresAt: n(NOW_S + 3_600),
    payloadHash: { S: HASH },
    attempt: n(1),
    generation: { S: randomUUID() },
    redriveCount: n(0),
    jobType: { S: JOB_TYPE },
    messageId: { S: randomUUID() },
    createdAtMs: n(NOW - 90_000),
    acquiredAtMs: n(NOW - 90_000),
    updatedAtMs: n(NOW - 80_000),
    endedAtMs: n(NOW - 80_000),
    completedAtMs: n(NOW - 80_000),
    resultStored: { BOOL: true },
    resultBytes: n(18),
    result: { S: '{"receipt":"r-1"}' },
    ...over,
  };
}

describe('job record format', () => {
  it('writes only what cannot be derived: a new key is one PutItem and one UpdateItem with these attributes', async () => {
    const key = `/checkout\n${randomUUID()}`;
    const { store, sent } = recordingStore();
    const lease = acquired(await store.begin(delivery(key)));
    expect(await lease.complete({ receipt: 'r-1' })).toBe('ok');
    expect(sent.map((s) => s.name)).toEqual(['PutItemCommand', 'UpdateItemCommand']);

    const put = sent[0]?.input as PutItemCommandInput;
    expect(Object.keys(put.Item ?? {}).sort()).toEqual(
      [
        'pk',
        'recordType',
        'status',
        'leaseToken',
        'leaseExpiresAtMs',
        'expiresAt',
        'payloadHash',
        'attempt',
        'generation',
        'messageId',
        'acquiredAtMs',
      ].sort(),
    );
    expect(put.Item?.leaseToken?.S).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(put.Item?.generation?.S).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(put.ConditionExpression).toBe('attribute_not_exists(pk) OR expiresAt <= :0');
    expect(put.ExpressionAttributeNames).toBeUndefined();
    expect(put.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');

    const update = sent[1]?.input as UpdateItemCommandInput;
    expect(update.UpdateExpression).toBe('SET #0 = :0, endedAtMs = :1, #1 = :2');
    expect(update.ExpressionAttributeNames).toEqual({ '#0': 'status', '#1': 'result' });
    expect(update.ConditionExpression).toBe('leaseToken = :3 AND #0 = :4');
    expect(update.ReturnValuesOnConditionCheckFailure).toBeUndefined();

    // Read back with the derived attributes filled in.
    const record = await store.readRecord(JOB_TYPE, key);
    expect(record).toMatchObject({
      status: 'COMPLETED',
      jobType: JOB_TYPE,
      attempt: 1,
      redriveCount: 0,
      createdAtMs: NOW,
      acquiredAtMs: NOW,
      updatedAtMs: NOW,
      endedAtMs: NOW,
      completedAtMs: NOW,
      resultStored: true,
      result: '{"receipt":"r-1"}',
      resultBytes: 17,
    });
    // A duplicate on another instance gets the stored result.
    const duplicate = await recordingStore().store.begin(delivery(key));
    expect(duplicate).toEqual({ status: 'completed', result: { receipt: 'r-1' }, resultStored: true });
  });

  it('still writes every attribute the previous version requires, with its types (a rollback reads the record)', async () => {
    const key = randomUUID();
    const { store } = recordingStore();
    const lease = acquired(await store.begin(delivery(key)));
    await lease.complete(undefined);
    const item = await rawItem(key);
    for (const name of ['pk', 'recordType', 'status', 'leaseToken', 'payloadHash', 'generation']) {
      expect(item[name]?.S, name).toBeTypeOf('string');
    }
    for (const name of ['leaseExpiresAtMs', 'expiresAt', 'attempt']) {
      expect(item[name]?.N, name).toMatch(/^\d+$/);
    }
    expect(item.payloadHash?.S).toBe(HASH);
  });

  it('reads a completed record of the previous format: a duplicate gets its stored result', async () => {
    const key = randomUUID();
    await db.client.send(new PutItemCommand({ TableName: tableName, Item: previousFormatItem(key, {}) }));
    const { store } = recordingStore();
    expect(await store.begin(delivery(key))).toEqual({
      status: 'completed',
      result: { receipt: 'r-1' },
      resultStored: true,
    });
    expect(await store.readRecord(JOB_TYPE, key)).toMatchObject({
      createdAtMs: NOW - 90_000,
      updatedAtMs: NOW - 80_000,
      completedAtMs: NOW - 80_000,
      resultBytes: 18,
    });
  });

  it('takes over a released record of the previous format and completes it in the new format', async () => {
    const key = randomUUID();
    const old = previousFormatItem(key, {
      status: { S: 'RELEASED' },
      attempt: { N: '2' },
      lastError: { S: 'Error: HTTP 503' },
      lastErrorKind: { S: 'transient' },
      firstFailureAtMs: { N: String(NOW - 80_000) },
      lastFailureAtMs: { N: String(NOW - 80_000) },
    });
    delete old.result;
    delete old.resultStored;
    delete old.resultBytes;
    delete old.completedAtMs;
    await db.client.send(new PutItemCommand({ TableName: tableName, Item: old }));
    const { store } = recordingStore();
    const lease = acquired(await store.begin(delivery(key)));
    expect(lease.attempt).toBe(3);
    expect(lease.firstFailureAtMs).toBe(NOW - 80_000);
    expect(await lease.complete({ receipt: 'r-2' })).toBe('ok');
    const item = await rawItem(key);
    expect(item.generation?.S).toBe(old.generation?.S);
    expect(item.createdAtMs?.N).toBe(String(NOW - 90_000));
    // The takeover replaced the whole item: nothing of the previous format is left over.
    expect(item.jobType).toBeUndefined();
    expect(item.updatedAtMs).toBeUndefined();
    expect(await store.readRecord(JOB_TYPE, key)).toMatchObject({
      status: 'COMPLETED',
      attempt: 3,
      result: '{"receipt":"r-2"}',
      resultStored: true,
      lastError: 'Error: HTTP 503',
    });
  });

  it('keeps the not-stored marker of a result over the cap', async () => {
    const key = randomUUID();
    const store = new DynamoIdempotencyStore({
      tableName,
      client: db.client,
      now: () => NOW,
      maxResultBytes: 1_024,
    });
    const lease = acquired(await store.begin(delivery(key)));
    await lease.complete('x'.repeat(2_000));
    const item = await rawItem(key);
    expect(item.resultStored?.BOOL).toBe(false);
    expect(item.resultBytes?.N).toBe('2002');
    expect(item.resultOmittedReason?.S).toBe('over-size-cap');
    expect(item.result).toBeUndefined();
    expect(await store.begin(delivery(key))).toEqual({
      status: 'completed',
      result: undefined,
      resultStored: false,
    });
  });
});
