/**
 * The presets of a local run and how the command line's numbers become a run: `npm start` (a
 * one-minute sample run with external API faults) and the soak (`npm run soak`: 10,000 jobs with
 * every fault kind on). Pure; lib/cli/start/ reads them.
 */

import type { AwsFaultRates } from '../local/aws-faults.ts';
import { SAMPLE_JOB_TIMEOUT_SECONDS } from './jobs.ts';

/** Jobs per booking when nothing is dead-lettered: reserve, confirm, invoice, email, payment. */
export const JOBS_PER_BOOKING = 5;

/**
 * Delay of the fake service's `overrun` fault, in ms: past the sample jobs' time limit
 * (`SAMPLE_JOB_TIMEOUT_SECONDS`), so the job's own limit aborts the run (when the client timeout
 * is longer still) while the side effect happens later.
 */
export const OVERRUN_DELAY_MS = SAMPLE_JOB_TIMEOUT_SECONDS * 1000 + 1_000;

/** How `--dynamodb-fault-rate` is split over the DynamoDB kinds (response lost: writes only). */
export const DYNAMODB_FAULT_SPLIT = {
  dynamodbThroughputExceeded: 0.3,
  dynamodbThrottling: 0.3,
  dynamodbInternalError: 0.1,
  dynamodbUnavailable: 0.1,
  dynamodbResponseLost: 0.2,
} as const;

/** How `--sqs-fault-rate` is split for sends and deletes (receives: all 503). */
export const SQS_FAULT_SPLIT = { error: 2 / 3, responseLost: 1 / 3 } as const;

/** Defaults of a run. */
export interface Preset {
  readonly name: 'start' | 'soak';
  readonly users: number;
  readonly bookingsPerUser: number;
  /** Share of external API calls that fail (timeout, 429, 503, 400). */
  readonly faultRate: number;
  readonly slowRate: number;
  readonly overrunRate: number;
  readonly killRate: number;
  readonly lostResponseRate: number;
  readonly dynamodbFaultRate: number;
  readonly sqsFaultRate: number;
  readonly outOfStock: number;
  readonly malformed: number;
  readonly duplicates: number;
  readonly timeoutSeconds: number;
  readonly externalTimeoutMs: number;
  /** Bookings that get a reservation hold whose expiry job is sent for later (lib/sample/workload/scheduled.ts). */
  readonly holds: number;
  /** How long a hold lasts before its expiry job runs, in ms (minutes in a real deployment; seconds here). */
  readonly holdDelayMs: number;
  /** Bookings of the nightly invoice run's backlog; the run fires the nightly schedule now, delivered twice. */
  readonly nightlyBacklog: number;
  /** Probability that a firing of the local EventBridge Scheduler is delivered twice (a fault kind). */
  readonly schedulerDuplicateDeliveryRate: number;
  /**
   * The fake partner API's rate limit per tenant, requests per second (burst: the same, rounded
   * up); undefined: none. The sample's own limit sits below it (lib/sample/partner-limit.ts).
   */
  readonly partnerRateLimit?: number;
}

/**
 * `npm start`: 100 users × 3 bookings, external API faults, lost responses. The partner's rate
 * limit per tenant is off by default (`--partner-rate-limit 1` turns it on, with the sample's own
 * limit below it; `--no-limits` shows the 429s without ours).
 */
export const START_PRESET: Preset = {
  name: 'start',
  users: 100,
  bookingsPerUser: 3,
  faultRate: 0.05,
  slowRate: 0.03,
  overrunRate: 0,
  killRate: 0,
  lostResponseRate: 0.01,
  dynamodbFaultRate: 0,
  sqsFaultRate: 0,
  outOfStock: 2,
  malformed: 3,
  duplicates: 5,
  timeoutSeconds: 180,
  externalTimeoutMs: 5_000,
  holds: 16,
  holdDelayMs: 3_000,
  nightlyBacklog: 3,
  // The nightly firing is delivered twice by the run itself (fire now with a duplicate).
  schedulerDuplicateDeliveryRate: 0,
};

/**
 * `npm run soak`: 500 users × 4 bookings × 5 jobs = 10,000 jobs with every fault kind on at
 * moderate rates, a fifth of the Scheduler's firings delivered twice. The external client timeout (15 s) is above the jobs' 10 s time limit, so an
 * `overrun` call (and a `timeout` one) is cut by the job's own limit.
 */
