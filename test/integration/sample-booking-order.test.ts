/**
 * Through the local runtime (synthesized template, bundled functions, emulators): the booking
 * chain keeps each user's order on the FIFO queue while the external API fails at high rates,
 * and every side effect happens once.
 */
import { describe, expect, it } from 'vitest';
import { BOOKING_STEPS } from '../../lib/sample/domain.ts';
import { runLocal } from '../../lib/sample/workload.ts';

describe('booking chain on the local runtime with faults switched on', () => {
  it('runs reserve → confirm → invoice in order per user, retrying injected API faults, one side effect each', async () => {
    const users = 6;
    const bookingsPerUser = 3;
    const result = await runLocal({
      users,
      bookingsPerUser,
      seed: 11,
      outOfStock: 0,
      malformed: 0,
      // Transient faults only, so every job completes: 30% of API calls fail and are retried.
      faults: { throttle: 0.12, unavailable: 0.12, timeout: 0.06, slow: 0.05 },
      // The default client timeout (5 s; the `timeout` fault hangs 6 s): a 1 s one was outlasted
      // by fault-free calls on a loaded machine, a job failed five times and was dead-lettered.
      externalTimeoutMs: 5_000,
      // Deadlines, not waits: the run ends as soon as the queues are empty. On a loaded 2-core
      // machine the boot alone (20 prewarmed environments, each loading a 5.6 MB bundle) can take
      // two minutes, and at load 30 the run itself took more than 150 s.
      timeoutSeconds: 240,
      pollIntervalMs: 250,
    });
    const { report, workload } = result;
    expect(report.invariants.filter((i) => !i.ok)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.jobs.lost).toBe(0);
    expect(report.jobs.deadLettered).toBe(0);
    expect(report.jobs.completed).toBe(users * bookingsPerUser * 5);
    // The faults happened and were retried, on the FIFO chain too.
    expect(result.service.failuresInjected).toBeGreaterThan(0);
    expect(report.jobs.retries).toBeGreaterThan(0);
    expect(report.jobs.byType['booking.issue-invoice']?.retries).toBeGreaterThan(0);
    // One side effect per key and per booking operation, however many attempts it took.
    expect(report.sideEffects.maxPerKey).toBe(1);
    expect(Object.values(result.service.sideEffectsByReference).every((n) => n === 1)).toBe(true);
    // Three per booking (the nightly invoice run, a batch, is not fired here: sample-holds.test.ts).
    expect(Object.keys(result.service.sideEffectsByReference)).toHaveLength(users * bookingsPerUser * 3);

    // Order evidence: each user's log holds every step of every booking, each step in booking order.
    expect(report.order.violations).toEqual([]);
    expect(workload.snapshot.orderLogs).toHaveLength(users);
    for (const log of workload.snapshot.orderLogs) {
      expect(log.entries).toHaveLength(bookingsPerUser * BOOKING_STEPS.length);
      for (const step of BOOKING_STEPS) {
        expect(log.entries.filter((e) => e.step === step).map((e) => e.ordinal)).toEqual([1, 2, 3]);
      }
    }
    expect(workload.snapshot.bookings.every((b) => b.status === 'INVOICED' && b.paymentId && b.emailId)).toBe(
      true,
    );
  }, 420_000);
});
