/**
 * The sample's nightly invoice run: a batch (docs/architecture.md, "Batches"). One job fans out
 * one invoice statement per user and, when every user's is done, one summary email is sent,
 * exactly once.
 *
 * - `billing.nightly-invoice-run` (FIFO `booking`, its own message group): starts the batch.
 * - `billing.user-statement` (standard `notifications`), one per user: reads the user's bookings
 *   and returns what was invoiced (ids and amounts only; nothing written).
 * - `billing.nightly-summary` (standard `payments`), the completion job: reads every child's
 *   outcome (`ctx.batch.children()`), then sends the summary email through the mail API under
 *   `ctx.once` with an idempotency key, so the fake service's side-effect count for its reference
 *   (`nightly-<runId>`) is the evidence that it ran exactly once (the `npm start` report).
 */
import { defineJob, PermanentError } from 'sqs-jobs';
import { z } from 'zod';
import {
  dependenciesFromEnv,
  SAMPLE_JOB_TIMEOUT_SECONDS,
  SAMPLE_RETRY,
  type SampleDependencies,
} from './jobs.ts';

const id = z.string().min(1).max(128);
/** Data of `billing.nightly-invoice-run`: the run's id and the users to invoice (ids only). */
export const nightlyRunSchema = z.object({ runId: id, userIds: z.array(id).max(10_000) });
/** Data of `billing.user-statement`. */
export const userStatementSchema = z.object({ runId: id, userId: id });
/** Data of `billing.nightly-summary`. */
export const nightlySummarySchema = z.object({ runId: id });

/** Email template of the nightly summary. */
export const NIGHTLY_SUMMARY_TEMPLATE = 'nightly-invoice-summary';
/** Where the nightly summary goes. */
export const NIGHTLY_SUMMARY_TO = 'billing@example.com';
/** The batch's open limit: the run is checked (and alarms) this long after it started, in seconds. */
export const NIGHTLY_OPEN_LIMIT_SECONDS = 30;

/** The `bookingId` field of a run's summary email at the mail API. */
export function nightlySummaryReference(runId: string): string {
  return `nightly-${runId}`;
}

/** The business reference the fake mail API counts a run's summary email under (`email:<bookingId>:<template>`). */
export function nightlySummaryServiceReference(runId: string): string {
  return `email:${nightlySummaryReference(runId)}:${NIGHTLY_SUMMARY_TEMPLATE}`;
}

/** Builds the three jobs over the given dependencies (resolved lazily, on the first run). */
export function createNightlyInvoiceJobs(deps: () => SampleDependencies = dependenciesFromEnv) {
  const userStatement = defineJob({
    type: 'billing.user-statement',
    queue: 'notifications',
    schema: userStatementSchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ userId }, ctx) {
      const bookings = await deps().repository.listBookings(userId);
      ctx.signal.throwIfAborted();
      const invoiced = bookings.filter((b) => b.status === 'INVOICED');
      return {
        userId,
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
      let amountCents = 0;
      for await (const child of batch.children()) {
        if (child.status !== 'succeeded') failed += 1;
        else users += 1;
        const result = child.result as { amountCents?: unknown } | undefined;
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
      return { runId, users, failed, amountCents, messageId };
    },
  });

  const nightlyInvoiceRun = defineJob({
    type: 'billing.nightly-invoice-run',
    queue: 'booking',
    schema: nightlyRunSchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ runId, userIds }, ctx) {
      // Each statement in its user's own group on the fair (standard) queue; the summary after all.
      return ctx.startBatch({
        children: userIds.map((userId) => ({
          job: userStatement,
          data: { runId, userId },
          options: { partitionKey: userId },
        })),
        completion: { job: nightlySummary, data: { runId } },
        onChildDeadLettered: 'complete-with-failures',
        openLimitSeconds: NIGHTLY_OPEN_LIMIT_SECONDS,
      });
    },
  });

  return { nightlyInvoiceRun, userStatement, nightlySummary };
}

/** The nightly run's jobs over the environment's dependencies, as the sample's workers run them. */
export const nightlyInvoiceJobs = createNightlyInvoiceJobs();
