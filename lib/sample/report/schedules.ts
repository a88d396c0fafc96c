/**
 * The time part of a local run's report: jobs sent for later (the reservation holds' expiry
 * jobs), the Scheduler's firings (the holds' one-time schedules, the nightly recurring job fired
 * now by the run), and their invariants. Pure: the facts (collected by
 * lib/sample/workload/scheduled.ts) in, the summary and the invariants out.
 *
 * Invariants (the run fails when one does not hold):
 * 1. schedules fired: every firing was delivered to its queue (none dead-lettered, dropped or
 *    still retrying), and every schedule that should have fired did (the recurring job fired by
 *    the run; each hold schedule not cancelled before its time);
 * 2. delayed jobs run, none early: every hold not cancelled was released by its expiry job, and
 *    no run started before its `runAt` (less {@link ScheduleFacts.runAtPrecisionMs});
 * 3. cancelled jobs, none ran: a hold whose job `cancel` answered `cancelled` has no run and is
 *    still the booking's (`CONFIRMED`);
 * 4. firings delivered twice, absorbed: no job of a firing or sent for later ran twice as a first
 *    attempt (a second delivery is a new SQS message, so it would run as attempt 1 again; a retry
 *    after a failure runs as attempt 2 and is not a duplicate), and every delivered recurring
 *    firing ran;
 * 5. the nightly run's effect: every booking confirmed more than the grace period before the
 *    firing and not invoiced then is invoiced by the end by the run's batch (or its user's
 *    invoice job, `billing.user-invoices`, is in the DLQ with its evidence, counted with the dead
 *    letters).
 * 2, the "ran" half of 4 and 5 cannot be judged at a deadline: 2 and 5 are skipped then, 4 judges
 * its first half only and its line says the other was not judged.
 */
import type { InvariantResult } from './invariants.ts';

/** A run of a job, as the job recorded it. */
export interface JobRunFact {
  readonly jobId: string;
  /** When the run started, epoch ms. */
  readonly atMs: number;
  readonly attempt: number;
}

/** A reservation hold of the run and its expiry job sent for later. */
export interface HoldFact {
  readonly holdId: string;
  /** The expiry job's envelope id. */
  readonly jobId: string;
  /** Logical queue of the expiry job. */
  readonly queue: string;
  /** How it travelled: `delay` (SQS DelaySeconds) or `schedule` (a one-time schedule). */
  readonly via: 'delay' | 'schedule';
  /** `via: 'schedule'`: its schedule's name. */
  readonly scheduleName?: string;
  /** When it was due, epoch ms (the `runAt` JobClient answered). */
  readonly runAtMs: number;
  /** What `JobClient.cancel` answered when the booking was confirmed; undefined: never confirmed. */
  readonly cancel?: 'cancelled' | 'already-started' | 'already-cancelled' | 'not-found';
  /** Cancelled: its schedule was deleted before it fired (false: it had fired, or it went with DelaySeconds). */
  readonly scheduleDeleted?: boolean;
  /** The hold's status at the end. */
  readonly status: 'HELD' | 'CONFIRMED' | 'EXPIRED';
  /** Every run of its expiry job that reached the hold. */
  readonly runs: readonly JobRunFact[];
}

/** A firing of the local Scheduler during the run. */
export interface FiringFact {
  readonly name: string;
  /** `<aws.scheduler.scheduled-time>` of the firing. */
  readonly scheduledTime: string;
  /** An operator's firing (fire now). */
  readonly manual: boolean;
  /** 2 when it was delivered twice. */
  readonly copies: number;
  readonly outcome: 'pending' | 'delivered' | 'dead-lettered' | 'dropped';
  /** The job id the firing carries, when known (`<schedule name>@<scheduled time>` for a recurring job). */
  readonly jobId?: string;
  /** A firing of the run's recurring job (the nightly invoice run). */
  readonly recurring: boolean;
}

