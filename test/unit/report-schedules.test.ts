/**
 * The time part of the `npm start` report (lib/sample/report/schedules.ts) on hand-made facts:
 * each invariant holds on a good run and fails the run when its rule is broken (a cancelled job
 * that ran, a job that ran before its time, a hold never released, a firing run twice or never,
 * a schedule that never fired, the nightly run's backlog left uninvoiced), and the text says so.
 */
import { describe, expect, it } from 'vitest';
import {
  buildReport,
  type HoldFact,
  type ReportFacts,
  renderReport,
  type ScheduleFacts,
} from '../../lib/sample/report/index.ts';

const T0 = 1_800_000_000_000;

function hold(overrides: Partial<HoldFact> & Pick<HoldFact, 'holdId'>): HoldFact {
  return {
    jobId: `hold-${overrides.holdId}`,
    queue: 'payments',
    via: 'delay',
    runAtMs: T0 + 3_000,
    status: 'EXPIRED',
    runs: [{ jobId: `hold-${overrides.holdId}`, atMs: T0 + 3_200, attempt: 1 }],
    ...overrides,
  };
}

/** A good run: two holds per path, one of each cancelled; the nightly fired now, delivered twice. */
function schedules(overrides: Partial<ScheduleFacts> = {}): ScheduleFacts {
  const nightlyId = 'nightly-invoices@2027-01-15T08:00:00.123Z';
  return {
    holds: [
      hold({ holdId: 'h1', queue: 'booking', via: 'schedule', scheduleName: 'sj-1' }),
      hold({
        holdId: 'h2',
        queue: 'booking',
        via: 'schedule',
        scheduleName: 'sj-2',
        cancel: 'cancelled',
        scheduleDeleted: true,
        status: 'CONFIRMED',
        runs: [],
      }),
      hold({ holdId: 'h3' }),
      hold({ holdId: 'h4', cancel: 'cancelled', status: 'CONFIRMED', runs: [] }),
    ],
    firings: [
      {
        name: 'sj-1',
        scheduledTime: '2027-01-15T08:00:04Z',
        manual: false,
        copies: 1,
        outcome: 'delivered',
        recurring: false,
      },
      {
        name: 'nightly-invoices',
        scheduledTime: '2027-01-15T08:00:00.123Z',
        manual: true,
        copies: 2,
        outcome: 'delivered',
        recurring: true,
        jobId: nightlyId,
      },
    ],
    recurringRuns: [{ jobId: nightlyId, atMs: T0 + 500, attempt: 1 }],
    recurringFiringsExpected: 1,
    nightly: {
      graceMinutes: 60,
      bookingIds: ['late-b-1', 'late-b-2'],
      invoiced: ['late-b-1', 'late-b-2'],
      deadLettered: [],
    },
    runAtPrecisionMs: 1_000,
    cancelledMessages: 1,
    ...overrides,
  };
}

function facts(s: ScheduleFacts, overrides: Partial<ReportFacts> = {}): ReportFacts {
  return {
    startedAtMs: T0,
    finishedAtMs: T0 + 10_000,
    bootMs: 500,
    timedOut: false,
    jobs: [],
    deadLetters: [],
    orderLogs: [],
    sideEffects: { byKey: {}, byReference: {} },
    faultsInjected: {},
    duplicatesAbsorbed: 0,
    schedules: s,
    ...overrides,
  };
}

const invariant = (report: ReturnType<typeof buildReport>, prefix: string) => {
  const found = report.invariants.find((i) => i.name.startsWith(prefix));
  if (found === undefined) throw new Error(`no invariant "${prefix}"`);
  return found;
};

