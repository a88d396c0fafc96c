/**
 * The idempotency store's decisions on a fake DynamoDB client: the paths an emulator cannot
 * show (the old item returned on a failed condition, as real DynamoDB does with
 * `ReturnValuesOnConditionCheckFailure: ALL_OLD`; throttling), plus keys, cache and size bounds.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  type GetItemCommand,
  type PutItemCommand,
  type PutItemCommandInput,
  type UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { classifyError, JobError } from '../../lib/core/errors.ts';
import { CompletedKeyCache } from '../../lib/runtime/idempotency/cache.ts';
import { IdempotencyRecordError, IdempotencyStoreError } from '../../lib/runtime/idempotency/errors.ts';
import type { BeginRequest } from '../../lib/runtime/idempotency/guard.ts';
import {
  deriveIdempotencyKey,
  jobRecordKey,
  MAX_VERBATIM_JOB_KEY_BYTES,
  stepRecordKey,
} from '../../lib/runtime/idempotency/keys.ts';
import { IDEMPOTENCY_DEFAULTS } from '../../lib/runtime/idempotency/options.ts';
import {
  DYNAMODB_MAX_ITEM_BYTES,
  estimateItemBytes,
  type JobRecord,
  jobRecordToItem,
  MAX_ERROR_BYTES,
  MAX_STORABLE_RESULT_BYTES,
  MAX_TEXT_BYTES,
  parseJobRecord,
  truncateUtf8,
} from '../../lib/runtime/idempotency/record.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';

const NOW = Date.parse('2026-11-29T08:00:00.000Z');
const NOW_S = Math.floor(NOW / 1000);
const JOB = 'mail.send-receipt';
const KEY = '/services/checkout/42';
const PK = jobRecordKey(JOB, KEY);

function request(over: Partial<BeginRequest> = {}): BeginRequest {
  return {
    jobType: JOB,
    key: KEY,
    payloadHash: 'a'.repeat(64),
    leaseExpiresAtMs: NOW + 30_000,
    onLeaseExpired: 'rerun',
    messageId: 'm-1',
    ...over,
  };
}

function record(over: Partial<JobRecord> = {}): JobRecord {
  return {
    pk: PK,
    recordType: 'job',
    status: 'IN_PROGRESS',
    leaseToken: 'token-old',
    leaseExpiresAtMs: NOW + 10_000,
    expiresAt: NOW_S + 3600,
    payloadHash: 'a'.repeat(64),
    attempt: 1,
    generation: 'gen-1',
    redriveCount: 0,
    jobType: JOB,
    messageId: 'm-0',
    createdAtMs: NOW - 60_000,
    acquiredAtMs: NOW - 60_000,
    updatedAtMs: NOW - 60_000,
    endedAtMs: undefined,
    completedAtMs: undefined,
    resultStored: undefined,
    result: undefined,
    resultBytes: undefined,
    resultOmittedReason: undefined,
    lastError: undefined,
    lastErrorKind: undefined,
    firstFailureAtMs: undefined,
    lastFailureAtMs: undefined,
    interruptedAtMs: undefined,
    ...over,
  };
}

function conditionFailed(item?: Record<string, AttributeValue>): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    ...(item ? { Item: item } : {}),
  });
}

/** A reply computed from the command it answers (e.g. the failed condition of an SDK retry returning the put's own item). */
type ReplyFn = (command: { input: PutItemCommandInput }) => unknown;

/**
 * A client whose `send` answers each command with the next scripted reply (a value, an error, or
 * a {@link ReplyFn}).
 */
function scriptedClient(replies: Array<unknown>): { client: DynamoDBClient; sent: object[] } {
  const sent: object[] = [];
  const client = {
    send: async (command: object) => {
      sent.push(command);
      if (replies.length === 0) throw new Error(`unexpected command ${command.constructor.name}`);
      const next = replies.shift();
      const reply =
        typeof next === 'function' ? (next as ReplyFn)(command as { input: PutItemCommandInput }) : next;
      if (reply instanceof Error) throw reply;
      return reply;
    },
  } as unknown as DynamoDBClient;
  return { client, sent };
}

function store(client: DynamoDBClient, over: Record<string, unknown> = {}): DynamoIdempotencyStore {
  return new DynamoIdempotencyStore({ tableName: 't', client, now: () => NOW, leaseMarginMs: 1000, ...over });
}

