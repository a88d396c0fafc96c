/**
 * The sample's own rate limit on the partner API (payments, invoices, emails): a shared, adaptive
 * limit per tenant, set below the partner's, so the fleet of workers never pushes a tenant past
 * what the partner allows and 429s stay near zero (`npm start` shows both sides).
 *
 * - The key is what the partner limits by (lib/sample/external-service.ts, `tenantOf`): the user
 *   for payments and invoices, the recipient address for emails. One bucket per key, shared by
 *   every worker and queue (payments and invoices of one user take from the same bucket, as they
 *   spend the same partner budget).
 * - {@link PARTNER_API_LIMIT}: 0.8 requests per second per tenant, burst 1, against the partner's
 *   {@link SAMPLE_PARTNER_RATE_LIMIT} of 1 per second, burst 1. Our bucket and the partner's run on
 *   two clocks in two processes, and a request granted here reaches the partner a few to a few
 *   hundred milliseconds later: the 20% margin (1.25 s between our grants against the 1 s the
 *   partner needs) absorbs that skew, where equal rates would answer 429 on every jitter.
 * - Adaptive: a 429 makes the run report `permit.throttled()` before its error goes up (the job
 *   retries it as usual), which halves the tenant's rate for the whole fleet (at most once a
 *   second) and lets it recover over about 10 s. The rate never falls below a quarter of the
 *   configured one ({@link PARTNER_API_LIMIT}'s `minPerSecond`), so a burst of injected 429s slows
 *   a tenant to one call every 5 s, never to the 2-minute waits of the 1% default.
 * - Only with `SAMPLE_RATE_LIMITS=on` in the workers' environment, which the sample run sets when
 *   the partner is rate-limited (`npm start -- --partner-rate-limit 1`) unless `--no-limits` (the
 *   same workload against the same partner, to compare). Off otherwise: each token costs DynamoDB
 *   calls, pointless without a partner limit to stay under.
 *
 * Waiting spends no attempt (docs/architecture.md, "Flow control"): on the standard queues
 * (payments, notifications) a waiting job is re-sent with a delay; on the FIFO booking queue
 * (invoices) it waits in place and each wait spends one receive, so the booking queue gets
 * {@link FIFO_LIMIT_WAIT_RECEIVES} more receives before its redrive policy (lib/stacks/jobs-stack.ts).
 */
import { defineRateLimit, type JobContext } from 'sqs-jobs';
import { ExternalApiError } from './external-api.ts';
import type { SampleLimitFacts } from './report/flow-control.ts';

/** The partner API's own limit per tenant in `npm start` (requests per second, burst). */
export const SAMPLE_PARTNER_RATE_LIMIT = { requestsPerSecond: 1, burst: 1 } as const;

/** Our limit on the partner, per tenant: below {@link SAMPLE_PARTNER_RATE_LIMIT} (see the module doc). */
export const PARTNER_API_LIMIT = defineRateLimit({
  name: 'sample-partner-api',
  perSecond: 0.8,
  burst: 1,
  adaptive: { minPerSecond: 0.2, decreaseFactor: 0.5 },
});

/** Environment variable of the workers: `on` makes the sample jobs take {@link PARTNER_API_LIMIT}. */
export const SAMPLE_RATE_LIMITS_ENV = 'SAMPLE_RATE_LIMITS';

/**
 * Extra receives of the FIFO booking queue for limit waits: an invoice waiting for its tenant's
 * token stays in its group with a visibility delay, and each wait is a receive that SQS counts
 * towards `maxReceiveCount`. An invoice competes only with its user's payments and earlier
 * invoices (at most 2 × 20 bookings per user, the workload's bound), and each wait lasts until a
 * token is due, so it waits a few times at most; 20 spare receives keep the redrive policy for
 * crashes only.
 */
export const FIFO_LIMIT_WAIT_RECEIVES = 20;

/** Whether the workers take {@link PARTNER_API_LIMIT}: only with `SAMPLE_RATE_LIMITS=on`. */
export function partnerLimitOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SAMPLE_RATE_LIMITS_ENV] === 'on';
}

/**
 * Calls the partner for `tenant` within {@link PARTNER_API_LIMIT}: takes a token (waiting as
 * `ctx.rateLimit` does), makes the call, and on a 429 answer reports throttling before rethrowing
 * the error (transient: the job retries after its `Retry-After`). Without the limit
 * ({@link partnerLimitOn} false) it only makes the call.
 * @throws what `call` throws; `LimitWait` (the job waits outside the run, no attempt spent) and
 *   `LimitStoreError` (transient) from `ctx.rateLimit`.
 */
export async function callPartner<T>(
  ctx: JobContext,
  tenant: string,
  call: () => Promise<T>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T> {
  if (!partnerLimitOn(env)) return call();
  const permit = await ctx.rateLimit(PARTNER_API_LIMIT, { key: tenant });
  try {
    return await call();
  } catch (error) {
    if (error instanceof ExternalApiError && error.status === 429) {
      // The 429 is what the job must report; a failed throttling report only leaves the rate as it is.
      await permit.throttled().catch((reportError: unknown) => {
        ctx.logger.warn('could not lower the partner rate limit after a 429', { tenant, error: reportError });
      });
    }
    throw error;
  }
}

/** {@link PARTNER_API_LIMIT} as the report shows it, on or off. */
export function sampleLimitFacts(on: boolean): SampleLimitFacts {
  const { name, perSecond, burst, adaptive } = PARTNER_API_LIMIT;
  return { on, name, perSecond, burst, ...(adaptive ? { minPerSecond: adaptive.minPerSecond } : {}) };
}
