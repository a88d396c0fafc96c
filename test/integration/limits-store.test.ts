/**
 * The flow-control store on dynalite: concurrency slots (limit, release, expiry with the lease,
 * a holder's token fenced) and rate buckets (tokens, waits, shared by instances; the adaptive
 * rate falling under sustained throttling and rising after, on an injected clock); and the
 * idempotency lease's hand-back after such a wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineRateLimit } from '../../lib/runtime/limits/rate-limit.ts';
import { LimitStore } from '../../lib/runtime/limits/store.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

let db: DynaliteHandle;
let tableName: string;
beforeAll(async () => {
  db = await startDynalite();
  tableName = await db.createTable();
});
afterAll(async () => {
  await db?.stop();
});

function store(clock: { now: number }) {
  return new LimitStore({ tableName, client: db.client, now: () => clock.now });
}

describe('concurrency slots', () => {
  it('grants `limit` slots of a key, refuses the next until one is released, and keys are independent', async () => {
    const clock = { now: 1_000_000 };
    const { slots } = store(clock);
    const request = { name: 'reports', key: 'tenant-a', limit: 2, expiresAtMs: clock.now + 30_000 };
    const first = await slots.acquire(request);
    const second = await slots.acquire(request);
    expect([first.status, second.status]).toEqual(['acquired', 'acquired']);
    const third = await slots.acquire(request);
    expect(third).toEqual({ status: 'full', holders: 2, nextExpiryMs: clock.now + 30_000 });
    expect((await slots.acquire({ ...request, key: 'tenant-b' })).status).toBe('acquired');
    if (first.status !== 'acquired') throw new Error('unreachable');
    await first.slot.release();
    await first.slot.release(); // idempotent: frees nothing else
    expect((await slots.acquire(request)).status).toBe('acquired');
    expect((await slots.acquire(request)).status).toBe('full');
  });

  it('counts a crashed holder free once its lease expiry (plus the margin) has passed', async () => {
    const clock = { now: 2_000_000 };
    const { slots } = store(clock);
    const request = { name: 'reports', key: 'tenant-crash', limit: 1, expiresAtMs: clock.now + 10_000 };
    expect((await slots.acquire(request)).status).toBe('acquired'); // never released: a crash
    clock.now += 10_000;
    expect((await slots.acquire(request)).status).toBe('full'); // within the margin
    clock.now += 1_001;
    const taken = await slots.acquire({ ...request, expiresAtMs: clock.now + 10_000 });
    expect(taken.status).toBe('acquired');
    const holders = await slots.read('reports', 'tenant-crash');
    expect(holders.holders.size).toBe(1); // the crashed holder was pruned
  });

  it('never grants more than the limit to many acquisitions at once', async () => {
    const clock = { now: 3_000_000 };
    const instances = Array.from({ length: 5 }, () => store(clock));
    const request = { name: 'reports', key: 'tenant-race', limit: 3, expiresAtMs: clock.now + 30_000 };
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (instances[i % 5] as LimitStore).slots.acquire(request)),
    );
    expect(outcomes.filter((o) => o.status === 'acquired').length).toBeLessThanOrEqual(3);
    expect((await instances[0]?.slots.read('reports', 'tenant-race'))?.holders.size).toBeLessThanOrEqual(3);
  });
});

describe('rate buckets', () => {
  it('grants the burst, then says how long until the next token; refills at the rate', async () => {
    const clock = { now: 5_000_000 };
    const { buckets } = store(clock);
    const limit = defineRateLimit({ name: 'partner', perSecond: 10, burst: 3, adaptive: false });
    for (let i = 0; i < 3; i++) expect(await buckets.take(limit, 'k')).toEqual({ granted: true });
    const refused = await buckets.take(limit, 'k');
    expect(refused).toEqual({ granted: false, waitMs: 100 });
    clock.now += 100;
    expect(await buckets.take(limit, 'k')).toEqual({ granted: true });
  });

  it('is shared by instances: two stores on one table spend one bucket', async () => {
    const clock = { now: 6_000_000 };
    const a = store(clock).buckets;
    const b = store(clock).buckets;
    const limit = defineRateLimit({ name: 'shared', perSecond: 1, burst: 4, adaptive: false });
    const outcomes = await Promise.all([a, b, a, b, a, b].map((buckets) => buckets.take(limit, 'k')));
    expect(outcomes.filter((o) => o.granted).length).toBe(4);
  });

  it('adaptive: under sustained 429s the effective rate falls; after they stop it rises back', async () => {
    const clock = { now: 7_000_000 };
    const { buckets } = store(clock);
    const limit = defineRateLimit({
      name: 'adaptive',
      perSecond: 20,
      burst: 20,
      adaptive: { recoveryPerSecond: 2 },
    });
    /**
     * Grants in one simulated second of a taker that behaves as `ctx.rateLimit` does: takes, and
     * when refused sleeps the wait it was told; each grant calls a partner that answers 429 when
     * `overloaded` (then reports it). A call takes 10 ms.
     */
    const second = async (overloaded: boolean): Promise<number> => {
      const end = clock.now + 1000;
      let granted = 0;
      while (clock.now < end) {
        const taken = await buckets.take(limit, 'k');
        if (!taken.granted) {
          clock.now += Math.max(1, Math.ceil(taken.waitMs));
          continue;
        }
        granted += 1;
        clock.now += 10;
        if (overloaded) await buckets.throttled(limit, 'k');
      }
      return granted;
    };
    const calm = await second(false);
    const storm: number[] = [];
    for (let s = 0; s < 5; s++) storm.push(await second(true));
    const lowest = (await buckets.read(limit, 'k')).rate;
    const recovery: number[] = [];
    for (let s = 0; s < 12; s++) recovery.push(await second(false));

    expect(calm).toBeGreaterThanOrEqual(20);
    // Each second of 429s halves the rate (20 → 10 → 5 ...), against a recovery of 2/s per second.
    expect(storm[4]).toBeLessThan(storm[0] as number);
    expect(storm[4]).toBeLessThanOrEqual(5);
    expect(lowest).toBeLessThan(20 / 4);
    // Then it recovers additively (2 requests/s per second) back to 20 within 10 s.
    expect(recovery[11]).toBeGreaterThan((recovery[0] as number) + 10);
    expect(recovery[11]).toBeGreaterThanOrEqual(19);
    for (let s = 1; s < recovery.length; s++) {
      expect(recovery[s]).toBeGreaterThanOrEqual((recovery[s - 1] as number) - 1);
    }
  });
});

