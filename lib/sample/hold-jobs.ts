/**
 * The sample's reservation holds, as jobs: when a booking is made, its hold gets an expiry job
 * sent for later (`JobClient.send(..., { delayMs })`); if the booking is confirmed first, the job
 * is cancelled (`JobClient.cancel`) and never runs; otherwise it runs at its time and releases
 * the hold (docs/schedules.md).
 *
 * The same job on two queues shows both ways a job travels to its time: on the FIFO `booking`
 * queue (in the user's message group) it goes as a one-time EventBridge Scheduler schedule, since
 * FIFO queues take no `DelaySeconds`; on the standard `payments` queue a hold under 15 minutes
 * goes as an SQS message with `DelaySeconds`.
 *
 * Every run that reaches a hold is recorded on it (`DomainRepository.expireHold`), once per run
 * (a new run id each time `run` starts), so a report can tell a cancelled job that ran anyway, a
 * job that ran before its time, and a duplicate run.
 */
import { randomUUID } from 'node:crypto';
import { defineJob, type RetryPolicy } from 'sqs-jobs';
import { z } from 'zod';
import type { DomainRepository, HoldStatus } from './domain.ts';

const id = z.string().min(1).max(128);
/** Data of an expiry job: the hold it releases, by ids. */
export const holdRefSchema = z.object({ userId: id, holdId: id });
/** Data of an expiry job. */
export type HoldRef = z.infer<typeof holdRefSchema>;

/** Result of an expiry job. */
export interface ExpireHoldResult {
  readonly holdId: string;
  /** `EXPIRED` (released, now or by an earlier run) or `CONFIRMED` (the booking had confirmed it: nothing released). */
  readonly status: HoldStatus;
}

/** What an expiry job needs: the domain table and a clock (epoch ms). */
export interface HoldDependencies {
  readonly repository: DomainRepository;
  readonly now: () => number;
}

/** Job types of the expiry jobs, by queue. */
export const EXPIRE_HOLD_JOBS = {
  booking: 'booking.expire-hold',
  payments: 'payments.expire-hold',
} as const;

/**
 * The expiry job of a hold on `queue` (`booking`: FIFO, partition key = the user; `payments`:
 * standard). Idempotent: a re-run finds the hold `EXPIRED` and releases nothing again.
 * @throws (from its run) `HoldNotFoundError`, permanent, when the hold does not exist.
 */
export function defineExpireHold(
  queue: keyof typeof EXPIRE_HOLD_JOBS,
  deps: () => HoldDependencies,
  settings: { readonly retry: Partial<RetryPolicy>; readonly timeoutSeconds: number },
) {
  return defineJob<HoldRef, ExpireHoldResult>({
    type: EXPIRE_HOLD_JOBS[queue],
    queue,
    schema: holdRefSchema,
    retry: settings.retry,
    timeoutSeconds: settings.timeoutSeconds,
    async run(data, ctx) {
      const d = deps();
      const status = await d.repository.expireHold(
        data.userId,
        data.holdId,
        { jobId: ctx.jobId, atMs: d.now(), attempt: ctx.attempt, runId: randomUUID() },
        ctx.signal,
      );
      if (status === 'CONFIRMED')
        ctx.logger.warn('expiry job ran on a confirmed hold: nothing released', { holdId: data.holdId });
      return { holdId: data.holdId, status };
    },
  });
}