/** The nightly invoice run's backlog: bookings confirmed longer than the grace period ago, not invoiced. */
export interface NightlyBacklogFact {
  readonly graceMinutes: number;
  /** Booking ids of the backlog when the run fired it. */
  readonly bookingIds: readonly string[];
  /** Of those, the ones invoiced at the end. */
  readonly invoiced: readonly string[];
  /** Of those, the ones whose user's invoice job (`billing.user-invoices`) is in a DLQ (with its evidence: see the dead letters). */
  readonly deadLettered: readonly string[];
}

/** Everything the time part of the report is computed from. */
export interface ScheduleFacts {
  readonly holds: readonly HoldFact[];
  readonly firings: readonly FiringFact[];
  /** Runs of the recurring job, as it recorded them. */
  readonly recurringRuns: readonly JobRunFact[];
  /** Recurring firings the run asked for (fire now, and its duplicate delivery counts once). */
  readonly recurringFiringsExpected: number;
  readonly nightly?: NightlyBacklogFact;
  /**
   * How far before its `runAt` a run may start and still count as on time, in ms: Scheduler's
   * `at()` has whole seconds (JobClient rounds up, so the run is never early by design; the
   * allowance covers clocks that disagree by less than that).
   */
  readonly runAtPrecisionMs: number;
  /** The workers' `JobCancelled` metric: cancelled jobs whose message still arrived. */
  readonly cancelledMessages?: number;
}

/** The time part of the report. */
export interface ScheduleSummary {
  readonly firings: {
    readonly total: number;
    readonly oneTime: number;
    readonly recurring: number;
    readonly manual: number;
    readonly notDelivered: number;
    readonly deliveredTwice: number;
    /** Schedules that should have fired and did not (names). */
    readonly missing: readonly string[];
  };
  readonly holds: {
    readonly total: number;
    readonly viaSchedule: number;
    readonly viaDelay: number;
    /** Holds whose job was cancelled in time. */
    readonly cancelled: number;
    /** Of those, the ones whose schedule was deleted before it fired. */
    readonly schedulesDeleted: number;
    /** Cancelled holds whose job ran anyway (ids). */
    readonly cancelledRan: readonly string[];
    /** Holds not cancelled (their job had to run). */
    readonly expected: number;
    /** Of those, released by their job. */
    readonly expired: number;
    /** Holds not cancelled and not released at the end (ids). */
    readonly notExpired: readonly string[];
    /** Runs that started before their runAt (`<holdId> <ms> ms early`). */
    readonly early: readonly string[];
    /** Least time from runAt to a run's start, ms (negative: early); undefined without runs. */
    readonly minLatenessMs: number | undefined;
    readonly maxLatenessMs: number | undefined;
    /** Cancelled jobs whose message still arrived (`JobCancelled` metric). */
    readonly cancelledMessages: number | undefined;
  };
  /** Job identities that ran twice as a first attempt (a duplicate that got past). */
  readonly duplicateRuns: readonly string[];
  /** Delivered recurring firings whose job never ran (job ids). */
  readonly recurringNotRun: readonly string[];
  readonly nightly?: NightlyBacklogFact & { readonly missing: readonly string[] };
}

