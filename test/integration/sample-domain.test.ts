/**
 * The sample jobs on the embedded DynamoDB emulator (dynalite) and the fake external service,
 * run with a hand-made JobContext (no worker, no queue): the domain writes are idempotent on
 * their own, out of stock is permanent, each step chains the next, and every side effect
 * happens once per job even when the job runs twice.
 */
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PermanentError } from '../../lib/core/errors.ts';
import { type FaultProxy, startFaultProxy } from '../../lib/local/fault-proxy.ts';
import type { EnqueueOptions, JobContext, JobDefinition } from '../../lib/runtime/job.ts';
import { DomainRepository, OutOfStockError } from '../../lib/sample/domain.ts';
import { ExternalApi } from '../../lib/sample/external-api.ts';
import { type ExternalService, NO_FAULTS, startExternalService } from '../../lib/sample/external-service.ts';
import { createSampleJobs, type SampleJobs } from '../../lib/sample/jobs.ts';
import {
  createNightlyInvoiceJobs,
  nightlySummaryServiceReference,
} from '../../lib/sample/nightly-invoices.ts';
import { runJob } from '../../lib/testing/run-job.ts';

const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: { createTableMs?: number }) => Server;

let db: Server;
let service: ExternalService;
let repository: DomainRepository;
let jobs: SampleJobs;
let table = 0;

interface TestContext extends JobContext {
  readonly enqueued: { type: string; data: unknown }[];
}

/** A JobContext like the worker's: `once` remembers completed steps per job id across runs. */
const onceStore = new Map<string, unknown>();
function context(jobId: string, attempt = 1): TestContext {
  const enqueued: { type: string; data: unknown }[] = [];
  return {
    signal: AbortSignal.timeout(10_000),
    attempt,
    jobId,
    source: '/test',
    partitionKey: 'u1',
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    lineage: {
      parentJobId: undefined,
      rootJobId: jobId,
      correlationId: undefined,
      parentJob: undefined,
      traceId: undefined,
      traceparent: undefined,
      tracestate: undefined,
    },
    enqueued,
    enqueue<D>(job: JobDefinition<D>, data: D, options?: EnqueueOptions) {
      enqueued.push({
        type: job.type,
        data,
        ...(options?.partitionKey === undefined ? {} : { partitionKey: options.partitionKey }),
      });
    },
    // The sample's jobs take no rate limit: a token is always granted.
    async rateLimit() {
      return { async throttled() {} };
    },
    async once<T>(step: string, fn: () => Promise<T>): Promise<T> {
      const key = `${jobId}/${step}`;
      if (onceStore.has(key)) return onceStore.get(key) as T;
      const value = await fn();
      onceStore.set(key, value);
      return value;
    },
    idempotencyKey: (step: string) => `${jobId}/${step}`,
    startBatch() {
      throw new Error('the sample domain jobs start no batch');
    },
    batch: undefined,
  };
}

beforeAll(async () => {
  db = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => db.listen(0, '127.0.0.1', () => resolve()));
});

afterEach(async () => {
  await service?.close();
});

afterAll(async () => {
  await new Promise<void>((resolve) => db?.close(() => resolve()));
});

beforeEach(async () => {
  service = await startExternalService({ latencyMs: { min: 0, max: 0 } });
  onceStore.clear();
  const raw = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(db.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const tableName = `app-${++table}`;
  await raw.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  repository = new DomainRepository({
    tableName,
    client: DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } }),
  });
  const deps = { repository, api: new ExternalApi({ baseUrl: service.url }), now: Date.now };
  jobs = createSampleJobs(() => deps);
  await repository.putStock('sku-1', 2);
  await repository.putUser({ userId: 'u1', email: 'u1@example.com', name: 'User One' });
  for (const [i, bookingId] of ['b1', 'b2', 'b3'].entries()) {
    await repository.putBooking({
      bookingId,
      userId: 'u1',
      sku: 'sku-1',
      quantity: 1,
      amountCents: 1000,
      ordinal: i + 1,
      status: 'PENDING',
    });
  }
});

const ref = (bookingId: string) => ({ userId: 'u1', bookingId });

