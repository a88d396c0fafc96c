/**
 * Every conditional write of the idempotency store recognises its own earlier success. Each
 * test lets one DynamoDB write reach dynalite and be applied, then drops its response with a
 * connection reset, so the AWS SDK sends the very same request again; the retry then fails its
 * condition on the store's own record. What a user would notice is asserted: the job runs once
 * and at once (not `busy`, never a false LeaseExpiredError), its writes are not "fenced", its
 * step value is stored. Runs the real worker on fauxqs (SQS) and dynalite (DynamoDB).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { payloadHash } from '../../lib/core/canonical-json.ts';
import { createEnvelope, type JobEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import type { BeginOutcome, IdempotencyGuard, Lease } from '../../lib/runtime/idempotency/guard.ts';
import { defaultJobKey, jobRecordKey, stepRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import type { LeaseExpiredPolicy } from '../../lib/runtime/job.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { type LossyDynamo, lossyDynamo } from '../factories/lossy-dynamo.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

let emulator: EmulatedSqs;
let db: DynaliteHandle;
let tableName: string;

beforeAll(async () => {
  [emulator, db] = await Promise.all([startEmulatedSqs(), startDynalite()]);
  tableName = await db.createTable();
});

afterAll(async () => {
  await Promise.all([emulator?.stop(), db?.stop()]);
});

/** Request matchers by operation and the record status or kind the request writes. */
const writes = {
  /** The acquisition (or takeover) PutItem of a job record. */
  acquire: (op: string, body: string) => op === 'PutItem' && body.includes('"status":{"S":"IN_PROGRESS"}'),
  /** The completing UpdateItem. */
  complete: (op: string, body: string) => op === 'UpdateItem' && body.includes('{"S":"COMPLETED"}'),
  /** The releasing UpdateItem after a transient failure. */
  release: (op: string, body: string) => op === 'UpdateItem' && body.includes('{"S":"RELEASED"}'),
  /** The UpdateItem after a permanent failure. */
  fail: (op: string, body: string) => op === 'UpdateItem' && body.includes('{"S":"FAILED"}'),
  /** The PutItem of a `once` step record. */
  step: (op: string, body: string) => op === 'PutItem' && body.includes('"recordType":{"S":"step"}'),
};

/** The store on `client`, wrapped to record what `begin` answered and what each lease write returned. */
function recordingGuard(client: DynamoDBClient) {
  const store = new DynamoIdempotencyStore({ tableName, client });
  const begins: BeginOutcome['status'][] = [];
  const leaseWrites: string[] = [];
  const wrap = (lease: Lease): Lease => ({
    get attempt() {
      return lease.attempt;
    },
    get firstFailureAtMs() {
      return lease.firstFailureAtMs;
    },
    complete: async (result) => {
      const write = await lease.complete(result);
      leaseWrites.push(`complete:${write}`);
      return write;
    },
    fail: async (error, kind) => {
      const write = await lease.fail(error, kind);
      leaseWrites.push(`fail-${kind}:${write}`);
      return write;
    },
    once: (step, fn) => lease.once(step, fn),
    idempotencyKey: (step) => lease.idempotencyKey(step),
  });
  const guard: IdempotencyGuard = {
    async begin(request) {
      const outcome = await store.begin(request);
      begins.push(outcome.status);
      if (outcome.status === 'acquired' || outcome.status === 'lease-expired') {
        return { ...outcome, lease: wrap(outcome.lease) };
      }
      return outcome;
    },
  };
  return { guard, begins, leaseWrites };
}

interface Setup {
  readonly queue: EmulatedQueue;
  readonly dlq: EmulatedQueue;
  readonly lossy: LossyDynamo;
  readonly recorded: ReturnType<typeof recordingGuard>;
  readonly handler: ReturnType<typeof createWorker>;
}

async function setup(jobs: AnyJob[]): Promise<Setup> {
  const queue = await emulator.createQueue('lost', false);
  const dlq = await emulator.createQueue('lost-dlq', false);
  const lossy = lossyDynamo(db.endpoint);
  const recorded = recordingGuard(lossy.client);
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  const handler = createWorker({
    jobs,
    sqs: emulator.sqs,
    idempotency: recorded.guard,
    random: () => 0, // backoff 0 s: a retried record is visible again at once
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: { JOBS_QUEUE_NAME: 'lost', JOBS_QUEUE_URL: queue.url, JOBS_DLQ_URL: dlq.url },
  });
  return { queue, dlq, lossy, recorded, handler };
}

const schema = z.object({ orderId: z.string() });
let counter = 0;
function envelopeOf(type: string): JobEnvelope<{ orderId: string }> {
  counter += 1;
  return createEnvelope({
    type,
    source: '/lost-response',
    id: `job-${counter}`,
    data: { orderId: `o-${counter}` },
  });
}

async function readJobRecord(type: string, envelope: JobEnvelope) {
  const out = await db.client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: { S: jobRecordKey(type, defaultJobKey(envelope.source, envelope.id)) } },
      ConsistentRead: true,
    }),
  );
  return out.Item;
}

