/**
 * The sample app's jobs.
 *
 * - FIFO `booking`, one `MessageGroupId` per user: `booking.reserve-inventory` →
 *   `booking.confirm-reservation` → `booking.issue-invoice`; each step enqueues the next only when
 *   it succeeds (job chaining), and the invoice step also enqueues `notifications.send-email`.
 * - Standard `payments`: `payments.capture` through the payment API.
 * - Standard `notifications`: `notifications.send-email` through the mail API.
 *
 * Payloads carry ids only; every run reloads the current state from the domain table. Each step is
 * idempotent on its own (conditional writes that recognise their own earlier success), external
 * calls carry `ctx.idempotencyKey(step)` and run inside `ctx.once(step, ...)`, so a retry of a
 * half-done job neither repeats a side effect nor loses one.
 *
 * The jobs that call the partner (capture, invoice, email) take its rate limit per tenant first
 * (`callPartner`, lib/sample/partner-limit.ts), inside their `ctx.once` step: a replayed step
 * takes no token.
 *
 * Each booking step appends itself to the user's order log (see `DomainRepository.appendOrderLog`):
 * the evidence `npm start` uses to count per-user order violations.
 */

import { randomUUID } from 'node:crypto';
import { defineJob, type JobContext, PermanentError, type RateLimitDefinition } from 'sqs-jobs';
import { z } from 'zod';
import { type Booking, type BookingStep, DomainRepository } from './domain.ts';
import { ExternalApi } from './external-api.ts';
import { defineExpireHold } from './hold-jobs.ts';
import { callPartner, PARTNER_API_LIMIT } from './partner-limit.ts';

/** What the sample jobs use; injectable for tests. */
export interface SampleDependencies {
  readonly repository: DomainRepository;
  readonly api: ExternalApi;
  /** Clock for evidence timestamps, epoch ms. */
  readonly now: () => number;
}

/** Retry policy shared by the sample jobs: short delays so a local run finishes in about a minute. */
export const SAMPLE_RETRY = { maxAttempts: 5, baseDelaySeconds: 1, maxDelaySeconds: 20 } as const;
/** Soft time limit of every sample job, in seconds (`jobTimeoutSeconds` of `SAMPLE_QUEUES`). */
export const SAMPLE_JOB_TIMEOUT_SECONDS = 10;
/** Email template of the booking confirmation. */
export const CONFIRMATION_TEMPLATE = 'booking-confirmed';

const id = z.string().min(1).max(128);
/** Data of the booking steps and of `payments.capture`: ids only. */
export const bookingRefSchema = z.object({ userId: id, bookingId: id });
/** Data of a booking step. */
export type BookingRef = z.infer<typeof bookingRefSchema>;
/** Data of `notifications.send-email`. */
export const sendEmailSchema = z.object({
  userId: id,
  bookingId: id,
  template: z.enum([CONFIRMATION_TEMPLATE]),
});
/** Data of `notifications.send-email`. */
export type SendEmailData = z.infer<typeof sendEmailSchema>;
/**
 * Data of `booking.issue-nightly-invoices`: how long a confirmed booking may wait for its invoice
 * before the nightly run issues it, in minutes (the chain normally invoices within seconds).
 */
export const nightlyInvoicesSchema = z.object({ graceMinutes: z.number().int().min(0).max(10_080) });
/** Data of `booking.issue-nightly-invoices`. */
export type NightlyInvoicesData = z.infer<typeof nightlyInvoicesSchema>;
/** Job type of the nightly invoice run (the sample stack's recurring job, lib/stacks/jobs-stack.ts). */
export const NIGHTLY_INVOICES_JOB = 'booking.issue-nightly-invoices';

let defaults: SampleDependencies | undefined;

/**
 * Dependencies built from the environment, once per runtime instance: `APP_TABLE` names the
 * domain table, `EXTERNAL_API_URL` the external service (docs/contracts.md).
 * @throws {PermanentError} when `APP_TABLE` is not set (a redeploy fixes it, a retry does not).
 */
export function dependenciesFromEnv(): SampleDependencies {
  if (defaults) return defaults;
  const tableName = process.env.APP_TABLE;
  if (!tableName) throw new PermanentError('APP_TABLE is not set: the sample jobs have no domain table');
  defaults = { repository: new DomainRepository({ tableName }), api: new ExternalApi(), now: Date.now };
  return defaults;
}

/** The sample app's job definitions, by role. */
export interface SampleJobs {
  readonly reserveInventory: ReturnType<typeof defineBookingStep>;
  readonly confirmReservation: ReturnType<typeof defineBookingStep>;
  readonly issueInvoice: ReturnType<typeof defineBookingStep>;
  readonly capturePayment: ReturnType<typeof defineCapture>;
  readonly sendEmail: ReturnType<typeof defineSendEmail>;
  readonly issueNightlyInvoices: ReturnType<typeof defineNightlyInvoices>;
  /** Reservation hold expiry on the FIFO booking queue (goes as a one-time schedule): lib/sample/hold-jobs.ts. */
  readonly expireHold: ReturnType<typeof defineExpireHold>;
  /** The same on the standard payments queue (goes with DelaySeconds). */
  readonly expirePaymentHold: ReturnType<typeof defineExpireHold>;
}

