/**
 * The concurrency stage (`defineJob({ concurrency })`): takes a slot of the job's key before the
 * idempotency lease, so a record over the limit leaves before any attempt is counted; it waits
 * (limit-wait.ts). The slot ends with the run: released after it (whatever its outcome), or at
 * the lease's expiry when the run never got to release it (a crash, a timeout).
 */
import { concurrencyKeyOf } from '../limits/concurrency.ts';
import type { Slot } from '../limits/slots.ts';
import type { AnyJob } from './deps.ts';
import { failed } from './failed.ts';
import { waitForLimit } from './limit-wait.ts';
import type { RecordOutcome } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { storeUnavailable } from './store-unavailable.ts';

/**
 * Takes the record's slot: the slot, `undefined` when the job has no concurrency limit, or the
 * record's outcome (a wait, a dead letter for a bad key, a retry when the store is down).
 * @param slotExpiresAtMs when the slot ends unless released: the lease's expiry, epoch ms.
 */
export async function takeSlot(
  run: RecordRun,
  job: AnyJob,
  data: unknown,
  slotExpiresAtMs: number,
): Promise<{ slot: Slot | undefined } | { outcome: RecordOutcome }> {
  const concurrency = job.concurrency;
  if (concurrency === undefined) return { slot: undefined };
  const { deps } = run;
  let key: string;
  try {
    key = concurrencyKeyOf(job.type, concurrency, data);
  } catch (error) {
    // A ConcurrencyKeyError: permanent, dead-lettered with its evidence.
    return { outcome: await failed(run, job, error, undefined, undefined) };
  }
  const name = concurrency.name ?? job.type;
  if (deps.limits === undefined) {
    // createWorker refuses this combination; a hand-built deps gets a clear dead letter.
    return {
      outcome: await failed(
        run,
        job,
        new Error(`job ${job.type} declares a concurrency limit but the worker has no limit store`),
        undefined,
        undefined,
      ),
    };
  }
  const memoKey = `${name}\u0000${key}`;
  if (deps.fullConcurrencyKeys?.has(memoKey)) {
    // Found full earlier in this invocation: a slot freed since is taken by the next delivery.
    return { outcome: await waitForLimit(run, job, { kind: 'concurrency', limit: name, key, minWaitMs: 0 }) };
  }
  let taken: Awaited<ReturnType<typeof deps.limits.slots.acquire>>;
  try {
    taken = await deps.limits.slots.acquire({
      name,
      key,
      limit: concurrency.limit,
      expiresAtMs: slotExpiresAtMs,
    });
  } catch (error) {
    return {
      outcome: await storeUnavailable(
        run,
        job,
        error,
        'concurrency slots unavailable; record will be retried',
        false,
      ),
    };
  }
  if (taken.status === 'acquired') return { slot: taken.slot };
  deps.fullConcurrencyKeys?.add(memoKey);
  return { outcome: await waitForLimit(run, job, { kind: 'concurrency', limit: name, key, minWaitMs: 0 }) };
}

/** Frees a slot after the run; a failure is logged (the slot then ends at its expiry). Never throws. */
export async function releaseSlot(run: RecordRun, slot: Slot | undefined): Promise<void> {
  if (slot === undefined) return;
  try {
    await slot.release();
  } catch (error) {
    run.logger.warn('could not free the concurrency slot; it ends with the lease', { error });
  }
}
