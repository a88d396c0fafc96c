/**
 * A user, a booking and stock of the sample domain that the `send` commands printed by
 * `npm start -- --keep-running` (and `--no-workload`) refer to, so a job sent by hand runs to
 * completion: the booking chain (reserve → confirm → invoice → confirmation email) and a payment.
 * Seeded after the report (never part of it). Sending them again completes again: each step
 * recognises its own earlier success, a paid booking returns its payment.
 */

import type { SendExample } from '../../local/serve.ts';
import type { DomainRepository } from '../domain.ts';
import { sampleJobs } from '../jobs.ts';
import type { WorkloadTarget } from './target.ts';

/** The demo's ids. */
export const DEMO = { userId: 'demo-user', bookingId: 'demo-booking-1', sku: 'sku-demo' } as const;

/** Writes the demo user, its booking (PENDING) and stock for it. Idempotent. */
export async function seedDemo(repository: DomainRepository): Promise<void> {
  await repository.putUser({ userId: DEMO.userId, email: `${DEMO.userId}@example.com`, name: 'Demo User' });
  await repository.putStock(DEMO.sku, 1_000_000);
  await repository.putBooking({
    bookingId: DEMO.bookingId,
    userId: DEMO.userId,
    sku: DEMO.sku,
    quantity: 1,
    amountCents: 4_200,
    ordinal: 1,
    status: 'PENDING',
  });
}

/** The `send` commands of the demo: a booking on the FIFO queue (group = user), a payment. */
export function demoSends(target: WorkloadTarget): SendExample[] {
  const data = JSON.stringify({ userId: DEMO.userId, bookingId: DEMO.bookingId });
  const sends: SendExample[] = [];
  if (target.queueUrls.booking !== undefined) {
    sends.push({
      comment: `a booking that completes: reserve -> confirm -> invoice -> confirmation email (group ${DEMO.userId})`,
      queueUrl: target.queueUrls.booking,
      type: sampleJobs.reserveInventory.type,
      data,
      partitionKey: DEMO.userId,
    });
  }
  if (target.queueUrls.payments !== undefined) {
    sends.push({
      comment: 'its payment',
      queueUrl: target.queueUrls.payments,
      type: sampleJobs.capturePayment.type,
      data,
    });
  }
  return sends;
}
