/**
 * Reconciliation: one outcome per job from the plan, the sent ledger, the domain evidence and
 * the dead letters.
 *
 * How a job's final state is known, without trusting the system under test:
 * - completed: the job's own evidence in the domain table (a booking step in the user's order
 *   log, `paymentId` / `emailId` on the booking), written by the job itself;
 * - dead-lettered: the message is in its queue's DLQ (matched by `SourceMessageId` or by the
 *   body's job type and booking id);
 * - lost: neither, once every queue is empty (nothing visible, in flight or delayed).
 * Children exist only when their parent completed (`ctx.enqueue` sends on success only), so
 * the set of jobs that must reach a final state follows from the parents' evidence.
 */
import type { DomainSnapshot } from '../domain.ts';
import { FAILING_FAULT_KINDS, type FaultKind } from '../external-service.ts';
import { CONFIRMATION_TEMPLATE, sampleJobs } from '../jobs.ts';
import type { DeadLetterFact, JobOutcome } from '../report/index.ts';
import { SAMPLE_QUEUES } from '../topology.ts';
import type { CollectedDeadLetter } from './dead-letters.ts';
import { jobKey, type WorkloadPlan } from './plan.ts';
import type { SentLedger } from './send.ts';

/** Transient reasons that an injected fault produces (retries used up on injected faults only). */
const INJECTED_TRANSIENT_REASONS = new Set([
  'HTTP 429',
  'HTTP 503',
  'TimeoutError',
  'AbortError',
  // An `overrun` (or a `timeout` past the job's limit): the job's own time limit fired.
  'JobTimeoutError',
]);

/** What {@link reconcile} produces. */
export interface Reconciliation {
  readonly jobs: JobOutcome[];
  readonly deadLetters: DeadLetterFact[];
  readonly completed: number;
  readonly deadLettered: number;
  /** Jobs known to exist and not final yet (lost when the queues drained, unfinished at the deadline). */
  readonly pending: number;
  /** Jobs expected by the end, counting the children of jobs not yet final. */
  readonly projectedTotal: number;
}

/**
 * Joins the plan, the sent ledger, the domain evidence and the dead letters into one outcome per
 * job. Pure. With `final`, jobs still pending are `lost` (the queues drained) or, with
 * `timedOut`, `unfinished` (the deadline passed first); without `final`, they are left out of
 * `jobs` and counted in `pending`.
 */