describe('the time part of the run report', () => {
  it('holds on a good run and says what happened', () => {
    const report = buildReport(facts(schedules()));
    expect(report.ok).toBe(true);
    expect(report.schedules?.holds).toMatchObject({
      total: 4,
      viaSchedule: 2,
      viaDelay: 2,
      cancelled: 2,
      expired: 2,
      minLatenessMs: 200,
    });
    const text = renderReport(report);
    expect(text).toContain(
      'Schedules fired: 2 (1 one-time, 1 recurring of which 1 fired now), 1 delivered twice',
    );
    expect(text).toContain(
      '4 (2 via a one-time schedule, 2 via DelaySeconds); 2 cancelled on confirmation (0 ran; 1 schedules deleted before they fired',
    );
    expect(text).toContain('2 of 2 bookings confirmed over 60 min ago invoiced');
    expect(text).toMatch(/PASS {2}cancelled jobs that ran/);
    expect(text).toContain('RESULT: all invariants hold');
  });

  it('fails when a cancelled job ran anyway', () => {
    const s = schedules();
    const ran = {
      ...s.holds[3]!,
      status: 'EXPIRED' as const,
      runs: [{ jobId: 'hold-h4', atMs: T0 + 3_100, attempt: 1 }],
    };
    const report = buildReport(facts({ ...s, holds: [...s.holds.slice(0, 3), ran] }));
    expect(report.failed).toBe(true);
    expect(invariant(report, 'cancelled jobs that ran')).toMatchObject({
      ok: false,
      actual: '1 (h4) of 2 cancelled',
    });
    expect(renderReport(report)).toContain('RESULT: INVARIANT FAILED');
  });

  it('fails when a delayed job ran before its runAt (beyond the precision), not when within it', () => {
    const s = schedules();
    const at = (atMs: number) => ({
      ...s,
      holds: s.holds.map((h) =>
        h.holdId === 'h3' ? { ...h, runs: [{ jobId: 'hold-h3', atMs, attempt: 1 }] } : h,
      ),
    });
    const early = buildReport(facts(at(T0 + 3_000 - 1_500)));
    expect(invariant(early, 'delayed jobs run')).toMatchObject({
      ok: false,
      actual: '2 of 2 run, 0 not run, 1 early',
    });
    expect(early.schedules?.holds.early).toEqual(['h3 1500 ms early']);
    expect(buildReport(facts(at(T0 + 3_000 - 400))).ok).toBe(true);
  });

  it('fails when a hold that was not cancelled was never released', () => {
    const s = schedules();
    const report = buildReport(
      facts({ ...s, holds: [hold({ holdId: 'h1', status: 'HELD', runs: [] }), ...s.holds.slice(1)] }),
    );
    expect(invariant(report, 'delayed jobs run')).toMatchObject({
      ok: false,
      actual: '1 of 2 run, 1 not run, 0 early',
    });
    expect(report.failed).toBe(true);
  });

  it('fails when a job of a firing delivered twice ran twice as a first attempt; a retry is no duplicate', () => {
    const s = schedules();
    const id = s.recurringRuns[0]!.jobId;
    const twice = buildReport(
      facts({ ...s, recurringRuns: [...s.recurringRuns, { jobId: id, atMs: T0 + 600, attempt: 1 }] }),
    );
    expect(invariant(twice, 'firings delivered twice and absorbed')).toMatchObject({ ok: false });
    expect(twice.schedules?.duplicateRuns).toEqual([`${id} ×2`]);
    const retried = buildReport(
      facts({ ...s, recurringRuns: [...s.recurringRuns, { jobId: id, atMs: T0 + 900, attempt: 2 }] }),
    );
    expect(retried.ok).toBe(true);
  });

  it('fails when a delivered recurring firing never ran, or a schedule that should have fired did not', () => {
    const s = schedules();
    const neverRan = buildReport(facts({ ...s, recurringRuns: [] }));
    expect(invariant(neverRan, 'firings delivered twice and absorbed')).toMatchObject({
      ok: false,
      actual: '1 delivered twice; 0 jobs ran twice, 1 firings never ran',
    });
    const notFired = buildReport(facts({ ...s, firings: s.firings.filter((f) => f.name !== 'sj-1') }));
    expect(invariant(notFired, 'schedules fired and delivered')).toMatchObject({ ok: false });
    expect(notFired.schedules?.firings.missing).toEqual(['sj-1']);
    const dropped = buildReport(
      facts({ ...s, firings: s.firings.map((f) => ({ ...f, outcome: 'dropped' as const })) }),
    );
    expect(invariant(dropped, 'schedules fired and delivered')).toMatchObject({ ok: false });
  });

  it("fails when the nightly run left its backlog uninvoiced; a dead-lettered invoice job is the dead letters' business", () => {
    const s = schedules();
    const nightly = {
      graceMinutes: 60,
      bookingIds: ['late-b-1', 'late-b-2'],
      invoiced: ['late-b-1'],
      deadLettered: [],
    };
    const report = buildReport(facts({ ...s, nightly }));
    expect(invariant(report, 'nightly invoices')).toMatchObject({ ok: false, actual: '1 (late-b-2) of 2' });
    expect(buildReport(facts({ ...s, nightly: { ...nightly, deadLettered: ['late-b-2'] } })).ok).toBe(true);
  });

  it('skips what needs the jobs to have run when the deadline came first, but still fails a cancelled job that ran', () => {
    const s = schedules();
    const report = buildReport(
      facts({ ...s, holds: [hold({ holdId: 'h1', status: 'HELD', runs: [] })] }, { timedOut: true }),
    );
    expect(invariant(report, 'delayed jobs run').skipped).toBeDefined();
    expect(report.failed).toBe(false);
    const ran = hold({ holdId: 'h9', cancel: 'cancelled', status: 'CONFIRMED' });
    expect(buildReport(facts({ ...s, holds: [ran] }, { timedOut: true })).failed).toBe(true);
  });

  it('at a deadline, a firing not run yet is not judged: the PASS line does not show a count its expectation refuses', () => {
    const s = schedules();
    const report = buildReport(facts({ ...s, recurringRuns: [] }, { timedOut: true }));
    expect(invariant(report, 'firings delivered twice and absorbed')).toMatchObject({
      ok: true,
      actual: '1 delivered twice; 0 jobs ran twice; never ran: not judged at the deadline (1 not run yet)',
      expected: '0 ran twice (never ran: judged only when the run ends)',
    });
    const line = renderReport(report)
      .split('\n')
      .find((l) => l.includes('firings delivered twice and absorbed'));
    expect(line).toMatch(/^\s*PASS\s+firings delivered twice and absorbed/);
    expect(line).not.toContain('1 firings never ran');
  });

  it('leaves the time part out of a run without it', () => {
    const { schedules: _none, ...plain } = facts(schedules());
    const report = buildReport(plain);
    expect(report.schedules).toBeUndefined();
    expect(report.invariants.some((i) => i.name.startsWith('cancelled jobs'))).toBe(false);
  });
});
