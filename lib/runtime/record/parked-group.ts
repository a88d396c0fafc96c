/**
 * FIFO group parking around a run (group-park.ts decides the policy): before it, whether the
 * record's group is parked behind another job; after its blocking job completes, clearing the
 * park; when a record is dead-lettered, parking its group (or unparking it under `continue`). Only a parking worker with a FIFO group does any read or write here.
 */
import { backoffDelaySeconds, type RetryPolicy } from '../../core/backoff.ts';
import { GROUP_PARKED_REASON } from '../dead-letter.ts';
import type { BatchParking } from '../group-park.ts';
import { type DeadLetterInput, deadLetter } from './dead-lettering.ts';
import type { AnyJob } from './deps.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { failLease } from './release-lease.ts';
import { storeUnavailable } from './store-unavailable.ts';

/**
 * FIFO, parking worker: what the park of the record's group means for it (read once per group
 * and batch). Not parked, or parked behind this very job (a redrive of the blocker): undefined,
 * run it. Parked behind another job: dead-lettered as `GroupParked` without running. The store
 * unreadable: retried like any store outage, without spending an attempt.
 */
export async function checkParkedGroup(run: RecordRun, job: AnyJob): Promise<RecordOutcome | undefined> {
  const { deps, groupId } = run;
  if (!deps.parking || groupId === undefined || !run.identity) return undefined;
  let check: Awaited<ReturnType<BatchParking['check']>>;
  try {
    check = await deps.parking.check(groupId, run.identity.pks);
  } catch (error) {
    return storeUnavailable(
      run,
      job,
      error,
      'could not read whether the message group is parked; record will be retried',
      true,
    );
  }
  if (check.kind === 'free') return undefined;
  if (check.kind === 'blocker') {
    run.blocker = check.park;
    run.logger.info('the blocking job of a parked message group runs again', { messageGroupId: groupId });
    return undefined;
  }
  const error = deps.parking.parkedError(groupId, check.park);
  return deadLetter(run, { error, reason: GROUP_PARKED_REASON, attempts: 0, job, noPark: true });
}

/**
 * After the blocking job of a parked group completed (or was found completed): clears the park,
 * so the group's later records run. When that write fails the record is reported failed: its
 * next delivery is absorbed as a duplicate (the key is completed) and clears the park then; the
 * group's later records wait behind it meanwhile, as on any FIFO retry.
 */
export async function unparkAfterCompletion(run: RecordRun, job: AnyJob): Promise<RecordOutcome | undefined> {
  const { deps, groupId, blocker } = run;
  if (!deps.parking || groupId === undefined || !blocker) return undefined;
  try {
    const outcome = await deps.parking.unpark(groupId, blocker.blockerPk);
    run.logger.info('the blocking job completed; its message group is no longer parked', {
      messageGroupId: groupId,
      unpark: outcome,
    });
    return undefined;
  } catch (error) {
    const delaySeconds = backoffDelaySeconds(run.receiveCount, job.retry, 0, deps.random);
    run.logger.error(
      'the blocking job completed but its message group could not be unparked; record will be retried',
      {
        outcome: 'retry',
        reason: 'unpark-failed',
        messageGroupId: groupId,
        delaySeconds,
        error,
      },
    );
    return retry(delaySeconds, 'unpark-failed');
  }
}

/**
 * FIFO, parking worker, before the DLQ send: parks the record's group when its job's policy is
 * `park` (group-park.ts decides). A park that cannot be written must not let the group go on, so
 * the record is then not dead-lettered but reported failed (its lease released as after a failed
 * DLQ send): it comes back and is dead-lettered, parking its group, once the store answers.
 */
export async function parkOnDeadLetter(
  run: RecordRun,
  input: DeadLetterInput,
  policy: RetryPolicy,
): Promise<RecordOutcome | undefined> {
  const { deps, groupId } = run;
  if (!deps.parking || groupId === undefined) return undefined;
  try {
    const parked = await deps.parking.parkOnDeadLetter(
      groupId,
      input.job,
      run.identity,
      run.record.messageId,
      input.reason,
    );
    if (parked) {
      run.logger.warn('message group parked: its later messages are dead-lettered until this job completes', {
        messageGroupId: groupId,
        park: parked.status,
        blockerJobType: parked.park.blockerJobType,
        blockerJobId: parked.park.blockerJobId,
        parkCount: parked.park.parkCount,
      });
    }
    return undefined;
  } catch (error) {
    if (input.lease && !input.keepLeaseOnSendFailure)
      await failLease(run, input.lease, input.error, 'transient');
    const delaySeconds = backoffDelaySeconds(input.attempts, policy, 0, deps.random);
    run.logger.error('could not park the message group; the record stays on the queue', {
      outcome: 'retry',
      reason: 'park-failed',
      messageGroupId: groupId,
      delaySeconds,
      error,
      jobError: input.error,
    });
    return retry(delaySeconds, 'park-failed');
  }
}

/**
 * The blocker of a parked group dead-lettered again after its job's policy became `continue`:
 * its park goes, so the group goes on as that policy says. Best effort: a failure is logged, and
 * the park stays until its TTL or an operator deletes it.
 */
export async function unparkUnderContinue(run: RecordRun, input: DeadLetterInput): Promise<void> {
  const { deps, groupId, blocker } = run;
  if (!deps.parking || groupId === undefined || !blocker || deps.parking.policyOf(input.job) !== 'continue')
    return;
  try {
    await deps.parking.unpark(groupId, blocker.blockerPk);
  } catch (error) {
    run.logger.error('could not unpark the message group of a job whose policy is now continue', {
      messageGroupId: groupId,
      error,
    });
  }
}
