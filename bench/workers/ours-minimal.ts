/**
 * The minimal sqs-jobs worker of the cold-start, bundle and heap rows (bench/cold-start.ts): one
 * job, its data checked by a hand-written Standard Schema (no schema library), default settings
 * (Logger, metrics, the DynamoDB idempotency store from `JOBS_IDEMPOTENCY_TABLE`), imported from
 * the package's runtime entry as a user would. `BENCH_NO_STORE=1` runs it without the store (the
 * heap row, which runs thousands of invocations without a table).
 */
import { createWorker, defineJob } from '../../lib/index.ts';
import { compute, ORDER_JOB } from './order-job.ts';

const order = defineJob({ ...ORDER_JOB, run: async (data) => compute(data) });

export const handler = createWorker({
  jobs: [order],
  ...(process.env.BENCH_NO_STORE === '1' ? { idempotency: false as const } : {}),
});