describe('booking chain on the domain table', () => {
  it('reserve → confirm → invoice, each enqueueing the next, the invoice also the email', async () => {
    const reserve = context('r1');
    await jobs.reserveInventory.run(ref('b1'), reserve);
    expect(reserve.enqueued).toEqual([{ type: 'booking.confirm-reservation', data: ref('b1') }]);
    const confirm = context('c1');
    await jobs.confirmReservation.run(ref('b1'), confirm);
    expect(confirm.enqueued).toEqual([{ type: 'booking.issue-invoice', data: ref('b1') }]);
    const invoice = context('i1');
    await jobs.issueInvoice.run(ref('b1'), invoice);
    expect(invoice.enqueued).toEqual([
      { type: 'notifications.send-email', data: { ...ref('b1'), template: 'booking-confirmed' } },
    ]);
    const booking = await repository.getBooking('u1', 'b1');
    expect(booking.status).toBe('INVOICED');
    expect(booking.invoiceId).toMatch(/^inv_/);
    expect((await repository.getStock('sku-1'))?.stock).toBe(1);
    const log = await repository.getOrderLog('u1');
    expect(log.entries.map((e) => e.step)).toEqual(['reserve', 'confirm', 'invoice']);
  });

  it('a reservation that runs twice takes stock once and logs once', async () => {
    await jobs.reserveInventory.run(ref('b1'), context('r1'));
    const again = context('r1', 2);
    const result = await jobs.reserveInventory.run(ref('b1'), again);
    expect(result.alreadyDone).toBe(true);
    expect(again.enqueued).toHaveLength(1);
    expect(await repository.getStock('sku-1')).toMatchObject({ stock: 1, reservations: ['b1'] });
    expect((await repository.getOrderLog('u1')).entries).toHaveLength(1);
  });

  it('out of stock is a permanent OutOfStockError and takes nothing', async () => {
    await jobs.reserveInventory.run(ref('b1'), context('r1'));
    await jobs.reserveInventory.run(ref('b2'), context('r2'));
    const third = context('r3');
    const failure = jobs.reserveInventory.run(ref('b3'), third);
    await expect(failure).rejects.toBeInstanceOf(OutOfStockError);
    await expect(failure).rejects.toBeInstanceOf(PermanentError);
    expect(third.enqueued).toEqual([]);
    expect(await repository.getStock('sku-1')).toMatchObject({ stock: 0 });
    expect((await repository.getBooking('u1', 'b3')).status).toBe('PENDING');
  });

  it('a missing booking is permanent', async () => {
    await expect(jobs.reserveInventory.run(ref('nope'), context('x'))).rejects.toBeInstanceOf(PermanentError);
  });

  it('confirming a booking that was never reserved is permanent', async () => {
    await expect(jobs.confirmReservation.run(ref('b1'), context('c'))).rejects.toBeInstanceOf(PermanentError);
  });

  it('an invoice whose response was lost is issued once: the retry gets the stored answer', async () => {
    await jobs.reserveInventory.run(ref('b1'), context('r1'));
    await jobs.confirmReservation.run(ref('b1'), context('c1'));
    service.setFaults({ timeout: 1 });
    const api = new ExternalApi({ baseUrl: service.url, timeoutMs: 100 });
    const impatient = createSampleJobs(() => ({ repository, api, now: Date.now }));
    await expect(impatient.issueInvoice.run(ref('b1'), context('i1'))).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    service.setFaults(NO_FAULTS);
    await jobs.issueInvoice.run(ref('b1'), context('i1', 2));
    const stats = service.stats();
    expect(stats.sideEffectsByReference).toEqual({ 'invoice:b1': 1 });
    expect(stats.replays).toBe(1);
    const log = await repository.getOrderLog('u1');
    expect(log.entries.at(-1)).toMatchObject({ step: 'invoice', attempt: 2 });
  });

  it('payment capture sends its idempotency key and records the payment once', async () => {
    await jobs.capturePayment.run(ref('b1'), context('p1'));
    await jobs.capturePayment.run(ref('b1'), context('p1', 2));
    const booking = await repository.getBooking('u1', 'b1');
    expect(booking.paymentId).toMatch(/^pay_/);
    expect(booking.paymentAttempt).toBe(1);
    expect(service.stats().sideEffectsByKey).toEqual({ 'payment:p1/capture': 1 });
  });

  it('the email reloads the address and is sent once', async () => {
    const data = { ...ref('b2'), template: 'booking-confirmed' as const };
    await jobs.sendEmail.run(data, context('e1'));
    await jobs.sendEmail.run(data, context('e1', 2));
    expect((await repository.getBooking('u1', 'b2')).emailId).toMatch(/^msg_/);
    expect(service.stats().sideEffectsByReference).toEqual({ 'email:b2:booking-confirmed': 1 });
  });

  it('the hold expiry job releases a held hold once, records every run, and releases nothing on a confirmed hold', async () => {
    const put = (holdId: string) =>
      repository.putHold({ holdId, userId: 'u1', bookingId: 'b1', status: 'HELD', heldAtMs: 1 });
    await put('h-expire');
    await put('h-confirm');
    const expire = jobs.expirePaymentHold;
    expect(await expire.run({ userId: 'u1', holdId: 'h-expire' }, context('hold-h-expire'))).toEqual({
      holdId: 'h-expire',
      status: 'EXPIRED',
    });
    // Run again (a retry after a failure past the release): nothing changes but the run log.
    await expire.run({ userId: 'u1', holdId: 'h-expire' }, context('hold-h-expire', 2));
    expect(await repository.confirmHold('u1', 'h-confirm', 5)).toBe(true);
    expect(await expire.run({ userId: 'u1', holdId: 'h-confirm' }, context('hold-h-confirm'))).toEqual({
      holdId: 'h-confirm',
      status: 'CONFIRMED',
    });
    expect(await repository.confirmHold('u1', 'h-expire', 6)).toBe(false);
    const holds = new Map((await repository.listHolds()).map((h) => [h.holdId, h]));
    expect(holds.get('h-expire')).toMatchObject({
      status: 'EXPIRED',
      runs: [{ attempt: 1 }, { attempt: 2 }],
    });
    expect(holds.get('h-confirm')).toMatchObject({
      status: 'CONFIRMED',
      confirmedAtMs: 5,
      runs: [{ attempt: 1 }],
    });
    await expect(
      jobs.expireHold.run({ userId: 'u1', holdId: 'nope' }, context('hold-nope')),
    ).rejects.toMatchObject({ name: 'HoldNotFoundError' });
    expect(jobs.expireHold.queue).toBe('booking');
    expect(expire.queue).toBe('payments');
  });

  it('snapshot groups stocks, users, bookings and order logs', async () => {
    await jobs.reserveInventory.run(ref('b1'), context('r1'));
    const snapshot = await repository.snapshot();
    expect(snapshot.stocks).toEqual([{ sku: 'sku-1', stock: 1, reservations: ['b1'] }]);
    expect(snapshot.users).toHaveLength(1);
    expect(snapshot.bookings).toHaveLength(3);
    expect(snapshot.orderLogs).toEqual([
      { userId: 'u1', entries: [expect.objectContaining({ bookingId: 'b1', step: 'reserve' })] },
    ]);
  });
});

