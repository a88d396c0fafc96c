/**
 * The minimal sqs-jobs worker of bench/workers/ours-minimal.ts, the same job, imported from the
 * lean entry `sqs-jobs/worker` with no optional feature (the job uses none): what a user who cares
 * about bytes bundles (issue 21, bundle target row). `BENCH_NO_STORE=1` as there.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { createWorker, defineJob } from '../../lib/worker.ts';

interface OrderData {
  readonly orderId: string;
  readonly userId: string;
  readonly amountCents: number;
}

// The same hand-written schema and job as ours-minimal.ts, written out rather than imported:
// importing that module would bundle its worker (and the main entry) into this one.
const orderSchema: StandardSchemaV1<unknown, OrderData> = {
  '~standard': {
    version: 1,
    vendor: 'bench',
    validate(value) {
      const v = value as Partial<OrderData> | null;
      return typeof v === 'object' &&
        v !== null &&
        typeof v.orderId === 'string' &&
        typeof v.userId === 'string' &&
        Number.isInteger(v.amountCents)
        ? { value: v as OrderData }
        : { issues: [{ message: 'expected { orderId, userId, amountCents }' }] };
    },
  },
};

function compute(data: OrderData): { checksum: number } {
  let h = 2166136261;
  const text = `${data.orderId}:${data.userId}:${data.amountCents}`;
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  }
  return { checksum: h >>> 0 };
}

const order = defineJob({
  type: 'bench.compute',
  queue: 'bench',
  schema: orderSchema,
  run: async (data) => compute(data),
});

export const handler = createWorker({
  jobs: [order],
  ...(process.env.BENCH_NO_STORE === '1' ? { idempotency: false as const } : {}),
});