/** Job ids that ran more than once as a first attempt, among `runs`. */
function duplicateFirstRuns(runs: readonly JobRunFact[]): string[] {
  const first = new Map<string, number>();
  for (const r of runs) if (r.attempt === 1) first.set(r.jobId, (first.get(r.jobId) ?? 0) + 1);
  return [...first].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`);
}

/** The summary of the time part. Pure. */
export function summariseSchedules(facts: ScheduleFacts): ScheduleSummary {
  const { holds, firings } = facts;
  const fired = new Set(firings.filter((f) => f.outcome === 'delivered').map((f) => f.name));
  const cancelled = holds.filter((h) => h.cancel === 'cancelled');
  const expected = holds.filter((h) => h.cancel !== 'cancelled');
  const lateness = holds.flatMap((h) => h.runs.map((r) => ({ hold: h.holdId, ms: r.atMs - h.runAtMs })));
  const recurringFirings = firings.filter((f) => f.recurring);
  const missing = [
    ...expected
      .filter((h) => h.via === 'schedule' && h.scheduleName !== undefined && !fired.has(h.scheduleName))
      .map((h) => h.scheduleName as string),
    ...(recurringFirings.filter((f) => f.outcome === 'delivered').length < facts.recurringFiringsExpected
      ? ['the recurring job']
      : []),
  ];
  const recurringRunIds = new Set(facts.recurringRuns.map((r) => r.jobId));
  const nightlyMissing = facts.nightly
    ? facts.nightly.bookingIds.filter(
        (id) => !facts.nightly?.invoiced.includes(id) && !facts.nightly?.deadLettered.includes(id),
      )
    : [];
  return {
    firings: {
      total: firings.length,
      oneTime: firings.filter((f) => !f.recurring).length,
      recurring: recurringFirings.length,
      manual: firings.filter((f) => f.manual).length,
      notDelivered: firings.filter((f) => f.outcome !== 'delivered').length,
      deliveredTwice: firings.filter((f) => f.copies > 1 && f.outcome === 'delivered').length,
      missing,
    },
    holds: {
      total: holds.length,
      viaSchedule: holds.filter((h) => h.via === 'schedule').length,
      viaDelay: holds.filter((h) => h.via === 'delay').length,
      cancelled: cancelled.length,
      schedulesDeleted: cancelled.filter((h) => h.scheduleDeleted === true).length,
      cancelledRan: cancelled
        .filter((h) => h.runs.length > 0 || h.status !== 'CONFIRMED')
        .map((h) => h.holdId),
      expected: expected.length,
      expired: expected.filter((h) => h.status === 'EXPIRED').length,
      notExpired: expected.filter((h) => h.status !== 'EXPIRED').map((h) => h.holdId),
      early: lateness.filter((l) => l.ms < -facts.runAtPrecisionMs).map((l) => `${l.hold} ${-l.ms} ms early`),
      minLatenessMs: lateness.length === 0 ? undefined : Math.min(...lateness.map((l) => l.ms)),
      maxLatenessMs: lateness.length === 0 ? undefined : Math.max(...lateness.map((l) => l.ms)),
      cancelledMessages: facts.cancelledMessages,
    },
    duplicateRuns: [
      ...duplicateFirstRuns(holds.flatMap((h) => h.runs)),
      ...duplicateFirstRuns(facts.recurringRuns),
    ],
    recurringNotRun: recurringFirings
      .filter((f) => f.outcome === 'delivered' && f.jobId !== undefined && !recurringRunIds.has(f.jobId))
      .map((f) => f.jobId as string),
    ...(facts.nightly ? { nightly: { ...facts.nightly, missing: nightlyMissing } } : {}),
  };
}

const some = (list: readonly string[]): string =>
  list.length === 0 ? '0' : `${list.length} (${list.slice(0, 3).join(', ')})`;

/**
 * The invariants of the time part (see the module's list), in order. `timedOut`: the deadline
 * (or Ctrl-C) came first; what needs the jobs to have run is skipped then.
 */
export function scheduleInvariants(summary: ScheduleSummary, timedOut: boolean): InvariantResult[] {
  const skipped = timedOut ? { skipped: 'deadline reached or interrupted: jobs still due' } : {};
  const { firings, holds } = summary;
  const notFired = [...firings.missing];
  return [
    {
      name: 'schedules fired and delivered (one-time and recurring)',
      severity: 'invariant',
      ok: !timedOut && firings.notDelivered === 0 && notFired.length === 0,
      actual:
        `${firings.total} fired (${firings.oneTime} one-time, ${firings.recurring} recurring), ` +
        `${firings.notDelivered} not delivered, ${notFired.length} missing${notFired.length > 0 ? ` (${notFired.slice(0, 3).join(', ')})` : ''}`,
      expected: 'all delivered, none missing',
      ...skipped,
    },
    {
      name: 'delayed jobs run (holds released by their job), none early',
      severity: 'invariant',
      ok: !timedOut && holds.notExpired.length === 0 && holds.early.length === 0,
      actual: `${holds.expired} of ${holds.expected} run, ${holds.notExpired.length} not run, ${holds.early.length} early`,
      expected: `all run, 0 early`,
      ...skipped,
    },
    {
      name: 'cancelled jobs that ran (holds confirmed in time)',
      severity: 'invariant',
      ok: holds.cancelledRan.length === 0,
      actual: `${some(holds.cancelledRan)} of ${holds.cancelled} cancelled`,
      expected: '0',
    },
    // At a deadline a firing not run yet may still run: only the "ran twice" half is judged, and
    // the line says the other half was not (a PASS must not show a count its expectation refuses).
    timedOut
      ? {
          name: 'firings delivered twice and absorbed (each job ran once)',
          severity: 'invariant',
          ok: summary.duplicateRuns.length === 0,
          actual: `${firings.deliveredTwice} delivered twice; ${summary.duplicateRuns.length} jobs ran twice; never ran: not judged at the deadline (${summary.recurringNotRun.length} not run yet)`,
          expected: '0 ran twice (never ran: judged only when the run ends)',
        }
      : {
          name: 'firings delivered twice and absorbed (each job ran once)',
          severity: 'invariant',
          ok: summary.duplicateRuns.length === 0 && summary.recurringNotRun.length === 0,
          actual: `${firings.deliveredTwice} delivered twice; ${summary.duplicateRuns.length} jobs ran twice, ${summary.recurringNotRun.length} firings never ran`,
          expected: '0 ran twice, 0 never ran',
        },
    ...(summary.nightly
      ? [
          {
            name: `nightly invoices: bookings confirmed over ${summary.nightly.graceMinutes} min ago not invoiced`,
            severity: 'invariant',
            ok: !timedOut && summary.nightly.missing.length === 0,
            actual: `${some(summary.nightly.missing)} of ${summary.nightly.bookingIds.length}`,
            expected: '0',
            ...skipped,
          } satisfies InvariantResult,
        ]
      : []),
  ];
}

const msText = (value: number | undefined): string =>
  value === undefined ? 'n/a' : `${Math.round(value)} ms`;

/** The text lines of the time part (render.ts prints them with the figures). */
export function scheduleLines(summary: ScheduleSummary): string[] {
  const { firings, holds } = summary;
  return [
    `Schedules fired: ${firings.total} (${firings.oneTime} one-time, ${firings.recurring} recurring of which ${firings.manual} fired now), ${firings.deliveredTwice} delivered twice, ${firings.notDelivered} not delivered`,
    `Jobs sent for later (reservation holds): ${holds.total} (${holds.viaSchedule} via a one-time schedule, ${holds.viaDelay} via DelaySeconds); ` +
      `${holds.cancelled} cancelled on confirmation (${holds.cancelledRan.length} ran; ${holds.schedulesDeleted} schedules deleted before they fired, ${holds.cancelledMessages ?? 'n/a'} messages arrived and were recorded as cancelled); ` +
      `${holds.expired} of ${holds.expected} expired and ran, start after runAt: min ${msText(holds.minLatenessMs)}, max ${msText(holds.maxLatenessMs)}`,
    ...(summary.nightly
      ? [
          `Nightly invoices fired now (and delivered twice): ${summary.nightly.invoiced.length} of ${summary.nightly.bookingIds.length} bookings confirmed over ${summary.nightly.graceMinutes} min ago invoiced by its batch (a job per user), ${summary.nightly.deadLettered.length} dead-lettered with their user's job`,
        ]
      : []),
  ];
}