describe('a lost response of a lease-taking PutItem (begin)', () => {
  for (const onLeaseExpired of ['rerun', 'dead-letter'] as LeaseExpiredPolicy[]) {
    it(`runs the job once, at once, as attempt 1 (onLeaseExpired: '${onLeaseExpired}')`, async () => {
      const attempts: number[] = [];
      const job = defineJob({
        type: `lost.begin-${onLeaseExpired}`,
        queue: 'lost',
        schema,
        idempotency: { onLeaseExpired },
        run: async (_data, ctx) => {
          attempts.push(ctx.attempt);
          return 'done';
        },
      });
      const s = await setup([job]);
      const envelope = envelopeOf(job.type);
      await emulator.send(s.queue, envelope);
      s.lossy.dropNextResponse(writes.acquire);

      const { response, delivered } = await emulator.deliver(s.queue, s.handler);
      expect(delivered).toBe(1);
      expect(s.lossy.dropped).toEqual(['PutItem']);
      expect(response.batchItemFailures).toEqual([]); // not `busy`
      expect(s.recorded.begins).toEqual(['acquired']);
      expect(attempts).toEqual([1]);
      expect(s.recorded.leaseWrites).toEqual(['complete:ok']);
      expect(await emulator.receive(s.dlq)).toEqual([]); // no LeaseExpiredError later either
      expect(await emulator.receive(s.queue)).toEqual([]);
      expect((await readJobRecord(job.type, envelope))?.status?.S).toBe('COMPLETED');
      // The cost of the lost response: the SDK's retry and one consistent read (dynalite returns no ALL_OLD item).
      expect(s.lossy.sent).toEqual(['PutItem', 'PutItem', 'GetItem', 'UpdateItem']);
    });
  }
});

describe('a lost response of a takeover PutItem (expired lease of a run that died)', () => {
  /** A run that took the lease of `envelope` and died: its lease ended a minute ago. */
  async function diedEarlier(type: string, envelope: JobEnvelope): Promise<void> {
    const store = new DynamoIdempotencyStore({ tableName, client: db.client });
    const outcome = await store.begin({
      jobType: type,
      key: defaultJobKey(envelope.source, envelope.id),
      payloadHash: payloadHash(envelope.data),
      leaseExpiresAtMs: Date.now() - 60_000,
      onLeaseExpired: 'rerun',
      messageId: 'the-delivery-that-died',
    });
    expect(outcome.status).toBe('acquired');
  }

  it("re-runs it once, at once, as attempt 2 (onLeaseExpired: 'rerun')", async () => {
    const attempts: number[] = [];
    const job = defineJob({
      type: 'lost.takeover-rerun',
      queue: 'lost',
      schema,
      run: async (_data, ctx) => {
        attempts.push(ctx.attempt);
      },
    });
    const s = await setup([job]);
    const envelope = envelopeOf(job.type);
    await diedEarlier(job.type, envelope);
    await emulator.send(s.queue, envelope);
    s.lossy.dropNextResponse(writes.acquire); // the first put fails its condition (400): the takeover is dropped

    const { response } = await emulator.deliver(s.queue, s.handler);
    expect(s.lossy.dropped).toEqual(['PutItem']);
    expect(response.batchItemFailures).toEqual([]);
    expect(s.recorded.begins).toEqual(['acquired']);
    expect(attempts).toEqual([2]);
    expect(s.recorded.leaseWrites).toEqual(['complete:ok']);
    expect(await emulator.receive(s.dlq)).toEqual([]);
    expect((await readJobRecord(job.type, envelope))?.attempt?.N).toBe('2');
  });

  it("dead-letters it once, at once, naming the run that died (onLeaseExpired: 'dead-letter')", async () => {
    let runs = 0;
    const job = defineJob({
      type: 'lost.takeover-dead-letter',
      queue: 'lost',
      schema,
      idempotency: { onLeaseExpired: 'dead-letter' },
      run: async () => {
        runs += 1;
      },
    });
    const s = await setup([job]);
    const envelope = envelopeOf(job.type);
    await diedEarlier(job.type, envelope);
    await emulator.send(s.queue, envelope);
    s.lossy.dropNextResponse(writes.acquire);

    const { response } = await emulator.deliver(s.queue, s.handler);
    expect(s.lossy.dropped).toEqual(['PutItem']);
    expect(response.batchItemFailures).toEqual([]); // not `busy`
    expect(s.recorded.begins).toEqual(['lease-expired']);
    expect(runs).toBe(0);
    const dead = await emulator.receive(s.dlq);
    expect(dead).toHaveLength(1);
    expect(dead[0]?.MessageAttributes?.ErrorName?.StringValue).toBe('LeaseExpiredError');
    expect(dead[0]?.MessageAttributes?.Attempts?.StringValue).toBe('1');
    expect(s.recorded.leaseWrites).toEqual(['fail-permanent:ok']);
  });
});

