/**
 * Job chaining: ctx.enqueue collects; children go out through JobClient after run succeeds and
 * before the parent completes, with ids derived from the parent so a re-run makes no second child.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { childJobId, deduplicationIdOf, type JobEnvelope } from '../../lib/runtime/envelope.ts';
import { TransientError } from '../../lib/runtime/errors.ts';
import { defineJob, type EnqueueOptions } from '../../lib/runtime/job.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { jobBody, queueUrl, sqsRecord } from '../factories/sqs.ts';
import { failedIds, workerHarness } from '../factories/worker.ts';

const BOOKING_URL = queueUrl('booking.fifo');
const MAIL_URL = queueUrl('notifications');

const confirm = defineJob({
  type: 'booking.confirm',
  queue: 'booking',
  schema: z.object({ bookingId: z.string() }),
  run: async () => {},
});
const mail = defineJob({
  type: 'mail.send',
  queue: 'notifications',
  schema: z.object({ template: z.string() }),
  run: async () => {},
});

type Plan = { confirm?: EnqueueOptions[]; mails?: number; fail?: boolean; badChild?: boolean };

function parentJob(journal: string[], plan: () => Plan) {
  return defineJob({
    type: 'booking.reserve',
    queue: 'booking',
    schema: z.object({ bookingId: z.string() }),
    run: async ({ bookingId }, ctx) => {
      const p = plan();
      for (const options of p.confirm ?? []) ctx.enqueue(confirm, { bookingId }, options);
      for (let i = 0; i < (p.mails ?? 0); i++) ctx.enqueue(mail, { template: `t${i}` });
      if (p.badChild) ctx.enqueue(mail, { template: 42 } as unknown as { template: string });
      journal.push('run:end');
      if (p.fail) throw new TransientError('inventory service 503');
      return 'reserved';
    },
  });
}

const parentBody = (id = 'parent-1') =>
  jobBody('booking.reserve', { bookingId: 'b-1' }, { id, source: '/checkout', partitionKey: 'user-9' });
const parentRecord = (id?: string, receiveCount = 1) =>
  sqsRecord({ body: parentBody(id), groupId: 'user-9', receiveCount });

function harness(journal: string[], plan: () => Plan, guard?: FakeGuard) {
  const h = workerHarness({
    fifo: true,
    idempotency: guard ?? false,
    queueUrls: { booking: BOOKING_URL, notifications: MAIL_URL },
    jobs: [parentJob(journal, plan)],
  });
  h.sqs.failWhen((call) => {
    journal.push(`sqs:${call.action}`);
    return undefined;
  });
  return h;
}

const envelopes = (h: ReturnType<typeof harness>) =>
  h.sqs.batchEntries().map((entry) => JSON.parse(entry.MessageBody ?? '{}') as JobEnvelope);

describe('ctx.enqueue', () => {
  it('sends children after run succeeds and before the parent is completed', async () => {
    const journal: string[] = [];
    const guard = new FakeGuard({ journal });
    const h = harness(journal, () => ({ confirm: [{}], mails: 1 }), guard);
    const { response } = await h.invoke([parentRecord()]);
    expect(response.batchItemFailures).toEqual([]);
    expect(journal.filter((e) => e !== 'sqs:SendMessageBatch')).toEqual(['run:end', 'lease:complete']);
    expect(journal.indexOf('sqs:SendMessageBatch')).toBeGreaterThan(journal.indexOf('run:end'));
    expect(journal.lastIndexOf('sqs:SendMessageBatch')).toBeLessThan(journal.indexOf('lease:complete'));
  });

  it('sends nothing when run fails', async () => {
    const journal: string[] = [];
    const h = harness(journal, () => ({ confirm: [{}], mails: 2, fail: true }));
    const record = parentRecord();
    const { response } = await h.invoke([record]);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(h.sqs.batchEntries()).toEqual([]);
  });

  it('derives child ids from the parent, per child type, and keeps the parent partition key by default', async () => {
    const journal: string[] = [];
    const h = harness(journal, () => ({ confirm: [{}, { partitionKey: 'user-other' }], mails: 2 }));
    await h.invoke([parentRecord()]);
    const parent = { source: '/checkout', id: 'parent-1' };
    const sent = envelopes(h);
    expect(sent.map((e) => [e.type, e.id, e.partitionkey])).toEqual([
      ['booking.confirm', childJobId(parent, 'booking.confirm', 0), 'user-9'],
      ['booking.confirm', childJobId(parent, 'booking.confirm', 1), 'user-other'],
      ['mail.send', childJobId(parent, 'mail.send', 0), 'user-9'],
      ['mail.send', childJobId(parent, 'mail.send', 1), 'user-9'],
    ]);
    expect(sent.every((e) => e.source === '/sqs-jobs/jobs')).toBe(true);
    const confirmEntry = h.sqs.batchEntries()[0];
    expect(confirmEntry?.MessageGroupId).toBe('user-9');
    expect(confirmEntry?.MessageDeduplicationId).toBe(deduplicationIdOf(sent[0] as JobEnvelope));
  });

  it('reads child queue URLs from JOBS_QUEUE_URL_<NAME> when no queueUrls option is given', async () => {
    const journal: string[] = [];
    const h = workerHarness({
      fifo: true,
      env: { JOBS_QUEUE_URL_NOTIFICATIONS: MAIL_URL },
      jobs: [parentJob(journal, () => ({ mails: 1 }))],
    });
    const { response } = await h.invoke([parentRecord()]);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.sqs.calls.find((c) => c.action === 'SendMessageBatch')?.input.QueueUrl).toBe(MAIL_URL);
  });

  it('counts a child that could not be sent as a transient failure of the parent; the re-run reuses the ids', async () => {
    const journal: string[] = [];
    const guard = new FakeGuard({ journal });
    const h = harness(journal, () => ({ confirm: [{}], mails: 1 }), guard);
    let sqsDown = true;
    h.sqs.failWhen((call) =>
      sqsDown && call.action === 'SendMessageBatch' && call.input.QueueUrl === MAIL_URL
        ? Object.assign(new Error('We encountered an internal error'), {
            name: 'InternalError',
            $fault: 'server',
          })
        : undefined,
    );
    const first = parentRecord();
    const one = await h.invoke([first]);
    expect(failedIds(one.response)).toEqual([first.messageId]);
    expect(guard.leaseCalls.map((c) => (c.op === 'fail' ? `fail:${c.kind}` : c.op))).toEqual([
      'fail:transient',
    ]);
    const firstIds = envelopes(h).map((e) => e.id);

    sqsDown = false;
    const two = await h.invoke([parentRecord(undefined, 2)]);
    expect(two.response.batchItemFailures).toEqual([]);
    const secondIds = envelopes(h)
      .map((e) => e.id)
      .slice(firstIds.length);
    expect(new Set(secondIds)).toEqual(new Set(firstIds));
    expect(guard.leaseCalls.at(-1)?.op).toBe('complete');
  });

  it('dead-letters the parent when its children are refused before sending (a re-run would build the same)', async () => {
    const journal: string[] = [];
    const h = harness(journal, () => ({ badChild: true }));
    const { response } = await h.invoke([parentRecord()]);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.sqs.batchEntries()).toEqual([]);
    const attributes = h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.ErrorName?.StringValue).toBe('ChildRejectedError');
  });
});
