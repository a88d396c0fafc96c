/**
 * The group record of a parked FIFO message group in the DynamoDB idempotency store, against
 * dynalite: park (conditional: absent, expired, or the same blocker), read, unpark (only by its
 * blocker), TTL, its key never meeting a job or step record, and an SDK retry of its own park
 * write. Time is an injected clock.
 */
import { randomUUID } from 'node:crypto';
import {
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../lib/core/canonical-json.ts';
import { classifyError } from '../../lib/core/errors.ts';
import type { ParkGroupRequest } from '../../lib/runtime/idempotency/guard.ts';
import {
  decodeGroupRecordKey,
  groupRecordKey,
  jobRecordKey,
  stepRecordKey,
} from '../../lib/runtime/idempotency/keys.ts';
import type { DynamoIdempotencyStoreOptions } from '../../lib/runtime/idempotency/options.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

let db: DynaliteHandle;
let tableName: string;
let nowMs: number;

beforeAll(async () => {
  db = await startDynalite();
  tableName = await db.createTable();
});

afterAll(async () => {
  await db?.stop();
});

beforeEach(() => {
  nowMs = Date.parse('2026-11-30T08:00:00.000Z');
});

function newStore(options: Partial<DynamoIdempotencyStoreOptions> = {}): DynamoIdempotencyStore {
  return new DynamoIdempotencyStore({ tableName, client: db.client, now: () => nowMs, ...options });
}

/** A park request of a new group (unique id) behind job `jobId`. */
function parkRequest(over: Partial<ParkGroupRequest> = {}): ParkGroupRequest {
  const jobId = over.blockerJobId ?? `confirm-${randomUUID()}`;
  return {
    queueName: 'booking',
    messageGroupId: `user-${randomUUID()}`,
    blockerPk: jobRecordKey('booking.confirm', `/checkout\n${jobId}`),
    blockerJobType: 'booking.confirm',
    blockerJobId: jobId,
    blockerMessageId: randomUUID(),
    blockerReason: 'PermanentError',
    ...over,
  };
}

async function rawItem(pk: string) {
  const out = await db.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk } } }));
  return out.Item;
}

describe('group record: park, read, unpark', () => {
  it('parks a group under its own record kind and key, and reads it back strongly consistent', async () => {
    const store = newStore();
    const request = parkRequest({ messageGroupId: `u#7%${randomUUID()}` });
    expect(await store.readGroupPark('booking', request.messageGroupId)).toBeUndefined();

    const parked = await store.parkGroup(request);

    expect(parked.status).toBe('parked');
    const pk = groupRecordKey('booking', request.messageGroupId);
    expect(pk.startsWith('%group#booking#u%237%25')).toBe(true);
    expect(decodeGroupRecordKey(pk)).toEqual({
      queueName: { text: 'booking' },
      messageGroupId: { text: request.messageGroupId },
    });
    const read = await newStore().readGroupPark('booking', request.messageGroupId);
    expect(read).toEqual(parked.park);
    expect(read).toMatchObject({
      pk,
      queueName: 'booking',
      messageGroupId: request.messageGroupId,
      blockerPk: request.blockerPk,
      blockerJobType: 'booking.confirm',
      blockerJobId: request.blockerJobId,
      blockerMessageId: request.blockerMessageId,
      blockerReason: 'PermanentError',
      parkedAtMs: nowMs,
      updatedAtMs: nowMs,
      parkCount: 1,
      // 14 days by default: as long as the JobQueue DLQ keeps the blocker.
      expiresAt: Math.floor(nowMs / 1000) + 1_209_600,
    });
    const item = await rawItem(pk);
    expect(item?.recordType).toEqual({ S: 'group' });
    expect(item?.status).toEqual({ S: 'PARKED' });
  });

  it('refreshes the park when the same blocker parks again (a failed redrive): first time kept, count + 1', async () => {
    const store = newStore();
    const request = parkRequest();
    await store.parkGroup(request);
    nowMs += 60_000;
    const again = await store.parkGroup({
      ...request,
      blockerMessageId: 'redriven-1',
      blockerReason: 'HTTP 404',
    });

    expect(again.status).toBe('parked');
    expect(again.park).toMatchObject({
      blockerMessageId: 'redriven-1',
      blockerReason: 'HTTP 404',
      parkedAtMs: nowMs - 60_000,
      updatedAtMs: nowMs,
      parkCount: 2,
      expiresAt: Math.floor(nowMs / 1000) + 1_209_600,
    });
    expect(await store.readGroupPark('booking', request.messageGroupId)).toEqual(again.park);
  });

  it('keeps the park of the first blocker when another job of the group tries to park it', async () => {
    const store = newStore();
    const first = parkRequest();
    const { park } = await store.parkGroup(first);
    const second = parkRequest({ messageGroupId: first.messageGroupId });

    const outcome = await store.parkGroup(second);

    expect(outcome).toEqual({ status: 'parked-by-other', park });
    expect(await store.readGroupPark('booking', first.messageGroupId)).toEqual(park);
  });

  it('is cleared only by its blocker', async () => {
    const store = newStore();
    const request = parkRequest();
    await store.parkGroup(request);
    const other = jobRecordKey('booking.invoice', '/checkout\ninv-1');

    expect(await store.unparkGroup('booking', request.messageGroupId, other)).toBe('parked-by-other');
    expect(await store.readGroupPark('booking', request.messageGroupId)).toBeDefined();
    expect(await store.unparkGroup('booking', request.messageGroupId, request.blockerPk)).toBe('cleared');
    expect(await store.readGroupPark('booking', request.messageGroupId)).toBeUndefined();
    expect(await rawItem(groupRecordKey('booking', request.messageGroupId))).toBeUndefined();
    expect(await store.unparkGroup('booking', request.messageGroupId, request.blockerPk)).toBe('not-parked');
  });

  it('scopes groups by queue: the same group id on another queue is not parked', async () => {
    const store = newStore();
    const request = parkRequest();
    await store.parkGroup(request);
    expect(await store.readGroupPark('invoices', request.messageGroupId)).toBeUndefined();
  });
});