export function reconcile(input: {
  readonly plan: WorkloadPlan;
  readonly ledger: SentLedger;
  readonly snapshot: DomainSnapshot;
  readonly deadLetters: readonly CollectedDeadLetter[];
  /** The fake service's injected faults per reference. */
  readonly faultsByReference: Readonly<Record<string, readonly FaultKind[]>>;
  readonly final: boolean;
  /** The deadline passed before the queues drained: pending jobs are `unfinished`, not `lost`. */
  readonly timedOut?: boolean;
  /**
   * Why a dead letter that matches no planned job was meant to be one (the soak's batch children
   * failing on purpose); undefined leaves it unexplained.
   */
  readonly explainUnplanned?: (dl: CollectedDeadLetter) => string | undefined;
}): Reconciliation {
  const { plan, ledger, snapshot, faultsByReference, final } = input;
  const pendingState = input.timedOut === true ? 'unfinished' : 'lost';
  const maxAttempts = Object.fromEntries(SAMPLE_QUEUES.map((q) => [q.name, q.maxAttempts])) as Record<
    string,
    number
  >;

  // Dead letters, matched to job keys.
  // A key can have several (a producer resend of a job that was dead-lettered runs and fails again).
  const deadLettersByKey = new Map<string, CollectedDeadLetter[]>();
  const unmatched: CollectedDeadLetter[] = [];
  for (const dl of input.deadLetters) {
    const key = matchDeadLetter(dl, ledger);
    if (key) deadLettersByKey.set(key, [...(deadLettersByKey.get(key) ?? []), dl]);
    else unmatched.push(dl);
  }
  const known = new Set<string>();

  const jobs: JobOutcome[] = [];
  const deadLetters: DeadLetterFact[] = [];
  let pending = 0;
  let projectedTotal = 0;
  const logs = new Map(snapshot.orderLogs.map((log) => [log.userId, log]));
  const bookings = new Map(snapshot.bookings.map((b) => [b.bookingId, b]));

  const account = (
    job: Omit<JobOutcome, 'state'>,
    evidence: { atMs: number; attempt: number } | undefined,
    expectedFailure: (dl: CollectedDeadLetter) => string | undefined,
  ): 'completed' | 'dead-lettered' | 'pending' => {
    projectedTotal += 1;
    known.add(job.key);
    const dls = deadLettersByKey.get(job.key) ?? [];
    const dl = dls[0];
    if (dl) {
      const attempts = Number(dl.attributes.Attempts);
      jobs.push({ ...job, state: 'dead-lettered', ...(Number.isFinite(attempts) ? { attempts } : {}) });
      for (const each of dls) deadLetters.push(toFact(each, job.key, expectedFailure(each)));
      return 'dead-lettered';
    }
    if (evidence) {
      jobs.push({ ...job, state: 'completed', completedAtMs: evidence.atMs, attempts: evidence.attempt });
      return 'completed';
    }
    pending += 1;
    if (final) jobs.push({ ...job, state: pendingState });
    return 'pending';
  };

  const injectedFailures = (reference: string | undefined): FaultKind[] =>
    reference === undefined
      ? []
      : (faultsByReference[reference] ?? []).filter((k) =>
          (FAILING_FAULT_KINDS as readonly string[]).includes(k),
        );
  const externalFailure = (queue: string, reference: string | undefined) => (dl: CollectedDeadLetter) => {
    const reason = dl.attributes.ErrorReason;
    const injected = injectedFailures(reference);
    if (reason === 'HTTP 400' && injected.includes('badRequest')) return 'injected 400';
    const attempts = Number(dl.attributes.Attempts);
    // The worker writes `attempts-used-up: <reason>` when the last retry failed (lib/runtime/record.ts).
    const last = reason?.replace(/^attempts-used-up: /, '');
    if (
      last !== undefined &&
      INJECTED_TRANSIENT_REASONS.has(last) &&
      attempts >= (maxAttempts[queue] ?? 1) &&
      injected.length >= attempts
    ) {
      return 'retries used up on injected faults';
    }
    return undefined;
  };
  const none = () => undefined;

  for (const booking of plan.bookings) {
    const { bookingId, userId } = booking;
    const entries = logs.get(userId)?.entries.filter((e) => e.bookingId === bookingId) ?? [];
    const stepEvidence = (step: string) => entries.find((e) => e.step === step);
    const current = bookings.get(bookingId);
    const chain: [{ readonly type: string }, string, string | undefined][] = [
      [sampleJobs.reserveInventory, 'reserve', undefined],
      [sampleJobs.confirmReservation, 'confirm', undefined],
      [sampleJobs.issueInvoice, 'invoice', `invoice:${bookingId}`],
    ];
    let startedAtMs = ledger.sentAtMs.get(jobKey(sampleJobs.reserveInventory.type, bookingId));
    let parentDone = true;
    let remaining = 4; // reserve, confirm, invoice, email
    for (const [job, step, reference] of chain) {
      if (!parentDone) break;
      remaining -= 1;
      const evidence = stepEvidence(step);
      const state = account(
        {
          key: jobKey(job.type, bookingId),
          type: job.type,
          queue: 'booking',
          origin: step === 'reserve' ? 'sent' : 'enqueued',
          ...(startedAtMs === undefined ? {} : { startedAtMs }),
          ...(reference ? { sideEffectReference: reference } : {}),
        },
        evidence ? { atMs: evidence.atMs, attempt: evidence.attempt } : undefined,
        step === 'reserve'
          ? (dl) =>
              plan.soldOut.has(bookingId) && dl.attributes.ErrorName === 'OutOfStockError'
                ? 'out of stock (deliberate)'
                : undefined
          : step === 'invoice'
            ? externalFailure('booking', reference)
            : none,
      );
      parentDone = state === 'completed';
      if (state === 'pending') projectedTotal += remaining;
      startedAtMs = evidence?.atMs;
    }
    if (parentDone) {
      const reference = `email:${bookingId}:${CONFIRMATION_TEMPLATE}`;
      account(
        {
          key: jobKey(sampleJobs.sendEmail.type, bookingId),
          type: sampleJobs.sendEmail.type,
          queue: 'notifications',
          origin: 'enqueued',
          ...(startedAtMs === undefined ? {} : { startedAtMs }),
          sideEffectReference: reference,
        },
        current?.emailId && current.emailAtMs !== undefined
          ? { atMs: current.emailAtMs, attempt: current.emailAttempt ?? 1 }
          : undefined,
        externalFailure('notifications', reference),
      );
    }
    if (!plan.soldOut.has(bookingId)) {
      const reference = `payment:${bookingId}`;
      const key = jobKey(sampleJobs.capturePayment.type, bookingId);
      const sentAt = ledger.sentAtMs.get(key);
      account(
        {
          key,
          type: sampleJobs.capturePayment.type,
          queue: 'payments',
          origin: 'sent',
          ...(sentAt === undefined ? {} : { startedAtMs: sentAt }),
          sideEffectReference: reference,
        },
        current?.paymentId && current.paymentAtMs !== undefined
          ? { atMs: current.paymentAtMs, attempt: current.paymentAttempt ?? 1 }
          : undefined,
        externalFailure('payments', reference),
      );
    }
  }
  for (const bad of plan.badMessages) {
    const sentAt = ledger.sentAtMs.get(bad.key);
    account(
      {
        key: bad.key,
        type: `malformed (${bad.kind})`,
        queue: bad.queue,
        origin: 'sent',
        ...(sentAt === undefined ? {} : { startedAtMs: sentAt }),
      },
      undefined,
      () => `deliberate malformed message (${bad.kind})`,
    );
  }
  for (const [key, dls] of deadLettersByKey) {
    if (!known.has(key)) unmatched.push(...dls);
  }
  for (const dl of unmatched) deadLetters.push(toFact(dl, undefined, input.explainUnplanned?.(dl)));

  const count = (state: JobOutcome['state']) => jobs.filter((j) => j.state === state).length;
  return {
    jobs,
    deadLetters,
    completed: count('completed'),
    deadLettered: count('dead-lettered'),
    pending,
    projectedTotal,
  };
}

