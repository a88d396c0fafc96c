/** The per-user order check of the sample's FIFO booking chain (reserve → confirm → invoice). */
import type { OrderLog } from '../domain.ts';
import { BOOKING_STEPS } from '../domain.ts';

/** An order violation found in a user's log. */
export interface OrderViolation {
  readonly userId: string;
  readonly description: string;
}

/**
 * Finds per-user order violations in the booking logs: within a user, each step must see the
 * bookings in the order they were placed (ordinals increasing in log order), and each booking
 * must go reserve → confirm → invoice.
 */
export function findOrderViolations(logs: readonly OrderLog[]): OrderViolation[] {
  const violations: OrderViolation[] = [];
  for (const log of logs) {
    const highest = new Map<string, { ordinal: number; bookingId: string }>();
    const stepsSeen = new Map<string, number>();
    for (const entry of log.entries) {
      const prior = highest.get(entry.step);
      if (prior && entry.ordinal < prior.ordinal) {
        violations.push({
          userId: log.userId,
          description: `${entry.step} of booking #${entry.ordinal} (${entry.bookingId}) after booking #${prior.ordinal} (${prior.bookingId})`,
        });
      } else {
        highest.set(entry.step, { ordinal: entry.ordinal, bookingId: entry.bookingId });
      }
      const index = BOOKING_STEPS.indexOf(entry.step);
      const reached = stepsSeen.get(entry.bookingId) ?? -1;
      if (index !== reached + 1) {
        violations.push({
          userId: log.userId,
          description: `${entry.step} of booking ${entry.bookingId} after ${reached < 0 ? 'no step' : BOOKING_STEPS[reached]}`,
        });
      }
      stepsSeen.set(entry.bookingId, Math.max(reached, index));
    }
  }
  return violations;
}
