/**
 * Job chaining: ctx.enqueue collects; children go out through JobSender (JobClient's send path)
 * after run succeeds and before the parent completes, with ids derived from the parent so a re-run
 * makes no second child.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  childJobId,
  deduplicationIdOf,
  derivedTraceId,
  type EnvelopeLineage,
  type JobEnvelope,
} from '../../lib/core/envelope.ts';
import { TransientError } from '../../lib/core/errors.ts';
import { traceparentProblem } from '../../lib/core/trace-context.ts';
import { defaultJobKey, jobRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { defineJob, type EnqueueOptions, type JobLineage } from '../../lib/runtime/job.ts';
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

type Plan = {
  confirm?: EnqueueOptions[];
  mails?: number;
  fail?: boolean;
  badChild?: boolean;
  seen?: (lineage: JobLineage) => void;
};

function parentJob(journal: string[], plan: () => Plan) {
  return defineJob({
    type: 'booking.reserve',
    queue: 'booking',
    schema: z.object({ bookingId: z.string() }),
    run: async ({ bookingId }, ctx) => {
      const p = plan();
      p.seen?.(ctx.lineage);
      for (const options of p.confirm ?? []) ctx.enqueue(confirm, { bookingId }, options);
      for (let i = 0; i < (p.mails ?? 0); i++) ctx.enqueue(mail, { template: `t${i}` });
      if (p.badChild) ctx.enqueue(mail, { template: 42 } as unknown as { template: string });
      journal.push('run:end');
      if (p.fail) throw new TransientError('inventory service 503');
      return 'reserved';
    },
  });
}

const parentBody = (id = 'parent-1', lineage?: EnvelopeLineage) =>
  jobBody(
    'booking.reserve',
    { bookingId: 'b-1' },
    { id, source: '/checkout', partitionKey: 'user-9', ...(lineage ? { lineage } : {}) },
  );
const parentRecord = (id?: string, receiveCount = 1, lineage?: EnvelopeLineage) =>
  sqsRecord({ body: parentBody(id, lineage), groupId: 'user-9', receiveCount });

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${TRACE_ID}-b7ad6b7169203331-01`;

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

  it("sends a child to a standard queue with its partition key as the MessageGroupId (a fair queue's tenant), inherited or its own", async () => {
    const fanout = defineJob({
      type: 'mail.fanout',
      queue: 'notifications',
      schema: z.object({}),
      run: async (_data, ctx) => {
        ctx.enqueue(mail, { template: 'inherited' });
        ctx.enqueue(mail, { template: 'own' }, { partitionKey: 'tenant-4' });
      },
    });
    const h = workerHarness({ queueUrls: { notifications: MAIL_URL }, jobs: [fanout] });
    // A record of a fair standard queue: it carries its tenant as MessageGroupId, no sequence number.
    const record = sqsRecord({
      body: jobBody('mail.fanout', {}, { partitionKey: 'tenant-3' }),
      groupId: 'tenant-3',
      queue: 'notifications',
    });
    const { response } = await h.invoke([record]);
    expect(response.batchItemFailures).toEqual([]);
    const entries = h.sqs.batchEntries();
    expect(entries.map((entry) => [entry.MessageGroupId, entry.MessageDeduplicationId])).toEqual([
      ['tenant-3', undefined],
      ['tenant-4', undefined],
    ]);
    const queues = h.sqs.calls.flatMap((call) =>
      call.action === 'SendMessageBatch' ? [call.input.QueueUrl] : [],
    );
    expect(queues).toEqual([MAIL_URL]);
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

  it('dead-letters the parent, naming the variable, when a child queue URL from the environment is malformed', async () => {
    const journal: string[] = [];
    const h = workerHarness({
      fifo: true,
      env: { JOBS_QUEUE_URL_NOTIFICATIONS: 'sqs://notifications' },
      jobs: [parentJob(journal, () => ({ mails: 1 }))],
    });
    const { response } = await h.invoke([parentRecord()]);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.sqs.batchEntries()).toEqual([]);
    const attributes = h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.ErrorName?.StringValue).toBe('ChildRejectedError');
    expect(attributes?.ErrorMessage?.StringValue).toContain(
      'queueUrls.notifications must be an http(s) queue URL, got "sqs://notifications"',
    );
  });
});

describe('lineage of children', () => {
  it("the parent's completion links its children's records; the parentjob a child carries is the parent's record key", async () => {
    const journal: string[] = [];
    const guard = new FakeGuard({ journal });
    const h = harness(journal, () => ({ confirm: [{}], mails: 1 }), guard);
    await h.invoke([parentRecord('parent-1')]);
    const sent = envelopes(h);
    const complete = guard.leaseCalls.find((c) => c.op === 'complete');
    expect(complete?.op === 'complete' ? complete.children : undefined).toEqual(
      sent.map((child) => jobRecordKey(child.type, defaultJobKey('/sqs-jobs/jobs', child.id))),
    );
    expect(new Set(sent.map((c) => c.parentjob))).toEqual(
      new Set([jobRecordKey('booking.reserve', defaultJobKey('/checkout', 'parent-1'))]),
    );
  });

  it('every child carries its parent id, the root id, the parent job, the correlation id and the trace', async () => {
    const journal: string[] = [];
    const h = harness(journal, () => ({ confirm: [{}], mails: 2 }));
    const lineage = { correlationid: 'order-42', traceparent: TRACEPARENT, tracestate: 'rojo=1' };
    await h.invoke([parentRecord('parent-1', 1, lineage)]);
    const sent = envelopes(h);
    expect(sent).toHaveLength(3);
    const parentJobRef = jobRecordKey('booking.reserve', defaultJobKey('/checkout', 'parent-1'));
    for (const child of sent) {
      expect(child).toMatchObject({
        causationid: 'parent-1',
        rootid: 'parent-1',
        parentjob: parentJobRef,
        correlationid: 'order-42',
        tracestate: 'rojo=1',
      });
      expect(traceparentProblem(child.traceparent ?? '')).toBeUndefined();
      // Same trace and flags, a parent id of its own.
      expect(child.traceparent?.slice(0, 36)).toBe(`00-${TRACE_ID}-`);
      expect(child.traceparent?.slice(-3)).toBe('-01');
      expect(child.traceparent).not.toBe(TRACEPARENT);
    }
    expect(new Set(sent.map((c) => c.traceparent)).size).toBe(3);
  });

  it("a grandchild keeps the chain's root id and correlation id", async () => {
    const journal: string[] = [];
    const h = harness(journal, () => ({ mails: 1 }));
    const lineage = {
      causationid: 'root-0',
      rootid: 'root-0',
      parentjob: 'orders.place#/shop\nroot-0',
      correlationid: 'order-42',
      traceparent: TRACEPARENT,
    };
    await h.invoke([parentRecord('parent-1', 1, lineage)]);
    expect(envelopes(h)[0]).toMatchObject({
      causationid: 'parent-1',
      rootid: 'root-0',
      correlationid: 'order-42',
    });
  });

  it('a parent without a trace starts one for its children, the same on a re-run: the children are the same but for time', async () => {
    const journal: string[] = [];
    let fail = true;
    const h = harness(journal, () => ({ confirm: [{}], mails: 1 }));
    h.sqs.failWhen((call) =>
      fail && call.action === 'SendMessageBatch' && call.input.QueueUrl === MAIL_URL
        ? Object.assign(new Error('internal'), { name: 'InternalError', $fault: 'server' })
        : undefined,
    );
    const bookingBodies = () =>
      h.sqs.calls
        .filter((c) => c.action === 'SendMessageBatch' && c.input.QueueUrl === BOOKING_URL)
        .flatMap((c) =>
          ((c.input as { Entries?: { MessageBody: string }[] }).Entries ?? []).map((e) => e.MessageBody),
        );
    await h.invoke([parentRecord('parent-1')]);
    fail = false;
    await h.invoke([parentRecord('parent-1', 2)]);
    // The booking child went out on both runs, the same but for its creation time.
    const bodies = bookingBodies().map((b) => ({ ...(JSON.parse(b) as JobEnvelope), time: '' }));
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toEqual(bodies[0]);
    const traceIds = envelopes(h).map((e) => e.traceparent?.slice(3, 35));
    expect(new Set(traceIds)).toEqual(new Set([derivedTraceId({ source: '/checkout', id: 'parent-1' })]));
    expect(envelopes(h).every((e) => e.traceparent?.endsWith('-00'))).toBe(true);
    expect(envelopes(h).every((e) => e.rootid === 'parent-1' && e.correlationid === undefined)).toBe(true);
  });

  it('ctx.lineage shows where the job comes from, and its log lines carry it', async () => {
    const journal: string[] = [];
    let seen: JobLineage | undefined;
    const h = harness(journal, () => ({
      seen: (lineage) => {
        seen = lineage;
      },
      fail: true,
    }));
    const lineage = {
      causationid: 'parent-0',
      rootid: 'root-0',
      parentjob: 'orders.place#/shop\nroot-0',
      correlationid: 'order-42',
      traceparent: TRACEPARENT,
    };
    const { logs } = await h.invoke([parentRecord('job-1', 1, lineage)]);
    expect(seen).toEqual({
      parentJobId: 'parent-0',
      rootJobId: 'root-0',
      correlationId: 'order-42',
      parentJob: 'orders.place#/shop\nroot-0',
      traceId: TRACE_ID,
      traceparent: TRACEPARENT,
      tracestate: undefined,
    });
    const retry = logs.find((l) => l.message === 'job failed; it will be retried');
    expect(retry).toMatchObject({
      jobId: 'job-1',
      parentJobId: 'parent-0',
      rootJobId: 'root-0',
      correlationId: 'order-42',
      traceId: TRACE_ID,
    });
  });

  it('a root job without lineage logs no lineage keys, and its ctx.lineage names itself the root', async () => {
    const journal: string[] = [];
    let seen: JobLineage | undefined;
    const h = harness(journal, () => ({
      seen: (lineage) => {
        seen = lineage;
      },
      fail: true,
    }));
    const { logs } = await h.invoke([parentRecord('job-1')]);
    expect(seen).toMatchObject({ parentJobId: undefined, rootJobId: 'job-1', traceId: undefined });
    const retry = logs.find((l) => l.message === 'job failed; it will be retried');
    expect(retry).toBeDefined();
    for (const key of ['parentJobId', 'rootJobId', 'correlationId', 'traceId'])
      expect(retry).not.toHaveProperty(key);
  });
});
