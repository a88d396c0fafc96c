/**
 * The DynamoDB idempotency store against the embedded emulator dynalite. Time is an injected
 * clock: leases and TTLs expire by moving it, not by sleeping.
 */
import { randomUUID } from 'node:crypto';
import { type AttributeValue, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { payloadHash as hashPayload } from '../../lib/core/canonical-json.ts';
import { classifyError, PermanentError } from '../../lib/core/errors.ts';
import {
  IdempotencyStoreError,
  PayloadMismatchError,
  StepValueNotStoredError,
} from '../../lib/runtime/idempotency/errors.ts';
import type { BeginOutcome, BeginRequest, Lease } from '../../lib/runtime/idempotency/guard.ts';
import { deriveIdempotencyKey, jobRecordKey, stepRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import type { DynamoIdempotencyStoreOptions } from '../../lib/runtime/idempotency/options.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

const JOB_TYPE = 'booking.reserve-inventory';
const LEASE_MS = 30_000;
const MARGIN_MS = 1_000;

let db: DynaliteHandle;
let tableName: string;
let nowMs: number;
const clock = () => nowMs;

beforeAll(async () => {
  db = await startDynalite();
  tableName = await db.createTable();
});

afterAll(async () => {
  await db?.stop();
});

beforeEach(() => {
  nowMs = Date.parse('2026-11-29T08:00:00.000Z');
});

/** A store on the shared table; a new one has a cold cache, like another Lambda instance. */
function newStore(options: Partial<DynamoIdempotencyStoreOptions> = {}): DynamoIdempotencyStore {
  return new DynamoIdempotencyStore({
    tableName,
    client: db.client,
    now: clock,
    leaseMarginMs: MARGIN_MS,
    busyRetryAfterMs: 5_000,
    ...options,
  });
}

/** A job delivery: unique key unless given; the lease ends LEASE_MS after the clock's now. */
function delivery(key: string, over: Partial<BeginRequest> = {}): BeginRequest {
  return {
    jobType: JOB_TYPE,
    key,
    payloadHash: hashPayload({ orderId: 'o-1' }),
    leaseExpiresAtMs: nowMs + LEASE_MS,
    onLeaseExpired: 'rerun',
    messageId: randomUUID(),
    ...over,
  };
}

function newKey(): string {
  return `/services/checkout/${randomUUID()}`;
}

function acquired(outcome: BeginOutcome): Lease {
  if (outcome.status !== 'acquired') throw new Error(`expected acquired, got ${JSON.stringify(outcome)}`);
  return outcome.lease;
}

/** What the worker does per record, reduced to the idempotency calls. */
async function handle(
  store: DynamoIdempotencyStore,
  request: BeginRequest,
  run: (lease: Lease) => Promise<unknown>,
): Promise<BeginOutcome['status'] | 'ran'> {
  const outcome = await store.begin(request);
  if (outcome.status !== 'acquired') return outcome.status;
  const result = await run(outcome.lease);
  expect(await outcome.lease.complete(result)).toBe('ok');
  return 'ran';
}

async function rawItem(key: string): Promise<Record<string, AttributeValue>> {
  const out = await db.client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: { S: jobRecordKey(JOB_TYPE, key) } },
      ConsistentRead: true,
    }),
  );
  if (!out.Item) throw new Error(`no record for ${key}`);
  return out.Item;
}

function commandNames(spy: { mock: { calls: unknown[][] } }): string[] {
  return spy.mock.calls.map((call) => (call[0] as object).constructor.name);
}

