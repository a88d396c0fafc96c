/**
 * The minimal sqs-jobs worker of the cold-start, bundle and heap rows (bench/cold-start.ts): one
 * job, its data checked by a hand-written Standard Schema (no schema library), default settings
 * (Logger, metrics, the DynamoDB idempotency store from `JOBS_IDEMPOTENCY_TABLE`), imported from
 * the package's runtime entry as a user would. `BENCH_NO_STORE=1` runs it without the store (the
 * heap row, which runs thousands of invocations without a table).
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { createWorker, defineJob } from '../../lib/index.ts';

interface OrderData {
  readonly orderId: string;
  readonly userId: string;
  readonly amountCents: number;
}

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

/** The job of both sides: a small computation over the data (the CPU rows' job). */
export function compute(data: OrderData): { checksum: number } {
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
