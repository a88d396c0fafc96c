/**
 * The sample's nightly invoice run: a recurring job that starts a batch (docs/schedules.md,
 * docs/architecture.md "Batches"). Every night one job per user issues the invoices that user
 * still owes (bookings confirmed longer than the grace period ago and never invoiced: the field's
 * incident, nobody noticed the invoices had stopped), and when every user's job is done, one
 * summary email goes out, exactly once.
 *
 * - `booking.issue-nightly-invoices` (FIFO `booking`, message group `nightly-invoices`): the
 *   recurring job (lib/sample/topology.ts `NIGHTLY_INVOICES`, 23:00 Europe/Berlin). It records its
 *   run, picks the users and the cut-off once (`ctx.once`, so a re-run fans out to the same users),
 *   and starts the batch with `ctx.startBatch`. The batch id derives from the job's identity, the
 *   firing's envelope id `nightly-invoices@<scheduled time>`: a firing delivered twice is one job
 *   (the idempotency store absorbs the second copy) and, even run twice, one batch with one
 *   completion job.
 * - `billing.user-invoices` (FIFO `booking`, the user's own message group, so it runs after
 *   anything of that user already queued and never beside the chain's invoice step), one per user:
 *   invoices each of the user's bookings due (the chain's invoice step, `runBookingStep`, one
 *   `ctx.once` step per booking; a booking invoiced meanwhile is recognised, not invoiced twice),
 *   queues its confirmation email as the chain would, and returns the user's statement.
 * - `billing.nightly-summary` (standard `payments`), the completion job: reads every child's
 *   outcome (`ctx.batch.children()`), then sends the summary email through the mail API under
 *   `ctx.once` with an idempotency key, so the fake service's side-effect count for its reference
 *   (`summary-<runId>`, the run id being the firing's job id) is the evidence that it ran exactly
 *   once (the `npm start` report).
 */
import { randomUUID } from 'node:crypto';
import { defineJob, PermanentError } from 'sqs-jobs';
import { z } from 'zod';
import {
  CONFIRMATION_TEMPLATE,
  dependenciesFromEnv,
  issueInvoiceWork,
  runBookingStep,
  SAMPLE_JOB_TIMEOUT_SECONDS,
  SAMPLE_RETRY,
  type SampleDependencies,
  type SampleJobs,
  sampleJobs,
} from './jobs.ts';
import { PARTNER_API_LIMIT } from './partner-limit.ts';

const id = z.string().min(1).max(128);
/**
 * Data of `booking.issue-nightly-invoices`: how long a confirmed booking may wait for its invoice
 * before the nightly run issues it, in minutes (the chain normally invoices within seconds).
 */
export const nightlyInvoicesSchema = z.object({ graceMinutes: z.number().int().min(0).max(10_080) });
/** Data of `booking.issue-nightly-invoices`. */
export type NightlyInvoicesData = z.infer<typeof nightlyInvoicesSchema>;
/** Job type of the nightly invoice run (the sample stack's recurring job, lib/stacks/jobs-stack.ts). */
export const NIGHTLY_INVOICES_JOB = 'booking.issue-nightly-invoices';
/**
 * Data of `billing.user-invoices`: the run (the firing's job id), the user, and the cut-off:
 * bookings confirmed at or before `confirmedBeforeMs` (epoch ms) and not invoiced are due.
 */
export const userInvoicesSchema = z.object({
  runId: id,
  userId: id,
  confirmedBeforeMs: z.number().int().min(0),
});
/** Data of `billing.nightly-summary`. */
export const nightlySummarySchema = z.object({ runId: id });

/** Email template of the nightly summary. */
export const NIGHTLY_SUMMARY_TEMPLATE = 'nightly-invoice-summary';
/** Where the nightly summary goes. */
export const NIGHTLY_SUMMARY_TO = 'billing@example.com';
/** The batch's open limit: the run is checked (and alarms) this long after it started, in seconds. */
export const NIGHTLY_OPEN_LIMIT_SECONDS = 30;

/** Result of `booking.issue-nightly-invoices`. */
export interface NightlyInvoicesResult {
  /** The run id: the firing's job id (`nightly-invoices@<scheduled time>`). */
  readonly runId: string;
  readonly batchId: string;
  /** Users fanned out to (one `billing.user-invoices` each). */
  readonly users: number;
}

/** Result of `billing.user-invoices`: the user's statement. */
export interface UserInvoicesResult {
  readonly userId: string;
  /** Bookings this run invoiced (they were due). */
  readonly invoicedNow: number;
  /** The user's invoiced bookings after the run, and their total in cents. */
  readonly invoices: number;
  readonly amountCents: number;
}

/** The `bookingId` field of a run's summary email at the mail API. */
export function nightlySummaryReference(runId: string): string {
  return `summary-${runId}`;
}

/** The business reference the fake mail API counts a run's summary email under (`email:<bookingId>:<template>`). */
export function nightlySummaryServiceReference(runId: string): string {
  return `email:${nightlySummaryReference(runId)}:${NIGHTLY_SUMMARY_TEMPLATE}`;
}

