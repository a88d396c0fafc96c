import { describe, expect, it } from 'vitest';
import type { Booking, DomainSnapshot, OrderLogEntry } from '../../lib/sample/domain.ts';
import {
  addEmfMetrics,
  badMessageBody,
  type CollectedDeadLetter,
  jobKey,
  planWorkload,
  reconcile,
  resolveWorkloadOptions,
  type SentLedger,
  SOLD_OUT_SKU,
} from '../../lib/sample/workload.ts';

const T0 = 1_700_000_000_000;

describe('planWorkload', () => {
  it('plans users × bookings in send order, with the sold-out bookings and malformed messages', () => {
    const plan = planWorkload({ users: 4, bookingsPerUser: 3, outOfStock: 2, malformed: 3, seed: 5 });
    expect(plan.users.map((u) => u.userId)).toEqual(['u-1', 'u-2', 'u-3', 'u-4']);
    expect(plan.bookings).toHaveLength(12);
    // Round by round: every user's first booking, then the second...
    expect(plan.bookings.slice(0, 4).map((b) => b.ordinal)).toEqual([1, 1, 1, 1]);
    expect(plan.bookings.filter((b) => b.sku === SOLD_OUT_SKU)).toHaveLength(2);
    expect(plan.soldOut.size).toBe(2);
    expect(plan.badMessages.map((m) => [m.queue, m.kind])).toEqual([
      ['payments', 'bad JSON'],
      ['notifications', 'schema failure'],
      ['booking', 'unknown job type'],
    ]);
    const [json, schema, type] = plan.badMessages.map((m) => badMessageBody(m));
    expect(() => JSON.parse(json ?? '')).toThrow();
    expect(JSON.parse(schema ?? '')).toMatchObject({
      type: 'notifications.send-email',
      data: { userId: 'u-1' },
    });
    expect(JSON.parse(type ?? '')).toMatchObject({
      type: 'booking.cancel-everything',
      partitionkey: 'bad-3',
    });
    expect(plan.badMessages[2]?.groupId).toBe('bad-3');
    // Stock never runs out on the regular SKUs.
    const stock = new Map(plan.stocks.map((s) => [s.sku, s.stock]));
    for (const b of plan.bookings) {
      if (b.sku !== SOLD_OUT_SKU) expect(stock.get(b.sku)).toBeGreaterThanOrEqual(12 * 3);
    }
  });

  it('is deterministic per seed', () => {
    expect(planWorkload({ seed: 9, users: 20 })).toEqual(planWorkload({ seed: 9, users: 20 }));
    expect(planWorkload({ seed: 9, users: 20 }).bookings).not.toEqual(
      planWorkload({ seed: 10, users: 20 }).bookings,
    );
  });

  it('refuses bad options, naming each', () => {
    expect(() => resolveWorkloadOptions({ users: 0, bookingsPerUser: 1.5 })).toThrow(
      /users must .*bookingsPerUser must/,
    );
    expect(() => resolveWorkloadOptions({ users: 1, bookingsPerUser: 1, outOfStock: 2 })).toThrow(/exceeds/);
    expect(resolveWorkloadOptions()).toEqual({
      users: 100,
      bookingsPerUser: 3,
      seed: 1,
      outOfStock: 2,
      malformed: 3,
      producerDuplicates: 0,
      batches: 0,
    });
  });

  it('picks the payments to resend among bookings that get a payment', () => {
    const plan = planWorkload({ users: 5, bookingsPerUser: 2, outOfStock: 3, producerDuplicates: 4 });
    expect(plan.resend).toHaveLength(4);
    expect(new Set(plan.resend).size).toBe(4);
    for (const id of plan.resend) expect(plan.soldOut.has(id)).toBe(false);
  });
});