/** Result of `booking.issue-nightly-invoices`. */
export interface NightlyInvoicesResult {
  /** Bookings confirmed longer than the grace period and not invoiced: an invoice job was queued for each. */
  readonly invoicesQueued: number;
}

/** Result of a booking step. */
export interface BookingStepResult {
  readonly bookingId: string;
  readonly status: Booking['status'];
  /** True when an earlier run had already done this step (a duplicate that got past the store). */
  readonly alreadyDone: boolean;
}

const ORDER: readonly Booking['status'][] = ['PENDING', 'RESERVED', 'CONFIRMED', 'INVOICED'];
const AFTER_STEP: Record<BookingStep, Booking['status']> = {
  reserve: 'RESERVED',
  confirm: 'CONFIRMED',
  invoice: 'INVOICED',
};

function isAtOrPast(status: Booking['status'], step: BookingStep): boolean {
  return ORDER.indexOf(status) >= ORDER.indexOf(AFTER_STEP[step]);
}

function defineBookingStep(
  type: string,
  step: BookingStep,
  deps: () => SampleDependencies,
  work: (
    booking: Booking,
    ctx: JobContext,
    d: SampleDependencies,
  ) => Promise<Record<string, string | number>>,
  next: (data: BookingRef, ctx: JobContext) => void,
  rateLimits: readonly RateLimitDefinition[] = [],
) {
  return defineJob<BookingRef, BookingStepResult>({
    type,
    queue: 'booking',
    schema: bookingRefSchema,
    retry: SAMPLE_RETRY,
    ...(rateLimits.length > 0 ? { rateLimits } : {}),
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run(data, ctx) {
      const d = deps();
      const booking = await d.repository.getBooking(data.userId, data.bookingId, ctx.signal);
      const alreadyDone = isAtOrPast(booking.status, step);
      if (!alreadyDone) {
        const extra = await work(booking, ctx, d);
        await d.repository.advance(booking, step, extra, ctx.signal);
      } else {
        ctx.logger.info('booking step already done; not repeating it', { step, status: booking.status });
      }
      await d.repository.appendOrderLog(
        data.userId,
        { bookingId: data.bookingId, ordinal: booking.ordinal, step, atMs: d.now(), attempt: ctx.attempt },
        ctx.signal,
      );
      // The child's id derives from this job's id: enqueuing again on a re-run creates no second child.
      next(data, ctx);
      return { bookingId: data.bookingId, status: AFTER_STEP[step], alreadyDone };
    },
  });
}

function defineCapture(deps: () => SampleDependencies) {
  return defineJob<BookingRef, { paymentId: string }>({
    type: 'payments.capture',
    queue: 'payments',
    schema: bookingRefSchema,
    retry: SAMPLE_RETRY,
    rateLimits: [PARTNER_API_LIMIT],
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run(data, ctx) {
      const d = deps();
      const booking = await d.repository.getBooking(data.userId, data.bookingId, ctx.signal);
      if (booking.paymentId) return { paymentId: booking.paymentId };
      const { paymentId } = await ctx.once('capture', () =>
        callPartner(ctx, booking.userId, () =>
          d.api.capturePayment(
            { bookingId: booking.bookingId, userId: booking.userId, amountCents: booking.amountCents },
            { idempotencyKey: ctx.idempotencyKey('capture'), signal: ctx.signal },
          ),
        ),
      );
      await d.repository.recordOnBooking(
        booking,
        { paymentId, paymentAtMs: d.now(), paymentAttempt: ctx.attempt },
        ctx.signal,
      );
      return { paymentId };
    },
  });
}

function defineSendEmail(deps: () => SampleDependencies) {
  return defineJob<SendEmailData, { messageId: string }>({
    type: 'notifications.send-email',
    queue: 'notifications',
    schema: sendEmailSchema,
    retry: SAMPLE_RETRY,
    rateLimits: [PARTNER_API_LIMIT],
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run(data, ctx) {
      const d = deps();
      const booking = await d.repository.getBooking(data.userId, data.bookingId, ctx.signal);
      if (booking.emailId) return { messageId: booking.emailId };
      const user = await d.repository.getUser(data.userId, ctx.signal);
      // The partner limits emails by recipient.
      const { messageId } = await ctx.once('send-email', () =>
        callPartner(ctx, user.email, () =>
          d.api.sendEmail(
            { bookingId: data.bookingId, to: user.email, template: data.template },
            { idempotencyKey: ctx.idempotencyKey('send-email'), signal: ctx.signal },
          ),
        ),
      );
      await d.repository.recordOnBooking(
        booking,
        { emailId: messageId, emailAtMs: d.now(), emailAttempt: ctx.attempt },
        ctx.signal,
      );
      return { messageId };
    },
  });
}

