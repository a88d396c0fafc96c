/**
 * The sample application's queues and tables as plain data: read by the CDK stack (to build
 * them), by the sample jobs (to name their queue) and by the local runtime. Plain data only, so
 * the stack does not import the Lambda runtime and the runtime does not import CDK.
 */

/** One queue of the sample app and the worker that consumes it. */
export interface SampleQueue {
  /** Logical name; also the suffix of `JOBS_QUEUE_URL_<NAME>` and the `Queue` metric dimension. */
  readonly name: string;
  /** FIFO queue (per-user ordering by MessageGroupId) or standard (parallel). */
  readonly fifo: boolean;
  /** Worker entry point, relative to the project root. */
  readonly entry: string;
  /** The highest `retry.maxAttempts` among the jobs of this queue. */
  readonly maxAttempts: number;
  /** The highest `timeoutSeconds` among the jobs of this queue. */
  readonly jobTimeoutSeconds: number;
  /** Logical names of the queues its jobs enqueue to (its own included when it chains). */
  readonly enqueuesTo: readonly string[];
}

export const SAMPLE_QUEUES = [
  {
    name: 'booking',
    fifo: true,
    entry: 'functions/booking.ts',
    maxAttempts: 5,
    jobTimeoutSeconds: 10,
    enqueuesTo: ['booking', 'notifications'],
  },
  {
    name: 'payments',
    fifo: false,
    entry: 'functions/payments.ts',
    maxAttempts: 5,
    jobTimeoutSeconds: 10,
    enqueuesTo: [],
  },
  {
    name: 'notifications',
    fifo: false,
    entry: 'functions/notifications.ts',
    maxAttempts: 5,
    jobTimeoutSeconds: 10,
    enqueuesTo: [],
  },
] as const satisfies readonly SampleQueue[];

/** Logical queue names of the sample app. */
export type SampleQueueName = (typeof SAMPLE_QUEUES)[number]['name'];