export const SOAK_PRESET: Preset = {
  name: 'soak',
  users: 500,
  bookingsPerUser: 4,
  faultRate: 0.05,
  slowRate: 0.03,
  overrunRate: 0.01,
  killRate: 0.01,
  lostResponseRate: 0.01,
  dynamodbFaultRate: 0.03,
  sqsFaultRate: 0.03,
  outOfStock: 20,
  malformed: 30,
  duplicates: 50,
  timeoutSeconds: 1_800,
  externalTimeoutMs: 15_000,
  holds: 200,
  holdDelayMs: 5_000,
  nightlyBacklog: 20,
  schedulerDuplicateDeliveryRate: 0.2,
};

/** Jobs of a plan of this size when nothing is dead-lettered. */
export const jobsOf = (users: number, bookingsPerUser: number): number =>
  users * bookingsPerUser * JOBS_PER_BOOKING;

/**
 * The users of a run: `users`, or with `jobs` the nearest `jobs / (5 × bookingsPerUser)` within
 * [1, `maxUsers`].
 */
export function usersFor(
  size: { readonly users: number; readonly jobs?: number; readonly bookingsPerUser: number },
  maxUsers: number,
): number {
  if (size.jobs === undefined) return size.users;
  const users = Math.round(size.jobs / (JOBS_PER_BOOKING * size.bookingsPerUser));
  return Math.min(maxUsers, Math.max(1, users));
}

/** The deliberate bad jobs of a run. */
export interface DeliberateCounts {
  readonly outOfStock: number;
  readonly malformed: number;
  readonly duplicates: number;
}

/**
 * The deliberate bad jobs of a run (out-of-stock bookings, malformed messages, producer resends):
 * as given for `npm start` and for every count given on the command line; otherwise the soak's
 * defaults scale with the run (a 1,000-job soak gets a tenth of the 10,000-job soak's, at least 1
 * each, and at most half the bookings sold out).
 */
export function deliberateCounts(
  counts: DeliberateCounts,
  size: { readonly users: number; readonly bookingsPerUser: number },
  preset: Preset,
  given: (count: keyof DeliberateCounts) => boolean,
): DeliberateCounts {
  if (preset.name !== 'soak') return { ...counts };
  const bookings = size.users * size.bookingsPerUser;
  const scale = bookings / (preset.users * preset.bookingsPerUser);
  const pick = (count: keyof DeliberateCounts) =>
    given(count) || counts[count] === 0 ? counts[count] : Math.max(1, Math.round(counts[count] * scale));
  return {
    outOfStock: given('outOfStock')
      ? counts.outOfStock
      : Math.min(pick('outOfStock'), Math.floor(bookings / 2)),
    malformed: pick('malformed'),
    duplicates: pick('duplicates'),
  };
}

/**
 * The AWS fault rates of a run from the two shares: DynamoDB item calls split by
 * {@link DYNAMODB_FAULT_SPLIT}; SQS sends and deletes split by {@link SQS_FAULT_SPLIT}, receives
 * all 503. Undefined when both are 0: no fault proxy at all.
 */
export function awsFaultRatesFor(dynamodbFaultRate: number, sqsFaultRate: number): AwsFaultRates | undefined {
  const d = dynamodbFaultRate;
  const q = sqsFaultRate;
  if (d === 0 && q === 0) return undefined;
  return {
    dynamodbThroughputExceeded: d * DYNAMODB_FAULT_SPLIT.dynamodbThroughputExceeded,
    dynamodbThrottling: d * DYNAMODB_FAULT_SPLIT.dynamodbThrottling,
    dynamodbInternalError: d * DYNAMODB_FAULT_SPLIT.dynamodbInternalError,
    dynamodbUnavailable: d * DYNAMODB_FAULT_SPLIT.dynamodbUnavailable,
    dynamodbResponseLost: d * DYNAMODB_FAULT_SPLIT.dynamodbResponseLost,
    sqsSendError: q * SQS_FAULT_SPLIT.error,
    sqsSendResponseLost: q * SQS_FAULT_SPLIT.responseLost,
    sqsReceiveError: q,
    sqsDeleteError: q * SQS_FAULT_SPLIT.error,
    sqsDeleteResponseLost: q * SQS_FAULT_SPLIT.responseLost,
  };
}
