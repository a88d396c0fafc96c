/**
 * The time part of a local workload (docs/schedules.md), on the local runtime's EventBridge
 * Scheduler:
 * - **Reservation holds**: for the first bookings of the plan, a hold is taken and its expiry job
 *   sent for later (`JobClient.send(..., { delayMs })`, a few seconds ahead) with the scheduling
 *   the runtime gives the booking worker (`grantScheduleJobs`: its schedule group and role, the
 *   idempotency table); alternately on the FIFO `booking` queue (a one-time schedule) and the
 *   standard `payments` queue (DelaySeconds). Half of them are confirmed at once, as a booking
 *   confirmed in time would: `JobClient.cancel`, then the hold marked `CONFIRMED`; the others
 *   expire, their job releasing the hold at its time.
 * - **The nightly invoice run**: a backlog of bookings confirmed longer ago than the run's grace
 *   period and never invoiced (the field's incident: nobody noticed the invoices had stopped) is
 *   seeded, then the recurring schedule is fired now, as an operator would, and delivered twice
 *   (`rt.scheduler.fireNow(name, { duplicate: true })`). The firing's job starts the run's batch
 *   (one invoice job per user, then one summary email: lib/sample/nightly-invoices.ts); both
 *   copies are one job, so one batch.
 * At the end it collects the facts the report's time invariants need (report/schedules.ts).
 */
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import pLimit from 'p-limit';
import { JobClient } from '../../client/job-client.ts';
import { type SchedulingOptions, schedulingFromEnv } from '../../client/scheduling.ts';
import type { LocalRuntime } from '../../local/runtime.ts';
import type { Booking, DomainRepository } from '../domain.ts';
import { sampleJobs } from '../jobs.ts';
import { NIGHTLY_INVOICES_JOB, nightlyInvoiceJobs } from '../nightly-invoices.ts';
import type { FiringFact, HoldFact, NightlyBacklogFact, ScheduleFacts } from '../report/schedules.ts';
import { NIGHTLY_INVOICES } from '../topology.ts';
import type { CollectedDeadLetter } from './dead-letters.ts';
import type { WorkloadPlan } from './plan.ts';
import { WORKLOAD_SOURCE } from './send.ts';
import type { WorkloadTarget } from './target.ts';

/** Options of the time part of a workload. */
export interface ScheduledWorkOptions {
  /** Bookings that get a reservation hold (the first ones sent, out-of-stock ones skipped). Integer >= 0. @default 0 */
  readonly holds?: number;
  /** How long a hold lasts before its expiry job runs, in ms. @default 3000 */
  readonly holdDelayMs?: number;
  /**
   * Bookings of the nightly run's backlog (confirmed more than its grace period ago, not
   * invoiced), seeded before the run fires the nightly schedule now; 0: the schedule is not fired.
   * Integer >= 0. @default 0
   */
  readonly nightlyBacklog?: number;
}

/** The time part of a running workload: see the module's description. */
export interface ScheduledWork {
  /** Seeds and sends it; called once the workload's jobs are sent. @throws a send or a fire that failed */
  start(plan: WorkloadPlan): Promise<void>;
  /** Work due that is not in a queue yet (a hold before its time and a little after, a firing being delivered). */
  pending(): number;
  /** The facts for the report, read at the end. `cancelledMessages`: the workers' `JobCancelled` sum. */
  collect(deadLetters: readonly CollectedDeadLetter[], cancelledMessages?: number): Promise<ScheduleFacts>;
  /** Releases its clients. */
  close(): void;
}

/**
 * How long after a hold's `runAt` its message may still be on its way to the queue (a schedule
 * fires at the next whole second, then sends), in ms: until then it counts as pending.
 */
const IN_TRANSIT_MS = 3_000;
/** How far before `runAt` a run may start and be on time: Scheduler's `at()` precision (whole seconds). */
export const RUN_AT_PRECISION_MS = 1_000;

/** A hold as sent, before the end's reading. */
interface SentHold {
  readonly hold: Pick<HoldFact, 'holdId' | 'jobId' | 'queue' | 'via' | 'scheduleName' | 'runAtMs'> & {
    cancel?: HoldFact['cancel'];
    scheduleDeleted?: boolean;
  };
  readonly userId: string;
}