/**
 * The field's nightly invoice run, a safety net under the chain: every booking confirmed more
 * than `graceMinutes` ago and still not invoiced gets a `booking.issue-invoice` job in its user's
 * group (so it runs after anything of that user already queued; a booking invoiced meanwhile is
 * recognised by the step and not invoiced twice). Runs as a recurring job (sample stack: 23:00
 * Europe/Berlin); a firing delivered twice is one job, so it queues its invoices once.
 */
function defineNightlyInvoices(
  deps: () => SampleDependencies,
  issueInvoice: ReturnType<typeof defineBookingStep>,
) {
  return defineJob<NightlyInvoicesData, NightlyInvoicesResult>({
    type: NIGHTLY_INVOICES_JOB,
    queue: 'booking',
    schema: nightlyInvoicesSchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run(data, ctx) {
      const d = deps();
      const cutoffMs = d.now() - data.graceMinutes * 60_000;
      const due = (await d.repository.listBookingsInStatus('CONFIRMED', ctx.signal))
        .filter((b) => (b.confirmedAtMs ?? 0) <= cutoffMs)
        // A stable order: a re-run queues the same children (their ids follow their position).
        .sort((a, b) => a.userId.localeCompare(b.userId) || a.bookingId.localeCompare(b.bookingId));
      // The run's own evidence (the report counts the runs of each firing): lib/sample/report/schedules.ts.
      await d.repository.recordJobRun(
        NIGHTLY_INVOICES_JOB,
        { jobId: ctx.jobId, atMs: d.now(), attempt: ctx.attempt, runId: randomUUID() },
        ctx.signal,
      );
      for (const b of due)
        ctx.enqueue(issueInvoice, { userId: b.userId, bookingId: b.bookingId }, { partitionKey: b.userId });
      if (due.length > 0)
        ctx.logger.info('nightly invoice run queued invoices', { invoicesQueued: due.length });
      return { invoicesQueued: due.length };
    },
  });
}

/**
 * Builds the sample jobs over the given dependencies (resolved lazily, on the first run).
 * @param deps @default {@link dependenciesFromEnv}
 */
export function createSampleJobs(deps: () => SampleDependencies = dependenciesFromEnv): SampleJobs {
  const sendEmail = defineSendEmail(deps);
  const capturePayment = defineCapture(deps);
  const issueInvoice = defineBookingStep(
    'booking.issue-invoice',
    'invoice',
    deps,
    async (booking, ctx, d) => {
      const { invoiceId } = await ctx.once('issue-invoice', () =>
        callPartner(ctx, booking.userId, () =>
          d.api.issueInvoice(
            {
              bookingId: booking.bookingId,
              userId: booking.userId,
              sku: booking.sku,
              quantity: booking.quantity,
            },
            { idempotencyKey: ctx.idempotencyKey('issue-invoice'), signal: ctx.signal },
          ),
        ),
      );
      return { invoiceId, invoicedAtMs: d.now() };
    },
    (data, ctx) => ctx.enqueue(sendEmail, { ...data, template: CONFIRMATION_TEMPLATE }),
    [PARTNER_API_LIMIT],
  );
  const confirmReservation = defineBookingStep(
    'booking.confirm-reservation',
    'confirm',
    deps,
    async (_booking, _ctx, d) => ({ confirmedAtMs: d.now() }),
    (data, ctx) => ctx.enqueue(issueInvoice, data),
  );
  const reserveInventory = defineBookingStep(
    'booking.reserve-inventory',
    'reserve',
    deps,
    async (booking, ctx, d) => {
      // Conditional decrement; OutOfStockError (permanent) goes straight to the DLQ.
      await d.repository.reserveStock(booking.sku, booking.bookingId, booking.quantity, ctx.signal);
      return { reservedAtMs: d.now() };
    },
    (data, ctx) => ctx.enqueue(confirmReservation, data),
  );
  const issueNightlyInvoices = defineNightlyInvoices(deps, issueInvoice);
  const holdSettings = { retry: SAMPLE_RETRY, timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS };
  const expireHold = defineExpireHold('booking', deps, holdSettings);
  const expirePaymentHold = defineExpireHold('payments', deps, holdSettings);
  return {
    reserveInventory,
    confirmReservation,
    issueInvoice,
    capturePayment,
    sendEmail,
    issueNightlyInvoices,
    expireHold,
    expirePaymentHold,
  };
}

/** The sample jobs with dependencies from the environment: what the Lambda functions run. */
export const sampleJobs: SampleJobs = createSampleJobs();

/** Job types of the booking chain, in order. */
export const BOOKING_CHAIN = [
  sampleJobs.reserveInventory.type,
  sampleJobs.confirmReservation.type,
  sampleJobs.issueInvoice.type,
] as const;