describe('group record TTL', () => {
  it('counts an expired park as gone: not parked, and another blocker may park the group', async () => {
    const store = newStore({ groupParkTtlSeconds: 3_600 });
    const first = parkRequest();
    await store.parkGroup(first);
    nowMs += 3_600_000;

    expect(await store.readGroupPark('booking', first.messageGroupId)).toBeUndefined();
    const second = parkRequest({ messageGroupId: first.messageGroupId });
    const outcome = await store.parkGroup(second);
    expect(outcome.status).toBe('parked');
    expect(outcome.park).toMatchObject({ blockerPk: second.blockerPk, parkCount: 1, parkedAtMs: nowMs });
  });

  it('refuses a TTL that is not a whole number of seconds >= 1', () => {
    expect(() => newStore({ groupParkTtlSeconds: 0 })).toThrow(/groupParkTtlSeconds must be an integer >= 1/);
  });
});

describe('group record keys never meet job or step records', () => {
  it('keeps a job whose type and key spell a group key apart from the group record', async () => {
    const store = newStore();
    const request = parkRequest({ messageGroupId: 'user-7', queueName: `q-${randomUUID()}` });
    const groupPk = groupRecordKey(request.queueName, 'user-7');
    const lookalike = jobRecordKey('%group', `${request.queueName}#user-7`);
    expect(lookalike).not.toBe(groupPk);
    expect(stepRecordKey(lookalike, 'x')).not.toBe(groupPk);
    await store.parkGroup(request);

    // The look-alike job runs and completes under its own record; the park is untouched.
    const begun = await store.begin({
      jobType: '%group',
      key: `${request.queueName}#user-7`,
      payloadHash: payloadHash({}),
      leaseExpiresAtMs: nowMs + 30_000,
      onLeaseExpired: 'rerun',
      messageId: randomUUID(),
    });
    expect(begun.status).toBe('acquired');
    if (begun.status === 'acquired') expect(await begun.lease.complete('ok')).toBe('ok');
    expect(await store.readGroupPark(request.queueName, 'user-7')).toMatchObject({
      blockerPk: request.blockerPk,
    });
  });

  it('throws a permanent IdempotencyRecordError when a group key holds another kind of record', async () => {
    const group = `user-${randomUUID()}`;
    await db.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { pk: { S: groupRecordKey('booking', group) }, recordType: { S: 'job' } },
      }),
    );
    const error = await newStore()
      .readGroupPark('booking', group)
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('IdempotencyRecordError');
    expect(classifyError(error).kind).toBe('permanent');
  });
});

describe('an SDK retry of its own park write (lost response)', () => {
  it('recognises its own record and answers parked, not parked-by-other', async () => {
    // The first PutItem of a group record lands, then the same request is sent again, as the SDK
    // does after a connection reset: it fails its condition on the store's own record.
    let replayed = false;
    const client = {
      send: async (command: { input: unknown }) => {
        const out = await db.client.send(command as never);
        const input = command.input as Partial<PutItemCommandInput>;
        if (!replayed && command instanceof PutItemCommand && input.Item?.recordType?.S === 'group') {
          replayed = true;
          return db.client.send(command as never);
        }
        return out;
      },
    } as unknown as DynamoDBClient;
    const store = newStore({ client });
    const request = parkRequest();

    const outcome = await store.parkGroup(request);

    expect(replayed).toBe(true);
    expect(outcome.status).toBe('parked');
    expect(outcome.park).toMatchObject({ blockerPk: request.blockerPk, parkCount: 1 });
  });
});
