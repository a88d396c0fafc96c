/**
 * Renaming a job type between deploys (`formerTypes`): messages of the old type route to the
 * renamed job, and the job keeps its identity (idempotency record, external idempotency key,
 * child ids), so a job that ran under its old name never runs again under the new one.
 */
import { defineJob } from 'sqs-jobs';
import { jobRecord, MemoryIdempotencyStore, runJob } from 'sqs-jobs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { failedIds, workerHarness } from '../factories/worker.ts';

const schema = z.object({ invoiceId: z.string() });
const receipt = defineJob({ type: 'emails.receipt', queue: 'emails', schema, async run() {} });

/** The job as deployed before and after the rename, counting its side effect and keeping its keys. */
function versions() {
  const sent: string[] = [];
  const keys: string[] = [];
  const run = async ({ invoiceId }: { invoiceId: string }, ctx: Parameters<typeof receipt.run>[1]) => {
    keys.push(ctx.idempotencyKey('send'));
    sent.push(invoiceId);
    ctx.enqueue(receipt, { invoiceId });
  };
  const before = defineJob({ type: 'send-invoice', queue: 'billing', schema, run });
  const after = defineJob({
    type: 'billing.send-invoice',
    formerTypes: ['send-invoice'],
    queue: 'billing',
    schema,
    run,
  });
  return { before, after, sent, keys };
}

describe('a renamed job (formerTypes)', () => {
  it('runs a message of its old type, with the identity it had before the rename', async () => {
    const { before, after, keys } = versions();
    const old = await runJob(before, { invoiceId: 'i-1' }, { jobId: 'job-1' });
    const renamed = await runJob(after, { invoiceId: 'i-1' }, { jobId: 'job-1' });
    expect(keys[0]).toBe(keys[1]);
    expect(renamed.children.map((c) => c.id)).toEqual(old.children.map((c) => c.id));
  });

  it('never runs a job twice across the rename: old-type redeliveries and new-type resends are duplicates', async () => {
    const { before, after, sent } = versions();
    const store = new MemoryIdempotencyStore();
    const oldMessage = jobRecord('send-invoice', { invoiceId: 'i-1' }, { id: 'job-1' });

    // Before the deploy: the job runs under its old name.
    const v1 = workerHarness({ jobs: [before], idempotency: store, childSender: sink() });
    expect(failedIds((await v1.invoke([oldMessage])).response)).toEqual([]);

    // After the deploy: the same message redelivered, and the producer's resend under the new name.
    const v2 = workerHarness({ jobs: [after], idempotency: store, childSender: sink() });
    const redelivered = await v2.invoke([{ ...oldMessage, messageId: 'redelivered' }]);
    const resent = await v2.invoke([
      jobRecord('billing.send-invoice', { invoiceId: 'i-1' }, { id: 'job-1' }),
    ]);
    expect(failedIds(redelivered.response)).toEqual([]);
    expect(failedIds(resent.response)).toEqual([]);
    expect(sent).toEqual(['i-1']);
    expect(v2.sqs.sentTo(v2.dlqUrl)).toEqual([]);

    // A message of the old type that never ran before the deploy runs under the renamed job.
    await v2.invoke([jobRecord('send-invoice', { invoiceId: 'i-2' }, { id: 'job-2' })]);
    expect(sent).toEqual(['i-1', 'i-2']);
    expect(store.record('send-invoice', '/tests\njob-2')?.status).toBe('COMPLETED');
  });

  it('is refused when its former types clash with another job, or with its own type', () => {
    const { after } = versions();
    const other = defineJob({ type: 'send-invoice', queue: 'billing', schema, async run() {} });
    expect(() => workerHarness({ jobs: [after, other] })).toThrow(
      /two jobs take the type "send-invoice" \("billing\.send-invoice" and "send-invoice"/,
    );
    expect(() =>
      defineJob({ type: 'a', formerTypes: ['a', '', 'b', 'b'], queue: 'q', schema, async run() {} }),
    ).toThrow(
      /formerTypes\[0\] is the job's own type "a".*formerTypes\[1\] must be a non-empty string.*formerTypes\[3\] "b" is listed twice/,
    );
  });
});

/** A child sender that accepts every child (the children are not what these tests look at). */
function sink() {
  return {
    source: '/sqs-jobs/jobs',
    async sendBatch(entries: readonly { readonly options?: { readonly id?: string } }[]) {
      return { sent: entries.map((e, index) => ({ index, id: e.options?.id ?? '' })), failed: [] };
    },
  };
}
