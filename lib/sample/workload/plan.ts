/**
 * The plan of a workload: users, stocks, bookings (which ones are sold out, which payments are
 * resent) and the malformed messages, as pure data from the options.
 */
import type { Booking } from '../domain.ts';
import { seededUniform } from '../external-service.ts';
import { type ResolvedWorkloadOptions, resolveWorkloadOptions, type WorkloadOptions } from './options.ts';

/** SKU with no stock: bookings of it are the deliberate out-of-stock failures. */
export const SOLD_OUT_SKU = 'sku-sold-out';

/** A malformed message the workload sends on purpose. */
export interface BadMessagePlan {
  readonly key: string;
  /** Logical queue it goes to. */
  readonly queue: string;
  readonly kind: 'bad JSON' | 'schema failure' | 'unknown job type';
  /** FIFO `MessageGroupId`, for the FIFO queue. */
  readonly groupId?: string;
}

/** Everything the workload will create and send; pure data from the options. */
export interface WorkloadPlan {
  readonly options: ResolvedWorkloadOptions;
  readonly stocks: readonly { readonly sku: string; readonly stock: number }[];
  readonly users: readonly { readonly userId: string; readonly email: string; readonly name: string }[];
  /** All bookings, ordered by ordinal then user (the send order). */
  readonly bookings: readonly Booking[];
  /** Booking ids of the deliberate out-of-stock bookings (no payment is sent for them). */
  readonly soldOut: ReadonlySet<string>;
  /** Booking ids whose payment job is sent twice (same id). */
  readonly resend: readonly string[];
  readonly badMessages: readonly BadMessagePlan[];
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Plans a workload: same options, same plan. */
export function planWorkload(options: WorkloadOptions = {}): WorkloadPlan {
  const o = resolveWorkloadOptions(options);
  const width = String(o.users).length;
  const total = o.users * o.bookingsPerUser;
  const regularSkus = Array.from({ length: 10 }, (_, i) => `sku-${pad(i + 1, 2)}`);
  // Enough stock that only the sold-out SKU ever runs out (at most 3 units per booking).
  const stocks = [...regularSkus.map((sku) => ({ sku, stock: total * 3 })), { sku: SOLD_OUT_SKU, stock: 0 }];
  const users = Array.from({ length: o.users }, (_, i) => {
    const userId = `u-${pad(i + 1, width)}`;
    return { userId, email: `${userId}@example.com`, name: `User ${i + 1}` };
  });
  // Pick the sold-out bookings by a seeded shuffle of all booking positions.
  const positions = Array.from({ length: total }, (_, i) => i)
    .map((i) => ({ i, r: seededUniform(o.seed, 'sold-out', i) }))
    .sort((a, b) => a.r - b.r)
    .slice(0, o.outOfStock)
    .map((p) => p.i);
  const soldOutPositions = new Set(positions);
  const bookings: Booking[] = [];
  const soldOut = new Set<string>();
  for (let ordinal = 1; ordinal <= o.bookingsPerUser; ordinal++) {
    users.forEach(({ userId }, u) => {
      const position = u * o.bookingsPerUser + (ordinal - 1);
      const bookingId = `b-${userId.slice(2)}-${ordinal}`;
      const sku = soldOutPositions.has(position)
        ? SOLD_OUT_SKU
        : (regularSkus[Math.floor(seededUniform(o.seed, 'sku', bookingId) * regularSkus.length)] ?? 'sku-01');
      if (sku === SOLD_OUT_SKU) soldOut.add(bookingId);
      const quantity = 1 + Math.floor(seededUniform(o.seed, 'quantity', bookingId) * 3);
      bookings.push({
        bookingId,
        userId,
        sku,
        quantity,
        amountCents: quantity * (500 + Math.floor(seededUniform(o.seed, 'price', bookingId) * 9_500)),
        ordinal,
        status: 'PENDING',
      });
    });
  }
  const kinds: BadMessagePlan['kind'][] = ['bad JSON', 'schema failure', 'unknown job type'];
  const queues: Record<BadMessagePlan['kind'], string> = {
    'bad JSON': 'payments',
    'schema failure': 'notifications',
    'unknown job type': 'booking',
  };
  const badMessages = Array.from({ length: o.malformed }, (_, i): BadMessagePlan => {
    const kind = kinds[i % kinds.length] ?? 'bad JSON';
    const plan = { key: `bad:${i + 1}`, kind, queue: queues[kind] };
    return kind === 'unknown job type' ? { ...plan, groupId: `bad-${i + 1}` } : plan;
  });
  const resend = bookings
    .filter((b) => !soldOut.has(b.bookingId))
    .map((b) => ({ id: b.bookingId, r: seededUniform(o.seed, 'resend', b.bookingId) }))
    .sort((a, b) => a.r - b.r)
    .slice(0, o.producerDuplicates)
    .map((x) => x.id);
  return { options: o, stocks, users, bookings, soldOut, resend, badMessages };
}

/** A job key: `<type>:<bookingId>`. */
export const jobKey = (type: string, bookingId: string): string => `${type}:${bookingId}`;

/** Jobs a plan creates when nothing is dead-lettered: 5 per booking (chain, email, payment), 1 per sold-out booking, the malformed messages. */
export function plannedJobs(plan: WorkloadPlan): number {
  return plan.bookings.length * 5 - plan.soldOut.size * 4 + plan.badMessages.length;
}
