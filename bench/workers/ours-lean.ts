/**
 * The minimal sqs-jobs worker of bench/workers/ours-minimal.ts, the same job, imported from the
 * lean entry `sqs-jobs/worker` with no optional feature (the job uses none): what a user who cares
 * about bytes bundles (issue 21, bundle target row). `BENCH_NO_STORE=1` as there.
 */
import { createWorker, defineJob } from '../../lib/worker.ts';
import { compute, ORDER_JOB } from './order-job.ts';

const order = defineJob({ ...ORDER_JOB, run: async (data) => compute(data) });

export const handler = createWorker({
  jobs: [order],
  ...(process.env.BENCH_NO_STORE === '1' ? { idempotency: false as const } : {}),
});
