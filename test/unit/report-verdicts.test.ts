/**
 * Every invariant of the run report (lib/sample/report/*.ts), on generated facts, at the end of a
 * run and at a deadline: a PASS line never shows a value its own expectation refuses (e.g. `PASS
 * … 1 firings never ran (expected 0 never ran)`). What cannot be judged is SKIP, or says so.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BatchRunFacts, batchInvariants } from '../../lib/sample/report/batches.ts';
import { buildReport, type JobState, type ReportFacts } from '../../lib/sample/report/index.ts';
import type { InvariantResult } from '../../lib/sample/report/invariants.ts';
import { type ScheduleSummary, scheduleInvariants } from '../../lib/sample/report/schedules.ts';

/**
 * Why a PASS line contradicts its expectation, or undefined. The expectations are counts: `0`
 * (the actual must start with 0), `>= n` (its first number at least n), `all 1` (it says so) and
 * clauses `<n> <phrase>` (the actual's count before that phrase, with at most one word between,
 * is n).
 */
function contradiction(i: InvariantResult): string | undefined {
  if (!i.ok || i.skipped !== undefined) return undefined;
  const why = `PASS ${i.name}: ${i.actual} (expected ${i.expected})`;
  if (i.expected === '0') return /^0\b/.test(i.actual) ? undefined : why;
  const atLeast = /^>= (\d+)$/.exec(i.expected);
  if (atLeast) return Number(/\d+/.exec(i.actual)?.[0] ?? -1) >= Number(atLeast[1]) ? undefined : why;
  if (i.expected === 'all 1') return i.actual.startsWith('all 1') ? undefined : why;
  for (const clause of i.expected.replace(/\(.*?\)/g, '').split(',')) {
    const m = /^\s*(\d+) (.+?)\s*$/.exec(clause);
    if (!m) continue;
    const [, n, phrase] = m as unknown as [string, string, string];
    const found = new RegExp(`(\\d+) (?:\\S+ )?${phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).exec(
      i.actual,
    );
    if (found === null || found[1] !== n) return why;
  }
  return undefined;
}

const ids = fc.array(fc.stringMatching(/^[a-z]\d$/), { maxLength: 3 });
const count = fc.nat(5);

const scheduleSummary: fc.Arbitrary<ScheduleSummary> = fc.record({
  firings: fc.record({
    total: count,
    oneTime: count,
    recurring: count,
    manual: count,
    notDelivered: count,
    deliveredTwice: count,
    missing: ids,
  }),
  holds: fc.record({
    total: count,
    viaSchedule: count,
    viaDelay: count,
    cancelled: count,
    schedulesDeleted: count,
    cancelledRan: ids,
    expected: count,
    expired: count,
    notExpired: ids,
    early: ids,
    minLatenessMs: fc.option(fc.integer(), { nil: undefined }),
    maxLatenessMs: fc.option(fc.integer(), { nil: undefined }),
    cancelledMessages: fc.option(count, { nil: undefined }),
  }),
  duplicateRuns: ids,
  recurringNotRun: ids,
  nightly: fc.option(
    fc.record({
      graceMinutes: count,
      bookingIds: ids,
      invoiced: ids,
      deadLettered: ids,
      missing: ids,
    }),
    { nil: undefined },
  ),
}) as fc.Arbitrary<ScheduleSummary>;

const batchFacts: fc.Arbitrary<BatchRunFacts> = fc.record({
  started: count,
  completed: count,
  open: ids,
  summariesByRun: fc.dictionary(fc.stringMatching(/^run-\d$/), fc.nat(3)),
});

describe('no PASS line of the run report contradicts its expectation', () => {
  it('the checker finds the contradiction the fresh-user test saw', () => {
    expect(
      contradiction({
        name: 'firings delivered twice and absorbed (each job ran once)',
        severity: 'invariant',
        ok: true,
        actual: '1 delivered twice; 0 jobs ran twice, 1 firings never ran',
        expected: '0 ran twice, 0 never ran',
      }),
    ).toBeDefined();
  });

  it('the time invariants (schedules.ts), at the end and at a deadline', () => {
    fc.assert(
      fc.property(scheduleSummary, fc.boolean(), (summary, timedOut) => {
        for (const i of scheduleInvariants(summary, timedOut)) expect(contradiction(i)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('the batch invariants (batches.ts), at the end and at a deadline', () => {
    fc.assert(
      fc.property(batchFacts, fc.boolean(), (facts, timedOut) => {
        for (const i of batchInvariants(facts, timedOut ? 'deadline' : undefined))
          expect(contradiction(i)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('the run invariants (invariants.ts, flow-control.ts) through buildReport, at the end and at a deadline', () => {
    const job = (key: string, state: JobState) => ({
      key,
      type: 'booking.confirm',
      queue: 'booking',
      origin: 'sent' as const,
      state,
      attempts: 1,
    });
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<JobState>('completed', 'dead-lettered', 'lost', 'unfinished'), {
          maxLength: 6,
        }),
        fc.boolean(),
        (states, timedOut) => {
          const facts = {
            startedAtMs: 0,
            finishedAtMs: 10_000,
            bootMs: 500,
            timedOut,
            jobs: states.map((s, n) => job(`k${n}`, s)),
            deadLetters: [],
            orderLogs: [],
            sideEffects: { byKey: {}, byReference: {} },
            faultsInjected: {},
            duplicatesAbsorbed: 0,
          } as unknown as ReportFacts;
          for (const i of buildReport(facts).invariants) expect(contradiction(i)).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  });
});