describe('lease hand-back (a run that stopped to wait on a limit)', () => {
  it('releases the lease without counting the run: the next delivery runs with the same attempt, and a fenced hand-back writes nothing', async () => {
    const clock = { now: 9_000_000 };
    const guard = new DynamoIdempotencyStore({ tableName, client: db.client, now: () => clock.now });
    const request = {
      jobType: 'reports.rate',
      key: 'job-1',
      payloadHash: 'a'.repeat(64),
      leaseExpiresAtMs: clock.now + 30_000,
      onLeaseExpired: 'rerun' as const,
      messageId: 'm-1',
    };
    const first = await guard.begin(request);
    if (first.status !== 'acquired') throw new Error('expected the lease');
    expect(first.lease.attempt).toBe(1);
    expect(await first.lease.handBack?.()).toBe('ok');
    expect(await guard.readRecord('reports.rate', 'job-1')).toMatchObject({ status: 'RELEASED', attempt: 0 });
    const second = await guard.begin({ ...request, messageId: 'm-2' });
    if (second.status !== 'acquired') throw new Error('expected the lease');
    expect(second.lease.attempt).toBe(1);
    // The first run's lease was taken over: its hand-back is fenced and changes nothing.
    expect(await first.lease.handBack?.()).toBe('fenced');
    expect(await guard.readRecord('reports.rate', 'job-1')).toMatchObject({
      status: 'IN_PROGRESS',
      attempt: 1,
    });
  });
});