/**
 * Builds the three jobs over the given dependencies (resolved lazily, on the first run).
 * @param jobs where the confirmation email job comes from @default {@link sampleJobs}
 */
export function createNightlyInvoiceJobs(
  deps: () => SampleDependencies = dependenciesFromEnv,
  jobs: Pick<SampleJobs, 'sendEmail'> = sampleJobs,
) {
  const userInvoices = defineJob({
    type: 'billing.user-invoices',
    queue: 'booking',
    schema: userInvoicesSchema,
    retry: SAMPLE_RETRY,
    rateLimits: [PARTNER_API_LIMIT],
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ userId, confirmedBeforeMs }, ctx): Promise<UserInvoicesResult> {
      const d = deps();
      // The bookings due, chosen once: a re-run finishes the same ones (some already invoiced).
      const due = await ctx.once('due', async () =>
        (await d.repository.listBookings(userId))
          .filter((b) => b.status === 'CONFIRMED' && (b.confirmedAtMs ?? 0) <= confirmedBeforeMs)
          .sort((a, b) => a.ordinal - b.ordinal)
          .map((b) => b.bookingId),
      );
      for (const bookingId of due) {
        const ref = { userId, bookingId };
        await runBookingStep(ref, 'invoice', ctx, d, issueInvoiceWork(`issue-invoice:${bookingId}`));
        ctx.enqueue(jobs.sendEmail, { ...ref, template: CONFIRMATION_TEMPLATE });
      }
      const invoiced = (await d.repository.listBookings(userId)).filter((b) => b.status === 'INVOICED');
      ctx.signal.throwIfAborted();
      return {
        userId,
        invoicedNow: due.length,
        invoices: invoiced.length,
        amountCents: invoiced.reduce((sum, b) => sum + b.amountCents, 0),
      };
    },
  });

  const nightlySummary = defineJob({
    type: 'billing.nightly-summary',
    queue: 'payments',
    schema: nightlySummarySchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ runId }, ctx) {
      const batch = ctx.batch;
      if (batch === undefined)
        throw new PermanentError('billing.nightly-summary runs only as a batch completion job');
      let users = 0;
      let failed = 0;
      let invoicedNow = 0;
      let amountCents = 0;
      for await (const child of batch.children()) {
        if (child.status !== 'succeeded') failed += 1;
        else users += 1;
        const result = child.result as Partial<UserInvoicesResult> | undefined;
        if (typeof result?.invoicedNow === 'number') invoicedNow += result.invoicedNow;
        if (typeof result?.amountCents === 'number') amountCents += result.amountCents;
      }
      const { messageId } = await ctx.once('send-summary', () =>
        deps().api.sendEmail(
          {
            bookingId: nightlySummaryReference(runId),
            to: NIGHTLY_SUMMARY_TO,
            template: NIGHTLY_SUMMARY_TEMPLATE,
          },
          { idempotencyKey: ctx.idempotencyKey('send-summary'), signal: ctx.signal },
        ),
      );
      return { runId, users, failed, invoicedNow, amountCents, messageId };
    },
  });

  /**
   * The recurring job: every user gets a `billing.user-invoices`, the batch's completion job sends
   * the summary. Its run is recorded in its run log (the report counts the runs of each firing:
   * lib/sample/report/schedules.ts).
   */
  const issueNightlyInvoices = defineJob({
    type: NIGHTLY_INVOICES_JOB,
    queue: 'booking',
    schema: nightlyInvoicesSchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ graceMinutes }, ctx): Promise<NightlyInvoicesResult> {
      const d = deps();
      await d.repository.recordJobRun(
        NIGHTLY_INVOICES_JOB,
        { jobId: ctx.jobId, atMs: d.now(), attempt: ctx.attempt, runId: randomUUID() },
        ctx.signal,
      );
      // Chosen once: a re-run (after a failure before the batch started) starts the same batch.
      const { userIds, confirmedBeforeMs } = await ctx.once('select', async () => ({
        userIds: await d.repository.listUserIds(ctx.signal),
        confirmedBeforeMs: d.now() - graceMinutes * 60_000,
      }));
      const runId = ctx.jobId;
      const { batchId } = ctx.startBatch({
        children: userIds.map((userId) => ({
          job: userInvoices,
          data: { runId, userId, confirmedBeforeMs },
          options: { partitionKey: userId },
        })),
        completion: { job: nightlySummary, data: { runId } },
        onChildDeadLettered: 'complete-with-failures',
        openLimitSeconds: NIGHTLY_OPEN_LIMIT_SECONDS,
      });
      ctx.logger.info('nightly invoice run started its batch', { batchId, users: userIds.length });
      return { runId, batchId, users: userIds.length };
    },
  });

  return { issueNightlyInvoices, userInvoices, nightlySummary };
}

/** The nightly run's jobs over the environment's dependencies, as the sample's workers run them. */
export const nightlyInvoiceJobs = createNightlyInvoiceJobs();