describe('DynamoIdempotencyStore on dynalite', () => {
  it('runs the side effect once across duplicate deliveries and returns the stored result', async () => {
    const key = newKey();
    const charges: string[] = [];
    const run = async () => {
      charges.push('charge');
      return { paymentId: 'pay-1', amount: 1250 };
    };
    const first = newStore();
    expect(await handle(first, delivery(key), run)).toBe('ran');

    // Another instance (cold cache) gets the duplicate: DynamoDB answers.
    const second = newStore();
    const dup = await second.begin(delivery(key));
    expect(dup).toEqual({
      status: 'completed',
      result: { paymentId: 'pay-1', amount: 1250 },
      resultStored: true,
    });
    // The same warm instance answers from its cache.
    expect(await handle(first, delivery(key), run)).toBe('completed');
    expect(charges).toEqual(['charge']);
  });

  it('uses one PutItem and one UpdateItem for a first delivery, and a GetItem fallback on duplicates (dynalite omits ALL_OLD)', async () => {
    const key = newKey();
    const spy = vi.spyOn(db.client, 'send');
    try {
      const store = newStore();
      expect(await handle(store, delivery(key), async () => 'done')).toBe('ran');
      expect(commandNames(spy)).toEqual(['PutItemCommand', 'UpdateItemCommand']);

      spy.mockClear();
      const dup = await newStore().begin(delivery(key));
      expect(dup).toMatchObject({ status: 'completed', result: 'done' });
      // The failed put carried no Item on dynalite, so the store read the record.
      expect(commandNames(spy)).toEqual(['PutItemCommand', 'GetItemCommand']);
      const getInput = (spy.mock.calls[1]?.[0] as GetItemCommand | undefined)?.input;
      expect(getInput?.ConsistentRead).toBe(true);

      spy.mockClear();
      expect(await store.begin(delivery(key))).toMatchObject({ status: 'completed' });
      expect(commandNames(spy)).toEqual([]); // warm cache
    } finally {
      spy.mockRestore();
    }
  });

  it('lets exactly one of two concurrent deliveries run; the other is busy, then sees COMPLETED', async () => {
    const key = newKey();
    const a = newStore();
    const b = newStore();
    const outcomes = await Promise.all([a.begin(delivery(key)), b.begin(delivery(key))]);
    const statuses = outcomes.map((o) => o.status).sort();
    expect(statuses).toEqual(['acquired', 'busy']);
    const busy = outcomes.find((o) => o.status === 'busy');
    expect(busy?.status === 'busy' && busy.retryAfterMs).toBeGreaterThan(0);
    expect(busy?.status === 'busy' && busy.retryAfterMs).toBeLessThanOrEqual(5_000);

    const winner = outcomes.find((o) => o.status === 'acquired');
    if (winner?.status !== 'acquired') throw new Error('no winner');
    expect(await winner.lease.complete({ reserved: 3 })).toBe('ok');

    nowMs += 2_000; // the busy one comes back after its retry delay
    const loserStore = outcomes[0]?.status === 'busy' ? a : b;
    expect(await loserStore.begin(delivery(key))).toEqual({
      status: 'completed',
      result: { reserved: 3 },
      resultStored: true,
    });
  });

  it("re-runs a run that died after its side effect once the lease expires (policy 'rerun')", async () => {
    const key = newKey();
    let sideEffects = 0;
    const store = newStore();
    const dying = acquired(await store.begin(delivery(key)));
    sideEffects++; // ... and the Lambda dies before complete()
    expect(dying.attempt).toBe(1);

    nowMs += LEASE_MS; // lease ended, but within the clock-skew margin: still busy
    expect((await newStore().begin(delivery(key))).status).toBe('busy');

    nowMs += MARGIN_MS + 1;
    const rerun = acquired(await newStore().begin(delivery(key)));
    sideEffects++;
    expect(rerun.attempt).toBe(2);
    expect(rerun.firstFailureAtMs).toBe(Date.parse('2026-11-29T08:00:30.000Z'));
    expect(await rerun.complete('ok')).toBe('ok');
    expect(sideEffects).toBe(2); // rather twice than never

    const item = await rawItem(key);
    expect(item.lastErrorKind?.S).toBe('lease-expired');
    expect(item.lastError?.S).toMatch(/^LeaseExpired: attempt 1/);
  });

  it("gives lease-expired for a run that died with policy 'dead-letter'; after the permanent failure a redrive runs", async () => {
    const key = newKey();
    const store = newStore();
    const dying = acquired(await store.begin(delivery(key, { onLeaseExpired: 'dead-letter' })));
    expect(dying.attempt).toBe(1);

    nowMs += LEASE_MS + MARGIN_MS + 1;
    const outcome = await newStore().begin(delivery(key, { onLeaseExpired: 'dead-letter' }));
    if (outcome.status !== 'lease-expired') throw new Error(`expected lease-expired, got ${outcome.status}`);
    expect(outcome.previousAttempt).toBe(1);
    expect(outcome.lease.attempt).toBe(1); // nothing ran
    expect((await rawItem(key)).interruptedAtMs?.N).toBe(String(Date.parse('2026-11-29T08:00:30.000Z')));

    // The worker could not reach the DLQ this time: it releases, and the next delivery is
    // dead-lettered again rather than run.
    expect(await outcome.lease.fail(new Error('DLQ send failed'), 'transient')).toBe('ok');
    const again = await newStore().begin(delivery(key, { onLeaseExpired: 'dead-letter' }));
    if (again.status !== 'lease-expired') throw new Error(`expected lease-expired, got ${again.status}`);
    expect(await again.lease.fail(new Error('lease expired without completion'), 'permanent')).toBe('ok');
    expect((await rawItem(key)).status?.S).toBe('FAILED');
    expect((await rawItem(key)).interruptedAtMs).toBeUndefined();

    // An operator redrives the message: it runs, as a new cycle of attempts.
    nowMs += 60_000;
    const redriven = acquired(await newStore().begin(delivery(key, { onLeaseExpired: 'dead-letter' })));
    expect(redriven.attempt).toBe(1);
    expect((await rawItem(key)).redriveCount?.N).toBe('1');
  });

  it('acknowledges a redelivery of a message it already dead-lettered (lost ack), while a redrive runs', async () => {
    const key = newKey();
    const first = delivery(key);
    const lease = acquired(await newStore().begin(first));
    expect(await lease.fail(new Error('400 Bad Request'), 'permanent')).toBe('ok');

    // The batch's response was lost after the DLQ send: SQS delivers the same message again.
    expect(await newStore().begin({ ...first, leaseExpiresAtMs: nowMs + LEASE_MS })).toEqual({
      status: 'dead-lettered',
    });
    expect((await rawItem(key)).status?.S).toBe('FAILED');

    // A redrive moves the body into the queue as a new message (new messageId): it runs.
    const redriven = acquired(await newStore().begin(delivery(key)));
    expect(redriven.attempt).toBe(1);
  });

  it('fences a slow run whose lease was taken over: it can neither complete nor release the newer record', async () => {
    const key = newKey();
    const slow = acquired(await newStore().begin(delivery(key)));
    nowMs += LEASE_MS + MARGIN_MS + 1;
    const current = acquired(await newStore().begin(delivery(key)));
    expect(current.attempt).toBe(2);
    const tokenOfCurrent = (await rawItem(key)).leaseToken?.S;

    expect(await slow.complete({ stale: true })).toBe('fenced');
    expect(await slow.fail(new Error('late failure'), 'transient')).toBe('fenced');
    expect(await slow.fail(new Error('late failure'), 'permanent')).toBe('fenced');
    const during = await rawItem(key);
    expect(during.status?.S).toBe('IN_PROGRESS');
    expect(during.leaseToken?.S).toBe(tokenOfCurrent);
    expect(during.result).toBeUndefined();

    expect(await current.complete({ fresh: true })).toBe('ok');
    expect(await slow.complete({ stale: true })).toBe('fenced');
    expect(await newStore().begin(delivery(key))).toMatchObject({ result: { fresh: true } });
  });

  it('treats a repeated write of its own lease (an SDK retry after a lost response) as ok, not fenced', async () => {
    const key = newKey();
    const lease = acquired(await newStore().begin(delivery(key)));
    expect(await lease.complete(1)).toBe('ok');
    expect(await lease.complete(1)).toBe('ok');
    expect(await lease.fail(new Error('x'), 'transient')).toBe('fenced');
  });

  it('throws a PermanentError naming the key when the key comes back with a different payload', async () => {
    const key = newKey();
    const store = newStore();
    acquired(await store.begin(delivery(key)));
    const other = delivery(key, { payloadHash: hashPayload({ orderId: 'o-2' }) });
    const error = await newStore()
      .begin(other)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(PayloadMismatchError);
    expect(error).toBeInstanceOf(PermanentError);
    expect((error as Error).message).toContain(key);
    expect(classifyError(error).kind).toBe('permanent');

    // Also when the mismatch is found in the warm cache of a completed key.
    const done = newKey();
    expect(await handle(store, delivery(done), async () => 'r')).toBe('ran');
    await expect(store.begin(delivery(done, { payloadHash: hashPayload({ x: 1 }) }))).rejects.toThrow(done);
  });

  it('completes a job whose result is over the cap, and duplicates get a marker instead of the result', async () => {
    const key = newKey();
    const store = newStore({ maxResultBytes: 1024 });
    const big = { blob: 'x'.repeat(5000) };
    expect(await handle(store, delivery(key), async () => big)).toBe('ran');
    const item = await rawItem(key);
    expect(item.status?.S).toBe('COMPLETED');
    expect(item.resultStored?.BOOL).toBe(false);
    expect(item.resultOmittedReason?.S).toBe('over-size-cap');
    expect(Number(item.resultBytes?.N)).toBe(JSON.stringify(big).length);
    expect(item.result).toBeUndefined();
    expect(await newStore().begin(delivery(key))).toEqual({
      status: 'completed',
      result: undefined,
      resultStored: false,
    });
    expect(await store.begin(delivery(key))).toEqual({
      status: 'completed',
      result: undefined,
      resultStored: false,
    });
  });

  it('never writes past the 400 KB item limit: a 500 KB result with the default cap still completes', async () => {
    const key = newKey();
    expect(await handle(newStore(), delivery(key), async () => 'y'.repeat(500 * 1024))).toBe('ran');
    expect((await rawItem(key)).resultStored?.BOOL).toBe(false);
    // A result just under the largest allowed cap is stored whole, and dynalite accepts the item.
    const near = newKey();
    const store = newStore({ maxResultBytes: 393_216 });
    expect(await handle(store, delivery(near), async () => 'z'.repeat(393_216 - 2))).toBe('ran');
    // Stored whole: the result itself, no `resultStored` marker.
    expect((await rawItem(near)).result?.S).toBe(JSON.stringify('z'.repeat(393_216 - 2)));
    expect((await rawItem(near)).resultStored).toBeUndefined();
  });

  it('skips a step done on an earlier attempt and returns its stored value (once across a retry)', async () => {
    const key = newKey();
    const calls: string[] = [];
    const first = acquired(await newStore().begin(delivery(key)));
    const charge = await first.once('charge-card', async () => {
      calls.push('charge');
      return { chargeId: 'ch_1' };
    });
    expect(charge).toEqual({ chargeId: 'ch_1' });
    const keyOnFirst = first.idempotencyKey('charge-card');
    expect(await first.fail(new Error('mail server down'), 'transient')).toBe('ok');

    const retry = acquired(await newStore().begin(delivery(key)));
    expect(retry.attempt).toBe(2);
    const again = await retry.once('charge-card', async () => {
      calls.push('charge');
      return { chargeId: 'ch_2' };
    });
    expect(again).toEqual({ chargeId: 'ch_1' });
    await retry.once('send-mail', async () => {
      calls.push('mail');
    });
    expect(calls).toEqual(['charge', 'mail']);
    expect(retry.idempotencyKey('charge-card')).toBe(keyOnFirst);
    expect(retry.idempotencyKey('send-mail')).not.toBe(keyOnFirst);
    expect(keyOnFirst).toMatch(/^[0-9a-f]{64}$/);
    // The same key the worker derives when it runs without the store.
    expect(keyOnFirst).toBe(deriveIdempotencyKey(JOB_TYPE, key, 'charge-card'));

    const step = await db.client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: stepRecordKey(jobRecordKey(JOB_TYPE, key), 'charge-card') } },
        ConsistentRead: true,
      }),
    );
    expect(step.Item?.value?.S).toBe('{"chargeId":"ch_1"}');
    expect(step.Item?.pk?.S).toBe(`${JOB_TYPE}#${key}#step#charge-card`);
  });

  it('refuses to return a step value that was over the cap on a retry', async () => {
    const key = newKey();
    const store = newStore({ maxResultBytes: 16 });
    const first = acquired(await store.begin(delivery(key)));
    expect(await first.once('export', async () => 'a long value over sixteen bytes')).toBe(
      'a long value over sixteen bytes',
    );
    await first.fail(new Error('later step failed'), 'transient');
    const retry = acquired(await store.begin(delivery(key)));
    const error = await retry.once('export', async () => 'again').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StepValueNotStoredError);
    expect(error).toBeInstanceOf(PermanentError);
  });

  it('counts attempts across transient releases and keeps the first failure time and the last error', async () => {
    const key = newKey();
    const firstFailureAt = nowMs + 100;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const lease = acquired(await newStore().begin(delivery(key)));
      expect(lease.attempt).toBe(attempt);
      expect(lease.firstFailureAtMs).toBe(attempt === 1 ? undefined : firstFailureAt);
      nowMs += 100;
      expect(await lease.fail(new Error(`timeout #${attempt}`), 'transient')).toBe('ok');
      const item = await rawItem(key);
      expect(item.status?.S).toBe('RELEASED');
      expect(item.attempt?.N).toBe(String(attempt));
      nowMs += 10_000; // backoff
    }
    const item = await rawItem(key);
    expect(item.firstFailureAtMs?.N).toBe(String(firstFailureAt));
    expect(item.lastError?.S).toBe('Error: timeout #3');
    const fourth = acquired(await newStore().begin(delivery(key)));
    expect(fourth.attempt).toBe(4);
  });

  it('always writes leaseExpiresAtMs on the record, also for a lease with zero time left', async () => {
    const key = newKey();
    const lease = acquired(await newStore().begin(delivery(key, { leaseExpiresAtMs: nowMs })));
    expect((await rawItem(key)).leaseExpiresAtMs?.N).toBe(String(nowMs));
    await lease.fail(new Error('x'), 'transient');
    expect((await rawItem(key)).leaseExpiresAtMs?.N).toBe(String(nowMs));

    const second = acquired(await newStore().begin(delivery(key)));
    expect((await rawItem(key)).leaseExpiresAtMs?.N).toBe(String(nowMs + LEASE_MS));
    await second.complete(null);
    const done = await rawItem(key);
    expect(done.leaseExpiresAtMs?.N).toBe(String(nowMs + LEASE_MS));
    expect(Number(done.expiresAt?.N)).toBe(Math.floor(nowMs / 1000) + 7 * 24 * 3600);
  });

  it('treats a record whose TTL has passed as absent, and does not reuse its steps', async () => {
    const key = newKey();
    const store = newStore({ recordTtlSeconds: 3600 });
    const lease = acquired(await store.begin(delivery(key)));
    await lease.once('step', async () => 'old');
    await lease.complete('old result');

    nowMs += 3600 * 1000; // expiresAt <= now: expired, although dynalite never deletes it
    // A different payload under the old key is no conflict: the old record no longer counts.
    const reused = hashPayload({ reused: 'key' });
    const fresh = await newStore({ recordTtlSeconds: 3600 }).begin(delivery(key, { payloadHash: reused }));
    const again = acquired(fresh);
    expect(again.attempt).toBe(1);
    expect(await again.once('step', async () => 'new')).toBe('new');
    // The warm instance's cache entry expired with the record too.
    expect((await store.begin(delivery(key, { payloadHash: reused }))).status).toBe('busy');
  });

  it('translates SDK failures into a transient IdempotencyStoreError with the SDK error as cause', async () => {
    const store = new DynamoIdempotencyStore({ tableName: 'no-such-table', client: db.client, now: clock });
    const error = await store.begin(delivery(newKey())).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(IdempotencyStoreError);
    // A missing table is not the job's fault: retried, never dead-lettered on its account.
    expect(classifyError(error).kind).toBe('transient');
    expect((error as Error).message).toContain('no-such-table');
    expect(((error as Error).cause as Error).name).toBe('ResourceNotFoundException');
  });

  it('refuses to overwrite a record written by another acquirer between its read and its takeover', async () => {
    const key = newKey();
    const store = newStore();
    const first = acquired(await store.begin(delivery(key)));
    await first.fail(new Error('x'), 'transient');
    // Another worker takes the released lease right after this store read the record: simulate
    // by letting the next PutItem see a changed record (a competing takeover lands first).
    const competitor = newStore();
    const original = db.client.send.bind(db.client);
    let injected = false;
    const spy = vi.spyOn(db.client, 'send').mockImplementation((async (command: unknown) => {
      if (
        !injected &&
        command instanceof PutItemCommand &&
        command.input.ConditionExpression?.startsWith('leaseToken =')
      ) {
        injected = true;
        spy.mockRestore();
        const won = acquired(await competitor.begin(delivery(key)));
        expect(won.attempt).toBe(2);
      }
      return original(command as PutItemCommand);
    }) as never);
    try {
      const outcome = await store.begin(delivery(key));
      expect(outcome.status).toBe('busy');
    } finally {
      spy.mockRestore();
    }
    expect((await rawItem(key)).attempt?.N).toBe('2');
  });
});