function matchDeadLetter(dl: CollectedDeadLetter, ledger: SentLedger): string | undefined {
  const source = dl.attributes.SourceMessageId;
  if (source !== undefined) {
    const bad = ledger.badMessageIds.get(source);
    if (bad) return bad;
  }
  try {
    const body = JSON.parse(dl.body) as { type?: unknown; id?: unknown; data?: { bookingId?: unknown } };
    if (typeof body.id === 'string' && body.id.startsWith('bad:')) return body.id;
    if (typeof body.type === 'string' && typeof body.data?.bookingId === 'string') {
      return jobKey(body.type, body.data.bookingId);
    }
  } catch {
    // Not JSON: the SourceMessageId, or the id of a malformed message cut short (a copy sent
    // again by the SDK after a lost response has a MessageId the workload never saw).
    const bad = /^\{"specversion":"1\.0","id":"(bad:\d+)",/.exec(dl.body)?.[1];
    if (bad) return bad;
  }
  return undefined;
}

function toFact(
  dl: CollectedDeadLetter,
  key: string | undefined,
  expectedBecause: string | undefined,
): DeadLetterFact {
  const attempts = Number(dl.attributes.Attempts);
  return {
    queue: dl.queue,
    ...(dl.attributes.JobType ? { jobType: dl.attributes.JobType } : {}),
    ...(dl.attributes.ErrorName ? { errorName: dl.attributes.ErrorName } : {}),
    ...(dl.attributes.ErrorReason ? { errorReason: dl.attributes.ErrorReason } : {}),
    ...(dl.attributes.ErrorMessage ? { errorMessage: dl.attributes.ErrorMessage } : {}),
    ...(Number.isFinite(attempts) ? { attempts } : {}),
    ...(key ? { jobKey: key } : {}),
    ...(expectedBecause ? { expectedBecause } : {}),
  };
}
