/**
 * Sending a workload: the domain seeded first, then the jobs through {@link JobClient} in FIFO
 * order per user, the producer resends, and the malformed messages raw; the ledger of what was
 * sent when.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import pLimit from 'p-limit';
import { type BatchEntry, batchEntry, type JobClient } from '../../client/job-client.ts';
import { createEnvelope } from '../../core/envelope.ts';
import type { DomainRepository } from '../domain.ts';
import { sampleJobs } from '../jobs.ts';
import { type BadMessagePlan, jobKey, type WorkloadPlan } from './plan.ts';
import type { WorkloadTarget } from './target.ts';

/** Envelope `source` of the jobs the workload sends. */
export const WORKLOAD_SOURCE = '/sqs-jobs/workload';

/**
 * The body of a malformed message: JSON cut short, an envelope whose data fails the job's
 * schema, or an envelope of a job type no worker knows.
 */
export function badMessageBody(bad: BadMessagePlan, time: Date = new Date()): string {
  if (bad.kind === 'bad JSON') return `{"specversion":"1.0","id":"${bad.key}",`;
  const envelope =
    bad.kind === 'schema failure'
      ? createEnvelope({
          type: sampleJobs.sendEmail.type,
          source: WORKLOAD_SOURCE,
          id: bad.key,
          time,
          data: { userId: 'u-1' },
        })
      : createEnvelope({
          type: 'booking.cancel-everything',
          source: WORKLOAD_SOURCE,
          id: bad.key,
          time,
          data: { userId: 'nobody' },
          ...(bad.groupId ? { partitionKey: bad.groupId } : {}),
        });
  return JSON.stringify(envelope);
}

/** What was sent, when: the ledger reconciled against the evidence. */
export interface SentLedger {
  /** Job key → send time, epoch ms. */
  readonly sentAtMs: ReadonlyMap<string, number>;
  /** SQS message id → job key of the malformed messages. */
  readonly badMessageIds: ReadonlyMap<string, string>;
  /** Jobs sent a second time with the same id. */
  readonly resent: number;
}

/**
 * Delay of a producer resend, in seconds: a producer retries a send a little later. (One that
 * arrives while the original still runs is told "busy" and comes back when the original's lease
 * ends, about the job time limit later: correct, but a long wait at the end of a run.)
 */
export const RESEND_DELAY_SECONDS = 5;

/** Seeds the domain table with the plan's stocks, users and bookings. */
export async function seedDomain(
  repository: DomainRepository,
  plan: WorkloadPlan,
  concurrency = 16,
): Promise<void> {
  const limit = pLimit(concurrency);
  await Promise.all([
    ...plan.stocks.map((s) => limit(() => repository.putStock(s.sku, s.stock))),
    ...plan.users.map((u) => limit(() => repository.putUser(u))),
    ...plan.bookings.map((b) => limit(() => repository.putBooking(b))),
  ]);
}

/**
 * Sends the plan: round by round (the k-th booking of every user, then the next), so each user's
 * bookings enter their FIFO group in order; payments go with their bookings; then the malformed
 * messages, raw, because JobClient refuses to send them.
 * @throws when a send fails for good (JobClient reports failed entries).
 */
export async function sendWorkload(
  client: JobClient,
  target: WorkloadTarget,
  plan: WorkloadPlan,
  onSent: (count: number) => void = () => {},
): Promise<SentLedger> {
  const sentAtMs = new Map<string, number>();
  const badMessageIds = new Map<string, string>();
  const { reserveInventory, capturePayment } = sampleJobs;
  for (let ordinal = 1; ordinal <= plan.options.bookingsPerUser; ordinal++) {
    const round = plan.bookings.filter((b) => b.ordinal === ordinal);
    const entries = round.flatMap((b): BatchEntry[] => {
      const data = { userId: b.userId, bookingId: b.bookingId };
      const reserve = batchEntry(reserveInventory, data, {
        partitionKey: b.userId,
        id: `reserve-${b.bookingId}`,
      });
      if (plan.soldOut.has(b.bookingId)) return [reserve];
      return [reserve, batchEntry(capturePayment, data, { id: `capture-${b.bookingId}` })];
    });
    const at = Date.now();
    const result = await client.sendBatch(entries);
    if (result.failed.length > 0) {
      throw new Error(
        `could not send ${result.failed.length} jobs: ${JSON.stringify(result.failed.slice(0, 3))}`,
      );
    }
    for (const entry of entries) {
      sentAtMs.set(jobKey(entry.job.type, (entry.data as { bookingId: string }).bookingId), at);
    }
    onSent(entries.length);
  }
  const bookingsById = new Map(plan.bookings.map((b) => [b.bookingId, b]));
  const resend = plan.resend.flatMap((id) => {
    const b = bookingsById.get(id);
    return b
      ? [
          batchEntry(
            capturePayment,
            { userId: b.userId, bookingId: b.bookingId },
            { id: `capture-${id}`, delaySeconds: RESEND_DELAY_SECONDS },
          ),
        ]
      : [];
  });
  if (resend.length > 0) {
    const result = await client.sendBatch(resend);
    if (result.failed.length > 0) throw new Error(`could not resend ${result.failed.length} jobs`);
    onSent(resend.length);
  }
  for (const bad of plan.badMessages) {
    const url = target.queueUrls[bad.queue];
    if (!url) throw new Error(`no URL for queue ${bad.queue}`);
    const at = Date.now();
    // The producer's client: with injected SQS faults, a lost response makes the SDK send it
    // again (two malformed messages, one job key: both are matched to it by their body's id).
    const out = await target.producerSqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: badMessageBody(bad),
        ...(bad.groupId ? { MessageGroupId: bad.groupId, MessageDeduplicationId: `${bad.key}-${at}` } : {}),
      }),
    );
    if (out.MessageId) badMessageIds.set(out.MessageId, bad.key);
    sentAtMs.set(bad.key, at);
    onSent(1);
  }
  return { sentAtMs, badMessageIds, resent: resend.length };
}