describe('reconcile', () => {
  const plan = planWorkload({ users: 2, bookingsPerUser: 2, outOfStock: 1, malformed: 1, seed: 1 });
  const soldOut = [...plan.soldOut][0] ?? '';
  const good = plan.bookings.filter((b) => !plan.soldOut.has(b.bookingId));
  const ledger: SentLedger = {
    sentAtMs: new Map([
      ...plan.bookings.map((b) => [jobKey('booking.reserve-inventory', b.bookingId), T0] as const),
      ...good.map((b) => [jobKey('payments.capture', b.bookingId), T0] as const),
      ['bad:1', T0],
    ]),
    badMessageIds: new Map([['m-bad', 'bad:1']]),
    resent: 0,
  };
  const entry = (b: Booking, step: OrderLogEntry['step'], atMs: number, attempt = 1): OrderLogEntry => ({
    bookingId: b.bookingId,
    ordinal: b.ordinal,
    step,
    atMs,
    attempt,
  });
  const done = (b: Booking): Booking => ({
    ...b,
    status: 'INVOICED',
    paymentId: 'p',
    paymentAtMs: T0 + 50,
    paymentAttempt: 2,
    emailId: 'm',
    emailAtMs: T0 + 400,
  });
  const fullSnapshot: DomainSnapshot = {
    stocks: [],
    users: [],
    bookings: plan.bookings.map((b) => (plan.soldOut.has(b.bookingId) ? b : done(b))),
    orderLogs: plan.users.map((u) => ({
      userId: u.userId,
      entries: good
        .filter((b) => b.userId === u.userId)
        .flatMap((b) => [
          entry(b, 'reserve', T0 + 100),
          entry(b, 'confirm', T0 + 200),
          entry(b, 'invoice', T0 + 300, 3),
        ]),
    })),
  };
  const deadLetters: CollectedDeadLetter[] = [
    {
      queue: 'booking',
      messageId: 'd1',
      body: JSON.stringify({ type: 'booking.reserve-inventory', data: { userId: 'x', bookingId: soldOut } }),
      attributes: { ErrorName: 'OutOfStockError', ErrorReason: 'OutOfStockError', Attempts: '1' },
    },
    {
      queue: 'payments',
      messageId: 'd2',
      body: '{"specversion":"1.0",',
      attributes: {
        ErrorName: 'EnvelopeError',
        ErrorReason: 'EnvelopeError',
        Attempts: '1',
        SourceMessageId: 'm-bad',
      },
    },
  ];

  it('accounts for every job of a finished run: chains, payments, emails, dead letters', () => {
    const r = reconcile({
      plan,
      ledger,
      snapshot: fullSnapshot,
      deadLetters,
      faultsByReference: {},
      final: true,
    });
    // 3 good bookings × (reserve, confirm, invoice, email, capture) + sold-out reserve + 1 malformed.
    expect(r.jobs).toHaveLength(3 * 5 + 1 + 1);
    expect(r.completed).toBe(15);
    expect(r.deadLettered).toBe(2);
    expect(r.pending).toBe(0);
    expect(r.projectedTotal).toBe(17);
    expect(r.deadLetters.map((d) => d.expectedBecause)).toEqual([
      'out of stock (deliberate)',
      'deliberate malformed message (bad JSON)',
    ]);
    const invoice = r.jobs.find((j) => j.type === 'booking.issue-invoice');
    // A child's latency runs from its parent's completion.
    expect(invoice).toMatchObject({
      origin: 'enqueued',
      startedAtMs: T0 + 200,
      completedAtMs: T0 + 300,
      attempts: 3,
    });
    expect(invoice?.sideEffectReference).toMatch(/^invoice:/);
    expect(r.jobs.find((j) => j.type === 'payments.capture')).toMatchObject({ attempts: 2, startedAtMs: T0 });
  });

  it('marks missing jobs lost once final, and expects no child of a job that never completed', () => {
    const partialSnapshot: DomainSnapshot = { ...fullSnapshot, orderLogs: [], bookings: plan.bookings };
    const running = reconcile({
      plan,
      ledger,
      snapshot: partialSnapshot,
      deadLetters: [],
      faultsByReference: {},
      final: false,
    });
    expect(running.jobs).toEqual([]);
    // 4 reserves + 3 captures + 1 malformed pending; 4 chains of 3 more projected.
    expect(running.pending).toBe(8);
    expect(running.projectedTotal).toBe(8 + 4 * 3);
    const final = reconcile({
      plan,
      ledger,
      snapshot: partialSnapshot,
      deadLetters: [],
      faultsByReference: {},
      final: true,
    });
    expect(final.jobs.every((j) => j.state === 'lost')).toBe(true);
    expect(final.jobs.some((j) => j.type === 'booking.confirm-reservation')).toBe(false);
  });

  it('marks pending jobs unfinished, not lost, when the deadline passed before the queues drained', () => {
    const partialSnapshot: DomainSnapshot = { ...fullSnapshot, orderLogs: [], bookings: plan.bookings };
    const atDeadline = reconcile({
      plan,
      ledger,
      snapshot: partialSnapshot,
      deadLetters: [],
      faultsByReference: {},
      final: true,
      timedOut: true,
    });
    expect(atDeadline.jobs).toHaveLength(8);
    expect(atDeadline.jobs.every((j) => j.state === 'unfinished')).toBe(true);
  });

  it('explains an injected 400 only for the job it was injected into', () => {
    const b = good[0] as Booking;
    const dl: CollectedDeadLetter = {
      queue: 'payments',
      messageId: 'd3',
      body: JSON.stringify({ type: 'payments.capture', data: { userId: b.userId, bookingId: b.bookingId } }),
      attributes: { ErrorName: 'ExternalApiError', ErrorReason: 'HTTP 400', Attempts: '1' },
    };
    const snapshot = {
      ...fullSnapshot,
      bookings: fullSnapshot.bookings.map((x) => ({ ...x, paymentId: undefined })),
    };
    const explained = reconcile({
      plan,
      ledger,
      snapshot,
      deadLetters: [dl],
      faultsByReference: { [`payment:${b.bookingId}`]: ['badRequest'] },
      final: true,
    });
    expect(explained.deadLetters).toEqual([expect.objectContaining({ expectedBecause: 'injected 400' })]);
    const unexplained = reconcile({
      plan,
      ledger,
      snapshot,
      deadLetters: [dl],
      faultsByReference: {},
      final: true,
    });
    expect(unexplained.deadLetters[0]?.expectedBecause).toBeUndefined();
  });

  it('accounts every dead letter of a job sent twice', () => {
    const b = good[0] as Booking;
    const dl = (messageId: string): CollectedDeadLetter => ({
      queue: 'payments',
      messageId,
      body: JSON.stringify({ type: 'payments.capture', data: { userId: b.userId, bookingId: b.bookingId } }),
      attributes: { ErrorName: 'ExternalApiError', ErrorReason: 'HTTP 400', Attempts: '1' },
    });
    const r = reconcile({
      plan,
      ledger,
      snapshot: fullSnapshot,
      deadLetters: [dl('a'), dl('b')],
      faultsByReference: { [`payment:${b.bookingId}`]: ['badRequest', 'badRequest'] },
      final: true,
    });
    expect(r.jobs.filter((j) => j.key === jobKey('payments.capture', b.bookingId))).toHaveLength(1);
    expect(r.deadLetters.map((d) => d.expectedBecause)).toEqual(['injected 400', 'injected 400']);
  });

  it('keeps a dead letter that matches no job, unexplained', () => {
    const stray: CollectedDeadLetter = { queue: 'booking', messageId: 'x', body: 'junk', attributes: {} };
    const r = reconcile({
      plan,
      ledger,
      snapshot: fullSnapshot,
      deadLetters: [stray],
      faultsByReference: {},
      final: true,
    });
    expect(r.deadLetters).toEqual([{ queue: 'booking' }]);
  });
});

describe('addEmfMetrics', () => {
  it('sums the counts of EMF blobs and ignores durations and other lines', () => {
    const blob = (values: Record<string, number | number[]>) =>
      JSON.stringify({
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [
            {
              Namespace: 'SqsJobs',
              Dimensions: [['Queue'], ['Queue', 'JobType']],
              Metrics: Object.keys(values).map((Name) => ({
                Name,
                Unit: Name === 'JobDuration' ? 'Milliseconds' : 'Count',
              })),
            },
          ],
        },
        Queue: 'payments',
        JobType: 'payments.capture',
        ...values,
      });
    const sums: Record<string, number> = {};
    addEmfMetrics(blob({ JobCompleted: 3, JobDuration: [12, 30] }), sums);
    addEmfMetrics(blob({ JobCompleted: 2, JobDuplicateAbsorbed: 1 }), sums);
    addEmfMetrics('{"level":"INFO","message":"job completed"}', sums);
    addEmfMetrics('not json {"_aws"', sums);
    expect(sums).toEqual({ JobCompleted: 5, JobDuplicateAbsorbed: 1 });
  });
});