/** The scheduling the runtime's workers were given (`grantScheduleJobs`), with each queue's ARN. */
export function schedulingOfRuntime(runtime: LocalRuntime): SchedulingOptions {
  const env = Object.assign({}, ...runtime.workers.map((w) => w.env)) as Record<string, string>;
  const found = schedulingFromEnv(env);
  const queues = Object.fromEntries(
    Object.entries(found.queues ?? {}).map(([name, q]) => [
      name,
      { ...q, queueArn: runtime.queue(name).arn },
    ]),
  );
  return { ...found, queues };
}

/** The time part of a workload on `runtime`. */
export function scheduledWork(
  runtime: LocalRuntime,
  target: WorkloadTarget,
  repository: DomainRepository,
  options: ScheduledWorkOptions,
): ScheduledWork {
  const holdsWanted = options.holds ?? 0;
  const holdDelayMs = options.holdDelayMs ?? 3_000;
  const backlogSize = options.nightlyBacklog ?? 0;
  const scheduling = schedulingOfRuntime(runtime);
  const scheduler = new SchedulerClient({
    endpoint: runtime.endpoints.scheduler,
    region: runtime.region,
    credentials: runtime.credentials,
  });
  const client = new JobClient({
    source: WORKLOAD_SOURCE,
    queueUrls: target.queueUrls,
    sqs: target.producerSqs,
    dynamodb: target.dynamodb,
    scheduler,
    scheduling,
    retry: { maxAttempts: 8, baseDelayMs: 200 },
  });
  const sent: SentHold[] = [];
  let startedAtMs = Number.POSITIVE_INFINITY;
  let nightly: { readonly backlog: readonly Booking[]; readonly fired: boolean } | undefined;
  const graceMinutes = (NIGHTLY_INVOICES.data as { graceMinutes: number }).graceMinutes;

  return {
    async start(plan) {
      startedAtMs = Date.now();
      const limit = pLimit(8);
      const bookings = plan.bookings.filter((b) => !plan.soldOut.has(b.bookingId)).slice(0, holdsWanted);
      // Taken and sent: alternately FIFO (schedule) and standard (DelaySeconds); every other pair
      // is confirmed right after (so each path has holds confirmed and holds expiring), as a
      // booking confirmed in time would be: the job cancelled, then the hold the booking's.
      await Promise.all(
        bookings.map((b, i) =>
          limit(async () => {
            const holdId = `h-${b.bookingId}`;
            await repository.putHold({
              holdId,
              userId: b.userId,
              bookingId: b.bookingId,
              status: 'HELD',
              heldAtMs: Date.now(),
            });
            const data = { userId: b.userId, holdId };
            const id = `hold-${holdId}`;
            const result =
              i % 2 === 0
                ? await client.send(sampleJobs.expireHold, data, {
                    id,
                    delayMs: holdDelayMs,
                    partitionKey: b.userId,
                  })
                : await client.send(sampleJobs.expirePaymentHold, data, { id, delayMs: holdDelayMs });
            const s: SentHold = {
              userId: b.userId,
              hold: {
                holdId,
                jobId: result.id,
                queue: result.queue,
                via: result.via ?? 'delay',
                ...(result.scheduleName ? { scheduleName: result.scheduleName } : {}),
                runAtMs: Date.parse(result.runAt ?? ''),
              },
            };
            sent.push(s);
            if (i % 4 >= 2) return;
            const answer = await client.cancel({ queue: s.hold.queue, id: s.hold.jobId });
            s.hold.cancel = answer.status;
            if (answer.status === 'cancelled') s.hold.scheduleDeleted = answer.scheduleDeleted;
            // Confirmed only when its job will not run; too late, the hold expires as it should.
            if (answer.status === 'cancelled') await repository.confirmHold(b.userId, holdId, Date.now());
          }),
        ),
      );
      if (backlogSize > 0) {
        nightly = { backlog: await seedBacklog(repository, backlogSize, graceMinutes), fired: false };
        const groupName = scheduling.queues?.[NIGHTLY_INVOICES.queue]?.groupName;
        await runtime.scheduler.fireNow(NIGHTLY_INVOICES.name, {
          ...(groupName ? { groupName } : {}),
          duplicate: true,
        });
        nightly = { ...nightly, fired: true };
      }
    },

    pending() {
      const now = Date.now();
      const notDue = sent.filter(
        (s) => s.hold.cancel !== 'cancelled' && now < s.hold.runAtMs + IN_TRANSIT_MS,
      ).length;
      const firing = runtime.scheduler.firings().filter((f) => f.outcome === 'pending').length;
      return notDue + firing;
    },

    async collect(deadLetters, cancelledMessages) {
      const holds = new Map((await repository.listHolds()).map((h) => [h.holdId, h]));
      const holdFacts: HoldFact[] = sent.map((s) => {
        const stored = holds.get(s.hold.holdId);
        return {
          ...s.hold,
          status: stored?.status ?? 'HELD',
          runs: (stored?.runs ?? []).map((r) => ({ jobId: r.jobId, atMs: r.atMs, attempt: r.attempt })),
        };
      });
      const firings: FiringFact[] = runtime.scheduler
        .firings()
        .filter((f) => f.firedAtMs >= startedAtMs)
        .map((f) => {
          const recurring = f.name === NIGHTLY_INVOICES.name;
          return {
            name: f.name,
            scheduledTime: f.scheduledTime,
            manual: f.manual,
            copies: f.copies,
            outcome: f.outcome,
            recurring,
            ...(recurring ? { jobId: `${f.name}@${f.scheduledTime}` } : {}),
          };
        });
      const recurringRuns = nightly ? await repository.listJobRuns(NIGHTLY_INVOICES_JOB) : [];
      return {
        holds: holdFacts,
        firings,
        recurringRuns: recurringRuns.map((r) => ({ jobId: r.jobId, atMs: r.atMs, attempt: r.attempt })),
        recurringFiringsExpected: nightly?.fired ? 1 : 0,
        ...(nightly
          ? { nightly: await backlogFacts(repository, nightly.backlog, graceMinutes, deadLetters) }
          : {}),
        runAtPrecisionMs: RUN_AT_PRECISION_MS,
        ...(cancelledMessages === undefined ? {} : { cancelledMessages }),
      };
    },

    close() {
      scheduler.destroy();
    },
  };
}

