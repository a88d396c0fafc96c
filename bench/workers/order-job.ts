/**
 * The job of sqs-jobs' minimal workers (ours-minimal.ts from `sqs-jobs`, ours-lean.ts from
 * `sqs-jobs/worker`): its data checked by a hand-written Standard Schema (no schema library) and a
 * small computation (the CPU rows' job, as powertools-minimal.ts computes it). A module of its
 * own, with no worker, so each worker bundles only its own entry's code.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';

export interface OrderData {
  readonly orderId: string;
  readonly userId: string;
  readonly amountCents: number;
}

/** `{ orderId, userId, amountCents }`, checked by hand. */
export const orderSchema: StandardSchemaV1<unknown, OrderData> = {
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

/** The job of both sides: a small computation over the data. */
export function compute(data: OrderData): { checksum: number } {
  let h = 2166136261;
  const text = `${data.orderId}:${data.userId}:${data.amountCents}`;
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  }
  return { checksum: h >>> 0 };
}

/** The spec both workers define their job from (`defineJob` of their own entry). */
export const ORDER_JOB = { type: 'bench.compute', queue: 'bench', schema: orderSchema } as const;
