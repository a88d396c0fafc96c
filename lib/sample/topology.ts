/**
 * The sample application's queues: read by the CDK stack (to build them), by the local runtime
 * and by the tests. Each queue names its worker entry and the queues its jobs enqueue to; the
 * jobs it runs are the sample jobs whose `queue` is its name (lib/sample/jobs.ts), and its
 * `maxAttempts` / `jobTimeoutSeconds` come from those job definitions: the numbers are written
 * once, in the jobs' `retry` and `timeoutSeconds`.
 *
 * Adding a queue: add an entry here, its worker in functions/, and its jobs (with `queue` set to
 * its name) in lib/sample/jobs.ts. Nothing else needs a type-level change.
 */
import { sampleJobs } from './jobs.ts';
import { nightlyInvoiceJobs } from './nightly-invoices.ts';
import { soakBatchJobs } from './soak-batches.ts';

/** A sample job as the topology reads it (a `defineJob` result). */
export interface SampleJob {
  readonly type: string;
  readonly queue: string;
  readonly retry: { readonly maxAttempts: number };
  readonly timeoutSeconds: number;
}

/** One queue of the sample app and the worker that consumes it. */
export interface SampleQueue {
  /** Logical name; also the suffix of `JOBS_QUEUE_URL_<NAME>` and the `Queue` metric dimension. */
  readonly name: string;
  /** FIFO queue (per-user ordering by MessageGroupId) or standard (parallel). */
  readonly fifo: boolean;
  /** Worker entry point, relative to the project root. */
  readonly entry: string;
  /** Logical names of the queues its jobs enqueue to (its own included when it chains). */
  readonly enqueuesTo: readonly string[];
  /** The sample jobs sent to this queue (`job.queue === name`), which its worker runs. */
  readonly jobs: readonly SampleJob[];
  /** The highest `retry.maxAttempts` among {@link jobs} (derived, for readers without CDK). */
  readonly maxAttempts: number;
  /** The highest `timeoutSeconds` among {@link jobs}, in seconds (derived). */
  readonly jobTimeoutSeconds: number;
}

const ALL_JOBS: readonly SampleJob[] = [
  ...Object.values(sampleJobs),
  ...Object.values(nightlyInvoiceJobs),
  ...Object.values(soakBatchJobs),
];

/** The queue with its jobs and what they need. A queue without jobs gets 0s (JobQueue refuses it). */
function sampleQueue<const N extends string>(queue: {
  readonly name: N;
  readonly fifo: boolean;
  readonly entry: string;
  readonly enqueuesTo: readonly string[];
}): SampleQueue & { readonly name: N } {
  const jobs = ALL_JOBS.filter((job) => job.queue === queue.name);
  return {
    ...queue,
    jobs,
    maxAttempts: Math.max(0, ...jobs.map((job) => job.retry.maxAttempts)),
    jobTimeoutSeconds: Math.max(0, ...jobs.map((job) => job.timeoutSeconds)),
  };
}

export const SAMPLE_QUEUES = [
  sampleQueue({
    name: 'booking',
    fifo: true,
    entry: 'functions/booking.ts',
    // payments: the nightly run's batch completion job (sent by its last user job) and its watchdog.
    enqueuesTo: ['booking', 'notifications', 'payments'],
  }),
  sampleQueue({ name: 'payments', fifo: false, entry: 'functions/payments.ts', enqueuesTo: [] }),
  // notifications: the soak's batches (./soak-batches.ts) start, count and complete on it.
  sampleQueue({
    name: 'notifications',
    fifo: false,
    entry: 'functions/notifications.ts',
    enqueuesTo: ['notifications'],
  }),
] as const;

/**
 * A recurring job of the sample app: JobQueue's `RecurringJob` for the queue `queue` (the stack
 * declares each on its queue; the local runtime fires them from the synthesized template).
 */
export interface SampleRecurringJob {
  readonly queue: string;
  /** Schedule name in the queue's group; firings are jobs `<name>@<scheduled time>`. */
  readonly name: string;
  readonly job: SampleJob;
  /** EventBridge Scheduler cron or rate expression. */
  readonly schedule: string;
  /** IANA time zone of the cron's wall-clock times. */
  readonly timeZone: string;
  readonly data: unknown;
  /** FIFO `MessageGroupId` of every firing. */
  readonly partitionKey?: string;
}

/**
 * The field's nightly invoice run: every night at 23:00 Berlin time (CET/CEST, whichever is in
 * force), a batch of one job per user invoicing that user's bookings confirmed more than an hour
 * ago and still not invoiced, then one summary email (lib/sample/nightly-invoices.ts). The firing
 * is in its own message group of the FIFO booking queue, so it never waits behind a user's bookings.
 */
export const NIGHTLY_INVOICES: SampleRecurringJob = {
  queue: 'booking',
  name: 'nightly-invoices',
  job: nightlyInvoiceJobs.issueNightlyInvoices,
  schedule: 'cron(0 23 * * ? *)',
  timeZone: 'Europe/Berlin',
  data: { graceMinutes: 60 },
  partitionKey: 'nightly-invoices',
};

/** The sample app's recurring jobs. */
export const SAMPLE_RECURRING_JOBS: readonly SampleRecurringJob[] = [NIGHTLY_INVOICES];

/** Logical queue names of the sample app. */
export type SampleQueueName = (typeof SAMPLE_QUEUES)[number]['name'];
