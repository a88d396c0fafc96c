/**
 * A child job's `AWSTraceHeader` continues its own parent record's chain (lib/runtime/chain-trace.ts),
 * so Lambda's recursive loop detection counts each chain's own steps, whatever else shares its batch.
 * Lambda gives a batch one trace header; copied onto every child, it made unrelated chains of a busy
 * queue add up until a three-step chain was stopped as "invocation 17" (issue 22).
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lineageEntries, parseTraceHeader } from '../../lib/core/aws-trace-header.ts';
import { ChainTraceHeaders } from '../../lib/runtime/chain-trace.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { jobBody, queueUrl, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

const ROOT = '1-5759e988-bd862e3fe1be46a994272793';
const FN = 'a87bd80c';
const OTHER_FN = '68fd508a';

const header = (lineage?: string, root = ROOT) =>
  `Root=${root};Parent=53995c3f42cd8ad8;Sampled=0${lineage === undefined ? '' : `;Lineage=${lineage}`}`;

function withTraceHeader(record: SQSRecord, traceHeader: string | undefined): SQSRecord {
  if (traceHeader === undefined) return record;
  return { ...record, attributes: { ...record.attributes, AWSTraceHeader: traceHeader } };
}

const lineageOf = (text: string | undefined) =>
  Object.fromEntries(lineageEntries(parseTraceHeader(text)?.lineage));

describe('ChainTraceHeaders', () => {
  const record = (lineage?: string) =>
    withTraceHeader(
      sqsRecord({ body: '{}' }),
      lineage === undefined ? undefined : header(lineage, '1-00000000-000000000000000000000001'),
    );

  it('a child counts its own parent record plus this invocation, not the longest chain in the batch', () => {
    const long = record(`${FN}:15|${OTHER_FN}:4`);
    const short = record(`${FN}:2`);
    const fresh = record();
    // Lambda's header for the batch: the longest chain's, this function counted once more.
    const chains = new ChainTraceHeaders(() => header(`${FN}:16|${OTHER_FN}:4`), [long, short, fresh]);
    expect(lineageOf(chains.childHeaderOf(long))).toEqual({ [FN]: 16, [OTHER_FN]: 4 });
    expect(lineageOf(chains.childHeaderOf(short))).toEqual({ [FN]: 3 });
    expect(lineageOf(chains.childHeaderOf(fresh))).toEqual({ [FN]: 1 });
  });

  it('keeps the invocation trace (Root, Parent, Sampled) so children stay in the trace the invocation records', () => {
    const own = record(`${FN}:2`);
    const chains = new ChainTraceHeaders(() => header(`${FN}:3`), [own]);
    const child = parseTraceHeader(chains.childHeaderOf(own));
    expect(child).toMatchObject({ root: ROOT, parent: '53995c3f42cd8ad8', sampled: '0', lineage: `${FN}:3` });
  });

  it('a batch of one record: the child carries exactly what the invocation header says', () => {
    const own = record(`${FN}:7|${OTHER_FN}:1`);
    const invocation = header(`${FN}:8|${OTHER_FN}:1`);
    expect(new ChainTraceHeaders(() => invocation, [own]).childHeaderOf(own)).toBe(invocation);
  });

  it('reads keys with colons of their own (Lambda’s encoding is internal)', () => {
    const a = record(`1:${FN}:9`);
    const b = record(`1:${FN}:1`);
    const chains = new ChainTraceHeaders(() => header(`1:${FN}:10`), [a, b]);
    expect(lineageOf(chains.childHeaderOf(b))).toEqual({ [`1:${FN}`]: 2 });
  });

  it('when no entry was raised (an unknown encoding), the child carries the invocation header: the guard never weakens', () => {
    const a = record(`${FN}:9`);
    const b = record(`${FN}:1`);
    const invocation = header(`${FN}:9`);
    expect(new ChainTraceHeaders(() => invocation, [a, b]).childHeaderOf(b)).toBe(invocation);
  });

  it('outside Lambda (no invocation header) sets none', () => {
    const a = record(`${FN}:1`);
    expect(new ChainTraceHeaders(() => undefined, [a]).childHeaderOf(a)).toBeUndefined();
  });
});

describe('the worker sends each child with its own chain’s AWSTraceHeader', () => {
  const step = defineJob({
    type: 'chain.step',
    queue: 'chain',
    schema: z.object({ chain: z.string() }),
    run: async (data, ctx) => {
      ctx.enqueue(step, data);
    },
  });

  it('three records of three chains in one batch: three children, each one step further along its own chain', async () => {
    const h = workerHarness({
      jobs: [step],
      queueUrls: { chain: queueUrl('chain') },
      env: { _X_AMZN_TRACE_ID: header(`${FN}:15`) },
    });
    const records = [
      withTraceHeader(
        sqsRecord({ body: jobBody('chain.step', { chain: 'long' }, { id: 'long' }) }),
        header(`${FN}:14`),
      ),
      withTraceHeader(
        sqsRecord({ body: jobBody('chain.step', { chain: 'short' }, { id: 'short' }) }),
        header(`${FN}:2`),
      ),
      sqsRecord({ body: jobBody('chain.step', { chain: 'new' }, { id: 'new' }) }),
    ];
    const { response } = await h.invoke(records);
    expect(response.batchItemFailures).toEqual([]);
    const byChain = Object.fromEntries(
      h.sqs
        .batchEntries()
        .map((entry) => [
          (JSON.parse(entry.MessageBody ?? '{}') as { data: { chain: string } }).data.chain,
          lineageOf(entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue),
        ]),
    );
    expect(byChain).toEqual({ long: { [FN]: 15 }, short: { [FN]: 3 }, new: { [FN]: 1 } });
  });

  it('without an invocation trace header (not on Lambda) the child carries none', async () => {
    const h = workerHarness({ jobs: [step], queueUrls: { chain: queueUrl('chain') }, env: {} });
    await h.invoke([sqsRecord({ body: jobBody('chain.step', { chain: 'a' }) })]);
    expect(h.sqs.batchEntries()[0]?.MessageSystemAttributes).toBeUndefined();
  });
});