describe('a lost response of a lease-ending UpdateItem', () => {
  it('complete: ok, not fenced; a duplicate delivery is absorbed', async () => {
    let runs = 0;
    const job = defineJob({
      type: 'lost.complete',
      queue: 'lost',
      schema,
      run: async () => {
        runs += 1;
        return { receipt: 'r-1' };
      },
    });
    const s = await setup([job]);
    const envelope = envelopeOf(job.type);
    await emulator.send(s.queue, envelope);
    s.lossy.dropNextResponse(writes.complete);

    const first = await emulator.deliver(s.queue, s.handler);
    expect(s.lossy.dropped).toEqual(['UpdateItem']);
    expect(first.response.batchItemFailures).toEqual([]);
    expect(s.recorded.leaseWrites).toEqual(['complete:ok']);

    await emulator.send(s.queue, envelope);
    const second = await emulator.deliver(s.queue, s.handler);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(s.recorded.begins).toEqual(['acquired', 'completed']);
    expect(runs).toBe(1);
  });

  it('release after a transient failure: ok, not fenced; the retry runs as attempt 2', async () => {
    const attempts: number[] = [];
    const job = defineJob({
      type: 'lost.release',
      queue: 'lost',
      schema,
      retry: { maxAttempts: 3, baseDelaySeconds: 1 },
      run: async (_data, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new TransientError('upstream 503');
      },
    });
    const s = await setup([job]);
    const envelope = envelopeOf(job.type);
    await emulator.send(s.queue, envelope);
    s.lossy.dropNextResponse(writes.release);

    const first = await emulator.deliver(s.queue, s.handler);
    expect(s.lossy.dropped).toEqual(['UpdateItem']);
    expect(first.response.batchItemFailures).toHaveLength(1);
    expect(s.recorded.leaseWrites).toEqual(['fail-transient:ok']);

    const second = await emulator.deliver(s.queue, s.handler);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(s.recorded.begins).toEqual(['acquired', 'acquired']);
    expect(attempts).toEqual([1, 2]);
    expect(await emulator.receive(s.dlq)).toEqual([]);
  });

  it('fail after a permanent failure: ok, not fenced; dead-lettered once', async () => {
    const job = defineJob({
      type: 'lost.fail',
      queue: 'lost',
      schema,
      run: async () => {
        throw new PermanentError('order was cancelled');
      },
    });
    const s = await setup([job]);
    const envelope = envelopeOf(job.type);
    await emulator.send(s.queue, envelope);
    s.lossy.dropNextResponse(writes.fail);

    const { response } = await emulator.deliver(s.queue, s.handler);
    expect(s.lossy.dropped).toEqual(['UpdateItem']);
    expect(response.batchItemFailures).toEqual([]);
    expect(s.recorded.leaseWrites).toEqual(['fail-permanent:ok']);
    expect(await emulator.receive(s.dlq)).toHaveLength(1);
    expect((await readJobRecord(job.type, envelope))?.status?.S).toBe('FAILED');
  });
});

describe('a lost response of a once step PutItem', () => {
  it("gives the run the step's own value, stores it, and a retry gets the stored value without re-running the step", async () => {
    let charges = 0;
    const seen: Array<{ attempt: number; value: unknown; own: boolean }> = [];
    const job = defineJob({
      type: 'lost.step',
      queue: 'lost',
      schema,
      retry: { maxAttempts: 3, baseDelaySeconds: 1 },
      run: async (_data, ctx) => {
        let made: unknown;
        const value = await ctx.once('charge', async () => {
          charges += 1;
          // A JSON value: a Date here would not be stored at all (worker-step-values.test.ts).
          made = { chargeId: `ch-${charges}`, at: '2026-11-30T10:00:00.000Z' };
          return made;
        });
        seen.push({ attempt: ctx.attempt, value, own: value === made });
        if (ctx.attempt === 1) throw new TransientError('mail server 503 after the charge');
      },
    });
    const s = await setup([job]);
    const envelope = envelopeOf(job.type);
    await emulator.send(s.queue, envelope);
    s.lossy.dropNextResponse(writes.step);

    const first = await emulator.deliver(s.queue, s.handler);
    expect(s.lossy.dropped).toEqual(['PutItem']);
    expect(first.response.batchItemFailures).toHaveLength(1);
    // The first run gets the step function's own value (the very object), as documented.
    expect(seen[0]).toMatchObject({ attempt: 1, own: true });

    const stepItem = await db.client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: {
          pk: {
            S: stepRecordKey(jobRecordKey(job.type, defaultJobKey(envelope.source, envelope.id)), 'charge'),
          },
        },
        ConsistentRead: true,
      }),
    );
    expect(stepItem.Item?.valueStored?.BOOL).toBe(true);
    expect(JSON.parse(stepItem.Item?.value?.S ?? 'null')).toEqual({
      chargeId: 'ch-1',
      at: '2026-11-30T10:00:00.000Z',
    });

    const second = await emulator.deliver(s.queue, s.handler);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(charges).toBe(1);
    expect(seen[1]).toMatchObject({
      attempt: 2,
      value: { chargeId: 'ch-1', at: '2026-11-30T10:00:00.000Z' },
    });
    expect(await emulator.receive(s.dlq)).toEqual([]);
  });
});