/**
 * Seeds the nightly run's backlog: `count` users, each with one booking confirmed an hour more
 * than the grace period ago and never invoiced, its reserve and confirm steps in its order log.
 */
async function seedBacklog(
  repository: DomainRepository,
  count: number,
  graceMinutes: number,
): Promise<Booking[]> {
  const confirmedAtMs = Date.now() - (graceMinutes + 60) * 60_000;
  const backlog: Booking[] = [];
  for (let i = 1; i <= count; i++) {
    const userId = `late-u-${i}`;
    const booking: Booking = {
      bookingId: `late-b-${i}`,
      userId,
      sku: 'sku-01',
      quantity: 1,
      amountCents: 1_000 * i,
      ordinal: 1,
      status: 'CONFIRMED',
      confirmedAtMs,
    };
    await repository.putUser({ userId, email: `${userId}@example.com`, name: `Late user ${i}` });
    await repository.putBooking(booking);
    for (const step of ['reserve', 'confirm'] as const)
      await repository.appendOrderLog(userId, {
        bookingId: booking.bookingId,
        ordinal: 1,
        step,
        atMs: confirmedAtMs,
        attempt: 1,
      });
    backlog.push(booking);
  }
  return backlog;
}

/**
 * Which backlog bookings were invoiced at the end, and which are dead-lettered: their user's
 * nightly invoice job (`billing.user-invoices`) is in a DLQ, with its evidence.
 */
async function backlogFacts(
  repository: DomainRepository,
  backlog: readonly Booking[],
  graceMinutes: number,
  deadLetters: readonly CollectedDeadLetter[],
): Promise<NightlyBacklogFact> {
  const invoiced: string[] = [];
  for (const b of backlog) {
    const current = await repository.getBooking(b.userId, b.bookingId);
    if (current.status === 'INVOICED') invoiced.push(b.bookingId);
  }
  const deadUsers = new Set<string>();
  for (const dl of deadLetters) {
    try {
      const body = JSON.parse(dl.body) as { type?: string; data?: { userId?: string } };
      const userId = body.data?.userId;
      if (body.type === nightlyInvoiceJobs.userInvoices.type && userId !== undefined) deadUsers.add(userId);
    } catch {
      // not an envelope: not one of these
    }
  }
  const deadLettered = backlog.filter((b) => deadUsers.has(b.userId)).map((b) => b.bookingId);
  return {
    graceMinutes,
    bookingIds: backlog.map((b) => b.bookingId),
    invoiced,
    deadLettered,
  };
}