describe('the nightly invoice run: a recurring job starting a batch (lib/sample/nightly-invoices.ts)', () => {
  const nowMs = Date.parse('2026-12-07T22:00:00Z');
  const firingId = 'nightly-invoices@2026-12-07T22:00:00Z';
  const nightly = () =>
    createNightlyInvoiceJobs(
      () => ({ repository, api: new ExternalApi({ baseUrl: service.url }), now: () => nowMs }),
      jobs,
    );
  const booking = (
    userId: string,
    bookingId: string,
    ordinal: number,
    status: 'CONFIRMED' | 'INVOICED',
    minutesAgo: number,
  ) =>
    repository.putBooking({
      bookingId,
      userId,
      sku: 'sku-1',
      quantity: 1,
      amountCents: 1000 * ordinal,
      ordinal,
      status,
      confirmedAtMs: nowMs - minutesAgo * 60_000,
    });

  it('a firing starts one batch: a user job per user in its own group, the summary as completion job; the same firing again starts the same batch', async () => {
    await repository.putUser({ userId: 'u2', email: 'u2@example.com', name: 'User Two' });
    const { issueNightlyInvoices, userInvoices, nightlySummary } = nightly();
    const first = await runJob(issueNightlyInvoices, { graceMinutes: 60 }, { jobId: firingId });
    expect(first.status).toBe('completed');
    if (first.status !== 'completed') return;
    expect(first.batches).toHaveLength(1);
    const [started] = first.batches;
    const confirmedBeforeMs = nowMs - 60 * 60_000;
    expect(started?.spec.children.map((c) => [c.job.type, c.data, c.options?.partitionKey])).toEqual([
      [userInvoices.type, { runId: firingId, userId: 'u1', confirmedBeforeMs }, 'u1'],
      [userInvoices.type, { runId: firingId, userId: 'u2', confirmedBeforeMs }, 'u2'],
    ]);
    expect(started?.spec.completion.job.type).toBe(nightlySummary.type);
    expect(started?.spec.completion.data).toEqual({ runId: firingId });
    expect(started?.spec.onChildDeadLettered).toBe('complete-with-failures');
    expect(first.result).toEqual({ runId: firingId, batchId: started?.batchId, users: 2 });
    // The second copy of the firing (same envelope id) that got past the store, or a retry: the
    // same batch id, the same users and cut-off (chosen once), so no second batch or summary.
    const again = await runJob(
      issueNightlyInvoices,
      { graceMinutes: 60 },
      {
        jobId: firingId,
        attempt: 2,
        completedSteps: Object.fromEntries(first.steps.map((step) => [step.name, step.value])),
      },
    );
    expect(again.status === 'completed' && again.batches).toEqual(first.batches);
    // Another firing (tomorrow's) is another batch.
    const tomorrow = await runJob(issueNightlyInvoices, { graceMinutes: 60 }, { jobId: `${firingId}x` });
    expect(tomorrow.batches[0]?.batchId).not.toBe(started?.batchId);
    // Each run is in the run log: the report's evidence that a firing ran once.
    expect(await repository.listJobRuns('booking.issue-nightly-invoices')).toEqual([
      { jobId: firingId, atMs: nowMs, attempt: 1, runId: expect.any(String) },
      { jobId: firingId, atMs: nowMs, attempt: 2, runId: expect.any(String) },
      { jobId: `${firingId}x`, atMs: nowMs, attempt: 1, runId: expect.any(String) },
    ]);
    expect(issueNightlyInvoices.schema['~standard'].validate({ graceMinutes: -1 })).toHaveProperty('issues');
  });

  it("a user's job invoices the bookings confirmed before the cut-off and not invoiced, in order, once, with their emails, and returns the statement", async () => {
    // b1..b3 of the shared setup are PENDING; these are u1's too.
    await booking('u1', 'late-1', 4, 'CONFIRMED', 180);
    await booking('u1', 'late-2', 5, 'CONFIRMED', 61);
    await booking('u1', 'fresh', 6, 'CONFIRMED', 10); // its chain is still on it
    await booking('u1', 'done', 7, 'INVOICED', 300);
    const { userInvoices } = nightly();
    const data = { runId: firingId, userId: 'u1', confirmedBeforeMs: nowMs - 60 * 60_000 };
    const run = await runJob(userInvoices, data, { jobId: 'child-0', partitionKey: 'u1' });
    expect(run.status === 'completed' && run.result).toEqual({
      userId: 'u1',
      invoicedNow: 2,
      invoices: 3,
      amountCents: 4000 + 5000 + 7000,
    });
    expect(run.children.map((c) => [c.type, c.data])).toEqual([
      ['notifications.send-email', { userId: 'u1', bookingId: 'late-1', template: 'booking-confirmed' }],
      ['notifications.send-email', { userId: 'u1', bookingId: 'late-2', template: 'booking-confirmed' }],
    ]);
    expect((await repository.getBooking('u1', 'fresh')).status).toBe('CONFIRMED');
    expect((await repository.getBooking('u1', 'late-1')).status).toBe('INVOICED');
    expect((await repository.getOrderLog('u1')).entries.map((e) => [e.bookingId, e.step])).toEqual([
      ['late-1', 'invoice'],
      ['late-2', 'invoice'],
    ]);
    // A retry (the lease lost after the invoices): the same bookings, no second invoice, the same emails.
    const retry = await runJob(userInvoices, data, {
      jobId: 'child-0',
      partitionKey: 'u1',
      attempt: 2,
      completedSteps: Object.fromEntries(run.steps.map((step) => [step.name, step.value])),
    });
    expect(retry.status === 'completed' && retry.result).toMatchObject({ invoicedNow: 2, invoices: 3 });
    expect(retry.children.map((c) => c.id)).toEqual(run.children.map((c) => c.id));
    expect(service.stats().sideEffectsByReference).toEqual({ 'invoice:late-1': 1, 'invoice:late-2': 1 });
  });

  it("the summary reads every user job's outcome and sends one email, once", async () => {
    const { nightlySummary } = nightly();
    const outcome = (index: number, status: 'succeeded' | 'dead-lettered', result?: unknown) => ({
      index,
      childId: `c-${index}`,
      jobType: 'billing.user-invoices',
      status,
      result,
      resultStored: result !== undefined,
      reason: status === 'dead-lettered' ? 'MaxAttemptsExceeded' : undefined,
      error: undefined,
    });
    const batch = {
      id: 'batch-1',
      total: 3,
      succeeded: 2,
      deadLettered: 1,
      async *children() {
        yield outcome(0, 'succeeded', { userId: 'u1', invoicedNow: 2, invoices: 3, amountCents: 16_000 });
        yield outcome(1, 'succeeded', { userId: 'u2', invoicedNow: 0, invoices: 1, amountCents: 1_000 });
        yield outcome(2, 'dead-lettered');
      },
    };
    const run = await runJob(nightlySummary, { runId: firingId }, { jobId: 'summary', batch });
    expect(run.status === 'completed' && run.result).toMatchObject({
      runId: firingId,
      users: 2,
      failed: 1,
      invoicedNow: 2,
      amountCents: 17_000,
    });
    await runJob(nightlySummary, { runId: firingId }, { jobId: 'summary', batch, attempt: 2 });
    expect(service.stats().sideEffectsByReference).toEqual({
      [nightlySummaryServiceReference(firingId)]: 1,
    });
    const notCompletion = await runJob(nightlySummary, { runId: firingId }, { jobId: 'x' });
    expect(notCompletion.status === 'failed' && notCompletion.next).toBe('dead-letter');
  });
});

