/** Size and shape of a workload: its options, their defaults and their checks. */

/** Size and shape of a workload. */
export interface WorkloadOptions {
  /** Users, each a FIFO message group. Integer >= 1. @default 100 */
  readonly users?: number;
  /** Bookings per user, sent in order. Integer >= 1. @default 3 */
  readonly bookingsPerUser?: number;
  /** Seed of every random choice (SKUs, quantities, which bookings are sold out). @default 1 */
  readonly seed?: number;
  /** Bookings of a sold-out SKU (dead-lettered as out of stock, never retried). @default 2 */
  readonly outOfStock?: number;
  /** Malformed messages (bad JSON, schema failure, unknown type), one per queue in turn. @default 3 */
  readonly malformed?: number;
  /**
   * Payment jobs sent a second time with the same envelope id after everything else (delayed by
   * {@link RESEND_DELAY_SECONDS}), as a producer that retries a send would: the idempotency store
   * must absorb them. @default 0
   */
  readonly producerDuplicates?: number;
  /**
   * Small batches sent besides the workload (`npm run soak -- --batches N`,
   * lib/sample/soak-batches.ts, workload/soak-batches.ts), each with its own completion job; some
   * with a child dead-lettered on purpose, some with a nested batch. @default 0
   */
  readonly batches?: number;
}

/** A workload with every default filled in. */
export type ResolvedWorkloadOptions = Required<WorkloadOptions>;

/** Fills defaults and checks the options. @throws {RangeError} naming every bad option. */
export function resolveWorkloadOptions(options: WorkloadOptions = {}): ResolvedWorkloadOptions {
  const resolved = {
    users: 100,
    bookingsPerUser: 3,
    seed: 1,
    outOfStock: 2,
    malformed: 3,
    producerDuplicates: 0,
    batches: 0,
    ...options,
  };
  const problems: string[] = [];
  const int = (name: keyof ResolvedWorkloadOptions, min: number) => {
    const value = resolved[name];
    if (!Number.isInteger(value) || value < min)
      problems.push(`${name} must be an integer >= ${min}, got ${value}`);
  };
  int('users', 1);
  int('bookingsPerUser', 1);
  int('seed', 0);
  int('outOfStock', 0);
  int('malformed', 0);
  int('producerDuplicates', 0);
  int('batches', 0);
  if (problems.length === 0 && resolved.outOfStock > resolved.users * resolved.bookingsPerUser) {
    problems.push(`outOfStock (${resolved.outOfStock}) exceeds the number of bookings`);
  }
  if (problems.length > 0) throw new RangeError(`invalid workload: ${problems.join('; ')}`);
  return resolved;
}
