/**
 * Ends a failed run's lease in the idempotency store: `transient` (the next delivery counts on)
 * or `permanent` (dead-lettered). Best effort: the record's outcome never depends on this write.
 */
import type { Lease } from '../idempotency/guard.ts';
import { UNKNOWN_JOB_TYPE } from '../telemetry.ts';
import type { RecordRun } from './record-run.ts';

/**
 * Records the failure on the lease; a fenced or failed write is logged, never thrown.
 * @param failedAtMs when the failure happened, epoch ms (`Lease.fail`). @default now
 */
export async function failLease(
  run: RecordRun,
  lease: Lease,
  error: unknown,
  kind: 'transient' | 'permanent',
  failedAtMs?: number,
): Promise<void> {
  try {
    const write = await lease.fail(error, kind, failedAtMs);
    if (write === 'fenced') {
      run.deps.metrics.add(run.jobType ?? UNKNOWN_JOB_TYPE, 'JobLeaseFenced');
      run.logger.warn('lease was taken over by another run before it was released', { kind });
    }
  } catch (leaseError) {
    // The lease expires on its own; the record's outcome does not depend on this write.
    run.logger.error('could not record the failure in the idempotency store', { kind, error: leaseError });
  }
}