/**
 * The run logs the soak's report counts runs from (lib/sample/report/schedules.ts, "each job ran
 * once") behind the fault proxy: a log write DynamoDB applied whose response was lost (500), which
 * the SDK sends again, must log its run once; two runs must still log twice. Found by the moto
 * soak: a hold's log showed two identical first-attempt entries (same atMs) of one run.
 */
describe('run logs when a DynamoDB response is lost', () => {
  let proxy: FaultProxy;
  let faulty: DomainRepository;
  let faultyJobs: SampleJobs;

  beforeEach(async () => {
    proxy = await startFaultProxy({ target: `http://127.0.0.1:${(db.address() as AddressInfo).port}` });
    const raw = new DynamoDBClient({
      endpoint: proxy.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    faulty = new DomainRepository({
      tableName: repository.tableName,
      client: DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } }),
    });
    faultyJobs = createSampleJobs(() => ({
      repository: faulty,
      api: new ExternalApi({ baseUrl: service.url }),
      now: Date.now,
    }));
    await repository.putHold({ holdId: 'h1', userId: 'u1', bookingId: 'b1', status: 'HELD', heldAtMs: 1 });
  });

  afterEach(async () => {
    await proxy?.close();
  });

  const holdRuns = async () => (await repository.listHolds()).find((h) => h.holdId === 'h1');

  it('a hold expiry run whose log write was applied and its response lost, twice (each retried by the SDK), is logged once and releases the hold', async () => {
    proxy.injectNext('dynamodbResponseLost', 2);
    const data = { userId: 'u1', holdId: 'h1' };
    expect(await faultyJobs.expirePaymentHold.run(data, context('hold-h1'))).toEqual({
      holdId: 'h1',
      status: 'EXPIRED',
    });
    expect(proxy.stats().faults.dynamodbResponseLost).toBe(2);
    expect(await holdRuns()).toMatchObject({ status: 'EXPIRED', runs: [{ jobId: 'hold-h1', attempt: 1 }] });
  });

  it('two runs of one hold expiry job as first attempts are still two entries (the report sees a real duplicate)', async () => {
    const data = { userId: 'u1', holdId: 'h1' };
    await faultyJobs.expirePaymentHold.run(data, context('hold-h1'));
    await faultyJobs.expirePaymentHold.run(data, context('hold-h1'));
    expect((await holdRuns())?.runs).toMatchObject([{ attempt: 1 }, { attempt: 1 }]);
  });

  it('a missing hold is still HoldNotFoundError when the log write lost its response', async () => {
    proxy.injectNext('dynamodbResponseLost', 1);
    await expect(
      faultyJobs.expirePaymentHold.run({ userId: 'u1', holdId: 'nope' }, context('hold-nope')),
    ).rejects.toMatchObject({ name: 'HoldNotFoundError' });
  });

  it('a nightly run whose run-log write lost its response is logged once', async () => {
    proxy.injectNext('dynamodbResponseLost', 1);
    const { issueNightlyInvoices } = createNightlyInvoiceJobs(
      () => ({ repository: faulty, api: new ExternalApi({ baseUrl: service.url }), now: Date.now }),
      faultyJobs,
    );
    await runJob(
      issueNightlyInvoices,
      { graceMinutes: 60 },
      { jobId: 'nightly-invoices@2026-12-07T22:00:00Z' },
    );
    expect(proxy.stats().faults.dynamodbResponseLost).toBe(1);
    expect(await repository.listJobRuns('booking.issue-nightly-invoices')).toMatchObject([{ attempt: 1 }]);
  });
});
