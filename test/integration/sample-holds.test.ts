/**
 * The sample's reservation holds and nightly run on the local runtime (lib/sample/workload/
 * scheduled.ts), as `npm start` runs them: expiry jobs sent for later through JobClient with the
 * scheduling the runtime gives the booking worker, alternately as one-time schedules on the FIFO
 * booking queue (fired by the local EventBridge Scheduler) and as DelaySeconds messages on the
 * standard payments queue; half cancelled at once. What a user sees: a cancelled hold's job never
 * runs and the hold stays the booking's; an expired hold's job runs once, not before its time,
 * and releases it; the nightly schedule fired now and delivered twice runs once, starts one batch
 * (a job per user) that invoices the backlog, and sends one summary email. The assertions wait on the holds' and the queues' state, never on a fixed sleep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hold } from '../../lib/sample/domain.ts';
import { nightlySummaryServiceReference } from '../../lib/sample/nightly-invoices.ts';
import { type ScheduleFacts, scheduleInvariants, summariseSchedules } from '../../lib/sample/report/index.ts';
import { scanBatches } from '../../lib/sample/workload/batches.ts';
import {
  planWorkload,
  type SampleStack,
  type ScheduledWork,
  scheduledWork,
  startSampleStack,
} from '../../lib/sample/workload.ts';
import { waitFor } from '../factories/wait-for.ts';

let stack: SampleStack;
let work: ScheduledWork;
let facts: ScheduleFacts;

beforeAll(async () => {
  // The default client timeout for the fake partner (5 s): no fault here makes a call hang, and a
  // short one (it was 2 s) can be outlasted by a fault-free call on a loaded machine.
  stack = await startSampleStack();
  work = scheduledWork(stack.runtime, stack.target, stack.repository, {
    holds: 8,
    holdDelayMs: 2_000,
    nightlyBacklog: 2,
  });
  const plan = planWorkload({ users: 8, bookingsPerUser: 1, outOfStock: 0, malformed: 0 });
  await work.start(plan);
  // Every hold not cancelled released, nothing due any more, every queue empty.
  await waitFor(
    () => stack.repository.listHolds(),
    (holds: Hold[]) => holds.filter((h) => h.status === 'EXPIRED').length === 4,
    { timeoutMs: 120_000, intervalMs: 200 },
  );
  await waitFor(
    () => work.pending(),
    (n) => n === 0,
    { timeoutMs: 120_000, intervalMs: 200 },
  );
  await stack.runtime.waitUntilDrained({ timeoutMs: 120_000 });
  facts = await work.collect([], stack.metrics.JobCancelled ?? 0);
}, 400_000);

afterAll(async () => {
  work?.close();
  await stack?.stop();
});

describe('reservation holds and the nightly run on the local runtime', () => {
  it('sends the expiry jobs both ways: one-time schedules on the FIFO queue, DelaySeconds on the standard one', () => {
    expect(facts.holds).toHaveLength(8);
    expect(facts.holds.filter((h) => h.via === 'schedule').every((h) => h.queue === 'booking')).toBe(true);
    expect(facts.holds.filter((h) => h.via === 'delay').every((h) => h.queue === 'payments')).toBe(true);
    expect(facts.holds.filter((h) => h.via === 'schedule')).toHaveLength(4);
    // The expiring one-time schedules fired in the local Scheduler.
    const fired = new Set(facts.firings.filter((f) => f.outcome === 'delivered').map((f) => f.name));
    for (const h of facts.holds.filter((x) => x.via === 'schedule' && x.cancel === undefined))
      expect(fired.has(h.scheduleName ?? '')).toBe(true);
  });

  it('a hold confirmed in time: its job is cancelled and never runs; the hold stays the booking’s', () => {
    const cancelled = facts.holds.filter((h) => h.cancel !== undefined);
    expect(cancelled).toHaveLength(4);
    for (const h of cancelled) {
      expect(h.cancel).toBe('cancelled');
      expect(h.runs).toEqual([]);
      expect(h.status).toBe('CONFIRMED');
    }
    // Both paths were cancelled: a DelaySeconds message cannot be deleted, so it arrived and the
    // worker recorded it as cancelled instead of running it.
    expect(new Set(cancelled.map((h) => h.via))).toEqual(new Set(['schedule', 'delay']));
    expect(facts.cancelledMessages).toBeGreaterThanOrEqual(2);
  });

  it('a hold not confirmed: its job runs once, not before its time, and releases the hold', () => {
    const expired = facts.holds.filter((h) => h.cancel === undefined);
    expect(expired).toHaveLength(4);
    for (const h of expired) {
      expect(h.status).toBe('EXPIRED');
      expect(h.runs).toHaveLength(1);
      expect(h.runs[0]?.attempt).toBe(1);
      expect(h.runs[0]?.atMs).toBeGreaterThanOrEqual(h.runAtMs);
    }
  });

  it('the nightly schedule fired now and delivered twice runs once, starts one batch that invoices the backlog, and sends one summary', async () => {
    const nightly = facts.firings.filter((f) => f.recurring);
    expect(nightly).toHaveLength(1);
    expect(nightly[0]).toMatchObject({ manual: true, copies: 2, outcome: 'delivered' });
    expect(facts.recurringRuns.filter((r) => r.jobId === nightly[0]?.jobId)).toHaveLength(1);
    expect([...(facts.nightly?.invoiced ?? [])].sort()).toEqual(['late-b-1', 'late-b-2']);
    // One batch for the two copies (its id derives from the firing's job id), completed; its
    // completion job sent the run's summary once.
    expect(await scanBatches(stack.target.dynamodb, stack.target.idempotencyTables)).toEqual({
      started: 1,
      completed: 1,
      open: [],
    });
    const summary = nightlySummaryServiceReference(nightly[0]?.jobId ?? '');
    expect(stack.service.stats().sideEffectsByReference[summary]).toBe(1);
  });

  it('every time invariant of the report holds', () => {
    const invariants = scheduleInvariants(summariseSchedules(facts), false);
    expect(invariants.filter((i) => !i.ok)).toEqual([]);
  });
});