const names = (sent: object[]) => sent.map((c) => c.constructor.name);

describe('DynamoIdempotencyStore with the old item on a failed condition (ALL_OLD, real DynamoDB)', () => {
  it('answers a duplicate of a completed job from the returned item, without a GetItem', async () => {
    const completed = record({
      status: 'COMPLETED',
      resultStored: true,
      result: '{"receiptId":"r-9"}',
      resultBytes: 19,
    });
    const { client, sent } = scriptedClient([conditionFailed(jobRecordToItem(completed))]);
    const outcome = await store(client).begin(request());
    expect(outcome).toEqual({ status: 'completed', result: { receiptId: 'r-9' }, resultStored: true });
    expect(names(sent)).toEqual(['PutItemCommand']);
    const put = (sent[0] as PutItemCommand).input;
    expect(put.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expect(put.ConditionExpression).toBe('attribute_not_exists(pk) OR expiresAt <= :0');
    expect(put.ExpressionAttributeValues?.[':0']).toEqual({ N: String(NOW_S) });
  });

  it('answers busy for a live lease, with a short retry delay bounded by the lease and busyRetryAfterMs', async () => {
    const cases = [
      { leftMs: 3_000, expected: 4_000 }, // lease end + skew margin
      { leftMs: 600_000, expected: 30_000 }, // capped by busyRetryAfterMs
      { leftMs: -500, expected: 1_000 }, // within the margin: still busy, at least 1 s
    ];
    for (const { leftMs, expected } of cases) {
      const live = record({ leaseExpiresAtMs: NOW + leftMs });
      const { client, sent } = scriptedClient([conditionFailed(jobRecordToItem(live))]);
      expect(await store(client).begin(request())).toEqual({ status: 'busy', retryAfterMs: expected });
      expect(names(sent)).toEqual(['PutItemCommand']);
    }
  });

  it('takes over a released record with a put conditioned on what it read, carrying the attempt count', async () => {
    const released = record({
      status: 'RELEASED',
      attempt: 2,
      leaseToken: 'token-2',
      firstFailureAtMs: NOW - 50_000,
      lastError: 'Error: timeout',
    });
    const { client, sent } = scriptedClient([conditionFailed(jobRecordToItem(released)), {}]);
    const outcome = await store(client).begin(request());
    expect(outcome.status).toBe('acquired');
    if (outcome.status !== 'acquired') return;
    expect(outcome.lease.attempt).toBe(3);
    expect(outcome.lease.firstFailureAtMs).toBe(NOW - 50_000);
    expect(names(sent)).toEqual(['PutItemCommand', 'PutItemCommand']);
    const takeover = (sent[1] as PutItemCommand).input as PutItemCommandInput;
    // The token and status read: each acquisition writes a new token, so the pair never comes back.
    expect(takeover.ConditionExpression).toBe('leaseToken = :0 AND #0 = :1');
    expect(takeover.ExpressionAttributeNames).toEqual({ '#0': 'status' });
    expect(takeover.ExpressionAttributeValues).toEqual({
      ':0': { S: 'token-2' },
      ':1': { S: 'RELEASED' },
    });
    const written = parseJobRecord(takeover.Item ?? {});
    expect(written.attempt).toBe(3);
    expect(written.generation).toBe('gen-1');
    expect(written.leaseToken).not.toBe('token-2');
    expect(written.leaseExpiresAtMs).toBe(NOW + 30_000);
  });

  it('requires an expired lease (beyond the margin) in the condition of a takeover from IN_PROGRESS', async () => {
    const expired = record({ leaseExpiresAtMs: NOW - 5_000 });
    const { client, sent } = scriptedClient([conditionFailed(jobRecordToItem(expired)), {}]);
    const outcome = await store(client).begin(request({ onLeaseExpired: 'dead-letter' }));
    expect(outcome).toMatchObject({ status: 'lease-expired', previousAttempt: 1 });
    const takeover = (sent[1] as PutItemCommand).input;
    expect(takeover.ConditionExpression).toContain('leaseExpiresAtMs < :2');
    expect(takeover.ExpressionAttributeValues?.[':2']).toEqual({ N: String(NOW - 1_000) });
    expect(parseJobRecord(takeover.Item ?? {}).interruptedAtMs).toBe(NOW - 5_000);
  });

  it('reports fenced after a failed completion from one consistent GetItem (the update asks for no old item)', async () => {
    const { client, sent } = scriptedClient([
      {}, // acquire
      conditionFailed(),
      { Item: jobRecordToItem(record({ leaseToken: 'someone-else', attempt: 2 })) },
    ]);
    const outcome = await store(client).begin(request());
    if (outcome.status !== 'acquired') throw new Error(outcome.status);
    expect(await outcome.lease.complete('late')).toBe('fenced');
    expect(names(sent)).toEqual(['PutItemCommand', 'UpdateItemCommand', 'GetItemCommand']);
    const update = (sent[1] as UpdateItemCommand).input;
    expect(update.ConditionExpression).toMatch(/^leaseToken = :\d+ AND #0 = :\d+$/);
    expect(update.ReturnValuesOnConditionCheckFailure).toBeUndefined();
    expect((sent[2] as GetItemCommand).input.ConsistentRead).toBe(true);
  });
});

describe('DynamoIdempotencyStore after an SDK retry of its own write (lost response, ALL_OLD)', () => {
  /** The retried request fails its condition on the item the first, lost, attempt wrote. */
  const ownItemComesBack: ReplyFn = (command) => conditionFailed(command.input.Item);

  it('takes the lease when the item that failed the acquisition is its own, without a GetItem', async () => {
    const { client, sent } = scriptedClient([ownItemComesBack]);
    const outcome = await store(client).begin(request({ onLeaseExpired: 'dead-letter' }));
    expect(outcome.status).toBe('acquired');
    if (outcome.status === 'acquired') expect(outcome.lease.attempt).toBe(1);
    expect(names(sent)).toEqual(['PutItemCommand']);
  });

  it('takes over an expired lease when the item that failed the takeover is its own', async () => {
    const expired = record({ leaseExpiresAtMs: NOW - 5_000, leaseToken: 'token-dead' });
    const { client, sent } = scriptedClient([conditionFailed(jobRecordToItem(expired)), ownItemComesBack]);
    const rerun = await store(client).begin(request());
    expect(rerun.status).toBe('acquired');
    if (rerun.status === 'acquired') expect(rerun.lease.attempt).toBe(2);
    expect(names(sent)).toEqual(['PutItemCommand', 'PutItemCommand']);

    const again = scriptedClient([conditionFailed(jobRecordToItem(expired)), ownItemComesBack]);
    expect(await store(again.client).begin(request({ onLeaseExpired: 'dead-letter' }))).toMatchObject({
      status: 'lease-expired',
      previousAttempt: 1,
    });
  });

  it('still answers busy for a live lease of another run (a different token)', async () => {
    const { client } = scriptedClient([
      (command: { input: PutItemCommandInput }) =>
        conditionFailed({ ...command.input.Item, leaseToken: { S: 'someone-else' } }),
    ]);
    expect((await store(client).begin(request())).status).toBe('busy');
  });

  it("returns the step function's own value when the item that failed the step write is its own", async () => {
    const made = { at: new Date(NOW) };
    const { client, sent } = scriptedClient([{}, {}, ownItemComesBack]);
    const outcome = await store(client).begin(request());
    if (outcome.status !== 'acquired') throw new Error(outcome.status);
    expect(await outcome.lease.once('charge', async () => made)).toBe(made);
    expect(names(sent)).toEqual(['PutItemCommand', 'GetItemCommand', 'PutItemCommand']);
  });

  it("returns the winner's stored value when another run recorded the step first", async () => {
    const { client } = scriptedClient([
      {},
      {},
      (command: { input: PutItemCommandInput }) =>
        conditionFailed({ ...command.input.Item, writeId: { S: 'another-write' }, value: { S: '"theirs"' } }),
    ]);
    const outcome = await store(client).begin(request());
    if (outcome.status !== 'acquired') throw new Error(outcome.status);
    expect(await outcome.lease.once('charge', async () => 'mine')).toBe('theirs');
  });
});

describe('DynamoIdempotencyStore with a record of the wrong kind or a malformed record', () => {
  const stepItem = (over: Record<string, AttributeValue> = {}): Record<string, AttributeValue> => ({
    pk: { S: PK },
    recordType: { S: 'step' },
    status: { S: 'COMPLETED' },
    generation: { S: 'gen-x' },
    valueStored: { BOOL: true },
    value: { S: '1' },
    expiresAt: { N: String(NOW_S + 3600) },
    ...over,
  });

  it('throws a permanent IdempotencyRecordError when a job key holds a step record', async () => {
    const { client } = scriptedClient([conditionFailed(stepItem())]);
    const error = await store(client)
      .begin(request())
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(IdempotencyRecordError);
    expect(classifyError(error).kind).toBe('permanent');
    expect((error as IdempotencyRecordError).context).toMatchObject({
      pk: PK,
      expected: 'job',
      found: 'step',
    });
  });

  it('takes a job key whose step record of the wrong kind has expired, as if absent', async () => {
    const { client, sent } = scriptedClient([
      conditionFailed(stepItem({ expiresAt: { N: String(NOW_S - 1) } })),
      {},
    ]);
    expect((await store(client).begin(request())).status).toBe('acquired');
    expect((sent[1] as PutItemCommand).input.ConditionExpression).toBe(
      'attribute_not_exists(pk) OR expiresAt <= :0',
    );
  });

  it('throws a permanent IdempotencyRecordError when a step key holds a job record', async () => {
    const { client } = scriptedClient([{}, { Item: jobRecordToItem(record({ status: 'COMPLETED' })) }]);
    const outcome = await store(client).begin(request());
    if (outcome.status !== 'acquired') throw new Error(outcome.status);
    let ran = false;
    const error = await outcome.lease
      .once('charge', async () => {
        ran = true;
      })
      .catch((err: unknown) => err);
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(IdempotencyRecordError);
    expect(classifyError(error).kind).toBe('permanent');
    expect((error as Error).message).toMatch(/is a job record where a step record is expected/);
  });

  it('throws a permanent IdempotencyRecordError for a missing attribute or a stored result that is not JSON', async () => {
    const missing = jobRecordToItem(record());
    delete missing.leaseToken;
    const notJson = jobRecordToItem(
      record({ status: 'COMPLETED', resultStored: true, result: '{not json', resultBytes: 9 }),
    );
    for (const item of [missing, notJson]) {
      const { client } = scriptedClient([conditionFailed(item)]);
      const error = await store(client)
        .begin(request())
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(IdempotencyRecordError);
      expect(classifyError(error).kind).toBe('permanent');
    }
  });
});

describe('DynamoIdempotencyStore errors and options', () => {
  it('wraps throttling in a transient IdempotencyStoreError carrying the SDK error', async () => {
    const throttled = Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
      name: 'ThrottlingException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    const { client } = scriptedClient([throttled]);
    const error = await store(client)
      .begin(request())
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(IdempotencyStoreError);
    expect((error as Error).cause).toBe(throttled);
    expect((error as IdempotencyStoreError).context).toMatchObject({ operation: 'acquire', pk: PK });
    expect(classifyError(error).kind).toBe('transient');
  });

  it('falls back to a consistent GetItem when the failed condition carries no item', async () => {
    const completed = record({ status: 'COMPLETED', resultStored: true, result: '1', resultBytes: 1 });
    const { client, sent } = scriptedClient([conditionFailed(), { Item: jobRecordToItem(completed) }]);
    expect(await store(client).begin(request())).toMatchObject({ status: 'completed', result: 1 });
    expect(names(sent)).toEqual(['PutItemCommand', 'GetItemCommand']);
    expect((sent[1] as GetItemCommand).input.ConsistentRead).toBe(true);
  });

  it('lists every invalid option in one error', () => {
    expect(
      () =>
        new DynamoIdempotencyStore({
          tableName: '',
          maxResultBytes: MAX_STORABLE_RESULT_BYTES + 1,
          recordTtlSeconds: 0,
          busyRetryAfterMs: -1,
        }),
    ).toThrow(/tableName.*recordTtlSeconds.*maxResultBytes.*busyRetryAfterMs/);
  });

  it('refuses a request without a finite lease expiry (zero time left is a value, NaN is not)', async () => {
    const { client } = scriptedClient([]);
    await expect(store(client).begin(request({ leaseExpiresAtMs: Number.NaN }))).rejects.toThrow(JobError);
    await expect(store(client).begin(request({ leaseExpiresAtMs: NOW }))).rejects.toThrow(
      /unexpected command/,
    );
  });

  it('documents its defaults', () => {
    expect(IDEMPOTENCY_DEFAULTS).toEqual({
      recordTtlSeconds: 604_800,
      groupParkTtlSeconds: 1_209_600,
      maxResultBytes: 65_536,
      busyRetryAfterMs: 30_000,
      leaseMarginMs: 1_000,
      completedCacheSize: 1_000,
    });
  });
});

describe('idempotency keys', () => {
  it('scopes job keys by job type and hashes keys too long for a partition key', () => {
    expect(jobRecordKey('a', 'k')).toBe('a#k');
    expect(jobRecordKey('b', 'k')).not.toBe(jobRecordKey('a', 'k'));
    const long = jobRecordKey('a', 'é'.repeat(2000));
    expect(long).toMatch(/^a#%sha256:[0-9a-f]{64}$/);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(MAX_VERBATIM_JOB_KEY_BYTES);
    expect(() => jobRecordKey('a', '')).toThrow(JobError);
  });

  it('builds step keys under the job key and keeps them within 2,048 bytes', () => {
    expect(stepRecordKey('a#k', 'charge')).toBe('a#k#step#charge');
    const longest = stepRecordKey(
      jobRecordKey('a', 'x'.repeat(MAX_VERBATIM_JOB_KEY_BYTES - 2)),
      'y'.repeat(5000),
    );
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(2048);
  });

  it('derives stable, distinct idempotency keys per job and step', () => {
    const k = deriveIdempotencyKey('a', 'k', 'charge');
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(deriveIdempotencyKey('a', 'k', 'charge')).toBe(k);
    expect(deriveIdempotencyKey('a', 'k', 'refund')).not.toBe(k);
    expect(deriveIdempotencyKey('b', 'k', 'charge')).not.toBe(k);
  });
});

describe('record size bounds', () => {
  it('keeps the largest possible job record under the 400 KB item limit', () => {
    const worst = record({
      pk: `sha256:${'f'.repeat(64)}`.padEnd(MAX_VERBATIM_JOB_KEY_BYTES, 'x'),
      jobType: 'j'.repeat(MAX_TEXT_BYTES * 2),
      messageId: 'm'.repeat(MAX_TEXT_BYTES * 2),
      lastError: '€'.repeat(MAX_ERROR_BYTES),
      lastErrorKind: 'lease-expired',
      status: 'COMPLETED',
      resultStored: true,
      result: 'r'.repeat(MAX_STORABLE_RESULT_BYTES),
      resultBytes: MAX_STORABLE_RESULT_BYTES,
      resultOmittedReason: 'over-size-cap',
      endedAtMs: NOW,
      completedAtMs: NOW,
      firstFailureAtMs: NOW,
      lastFailureAtMs: NOW,
      interruptedAtMs: NOW,
    });
    expect(estimateItemBytes(jobRecordToItem(worst))).toBeLessThanOrEqual(DYNAMODB_MAX_ITEM_BYTES);
  });

  it('truncates UTF-8 text without splitting a character', () => {
    expect(truncateUtf8('a€b', 3)).toBe('a');
    expect(truncateUtf8('a€b', 4)).toBe('a€');
    expect(truncateUtf8('short', 100)).toBe('short');
  });
});

describe('CompletedKeyCache', () => {
  const entry = (resultJson?: string) => ({
    payloadHash: 'h',
    resultJson,
    resultStored: true,
    expiresAt: NOW_S + 60,
  });

  it('evicts the least recently used entry beyond its size', () => {
    const cache = new CompletedKeyCache(2);
    cache.set('a', entry());
    cache.set('b', entry());
    expect(cache.get('a', NOW)).toBeDefined(); // a is now the most recent
    cache.set('c', entry());
    expect(cache.get('b', NOW)).toBeUndefined();
    expect(cache.get('a', NOW)).toBeDefined();
    expect(cache.get('c', NOW)).toBeDefined();
    expect(cache.length).toBe(2);
  });

  it('drops entries whose record expired, skips large results, and can be off', () => {
    const cache = new CompletedKeyCache(10);
    cache.set('a', entry());
    expect(cache.get('a', (NOW_S + 60) * 1000)).toBeUndefined();
    cache.set('big', entry(`"${'x'.repeat(5000)}"`));
    expect(cache.get('big', NOW)).toBeUndefined();
    const off = new CompletedKeyCache(0);
    off.set('a', entry());
    expect(off.get('a', NOW)).toBeUndefined();
  });
});
