/**
 * Which bodies a raw job gets (raw-messages.ts, `isOwnEnvelope`): every body that is not an
 * sqs-jobs envelope of this worker, including a producer's payload that carries a `specversion`
 * of its own and a CloudEvent from another system; an envelope naming one of this worker's jobs,
 * even a broken one, stays an envelope (EnvelopeError evidence, so our own producer bugs show).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type JobContext } from '../../lib/runtime/job.ts';
import { isOwnEnvelope, readRawMessage } from '../../lib/runtime/raw-messages.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

const JOB_TYPES = new Set(['orders.import', 'orders.placed']);
const RAW = { from: 'json', id: { field: 'orderId' } } as const;

/** A JSON object body carrying `specversion` whose `type` names no job of the worker (or is absent). */
const foreignBody = fc
  .record({
    orderId: fc.string({ minLength: 1 }),
    specversion: fc.jsonValue(),
    rest: fc.dictionary(
      fc.string().filter((key) => !['orderId', 'specversion', 'type', '__proto__'].includes(key)),
      fc.jsonValue(),
    ),
    type: fc.option(
      fc.oneof(
        fc.string().filter((type) => !JOB_TYPES.has(type)),
        fc.jsonValue().filter((type) => typeof type !== 'string'),
      ),
      { nil: undefined },
    ),
  })
  .map(({ orderId, specversion, rest, type }) => ({
    ...rest,
    orderId,
    specversion,
    ...(type === undefined ? {} : { type }),
  }));

describe('isOwnEnvelope: the rule', () => {
  it('hands the raw job every body with a specversion whose type names none of the worker jobs, as it was sent', () => {
    fc.assert(
      fc.property(foreignBody, (body) => {
        expect(isOwnEnvelope(body, JOB_TYPES)).toBe(false);
        const envelope = readRawMessage(
          sqsRecord({ body: JSON.stringify(body) }),
          'orders.import',
          RAW,
          JOB_TYPES,
        );
        expect(envelope?.type).toBe('orders.import');
        expect(envelope?.id).toBe(body.orderId);
        expect(envelope?.data).toEqual(JSON.parse(JSON.stringify(body)));
      }),
    );
  });

  it('hands the raw job every body without a specversion: arrays, scalars, objects', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const body =
          typeof value === 'object' && value !== null && !Array.isArray(value) && 'specversion' in value
            ? { ...value, specversion: undefined }
            : value;
        expect(isOwnEnvelope(JSON.parse(JSON.stringify(body ?? null)), JOB_TYPES)).toBe(false);
      }),
    );
  });

  it('keeps as an envelope every body with a specversion whose type is a job of the worker, whatever else is wrong', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.jsonValue(),
        fc.constantFrom(...JOB_TYPES),
        (rest, specversion, type) => {
          const body = { ...rest, specversion, type };
          expect(isOwnEnvelope(body, JOB_TYPES)).toBe(true);
          expect(
            readRawMessage(sqsRecord({ body: JSON.stringify(body) }), 'orders.import', RAW, JOB_TYPES),
          ).toBeUndefined();
        },
      ),
    );
  });
});

interface Seen {
  readonly data: unknown;
  readonly jobId: string;
}

function worker(seen: Seen[]) {
  const importOrder = defineJob({
    type: 'orders.import',
    queue: 'jobs',
    schema: z.looseObject({ orderId: z.string() }),
    raw: RAW,
    async run(data, ctx: JobContext) {
      seen.push({ data, jobId: ctx.jobId });
    },
  });
  const placeOrder = defineJob({
    type: 'orders.placed',
    queue: 'jobs',
    schema: z.object({ orderId: z.string() }),
    async run(data, ctx: JobContext) {
      seen.push({ data, jobId: ctx.jobId });
    },
  });
  return workerHarness({ jobs: [importOrder, placeOrder] });
}

const errorName = (sent: { MessageAttributes?: Record<string, { StringValue?: string }> } | undefined) =>
  sent?.MessageAttributes?.ErrorName?.StringValue;

describe('a worker with a raw job', () => {
  it("runs a producer's payload carrying its own specversion, and another system's CloudEvents, valid or not", async () => {
    const seen: Seen[] = [];
    const h = worker(seen);
    const ownSchema = { orderId: 'o-10', specversion: 'v2-of-our-schema' };
    // Structured CloudEvent of another system: an extension attribute the envelope refuses (orderId).
    const legacy = {
      specversion: '1.0',
      id: 'evt-1',
      source: 'legacy',
      type: 'com.example.order.created',
      time: '2026-12-01T10:00:00Z',
      orderId: 'o-11',
      data: { total: 3 },
    };
    // A CloudEvent another system sends that is a valid envelope in form, of a type the worker lacks.
    const foreignValid = {
      specversion: '1.0',
      id: 'evt-2',
      source: 'legacy',
      type: 'com.example.order.created',
      time: '2026-12-01T10:00:00Z',
      datacontenttype: 'application/json',
      data: { orderId: 'o-12' },
    };
    const { response } = await h.invoke([
      sqsRecord({ body: JSON.stringify(ownSchema) }),
      sqsRecord({ body: JSON.stringify(legacy) }),
      sqsRecord({ body: JSON.stringify({ ...foreignValid, orderId: 'o-12' }) }),
    ]);

    expect(response.batchItemFailures).toEqual([]);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
    expect(seen).toEqual([
      { data: ownSchema, jobId: 'o-10' },
      { data: legacy, jobId: 'o-11' },
      { data: { ...foreignValid, orderId: 'o-12' }, jobId: 'o-12' },
    ]);
  });

  it('still dead-letters a broken envelope naming one of its jobs as an EnvelopeError, and runs a good one by type', async () => {
    const seen: Seen[] = [];
    const h = worker(seen);
    await h.invoke([
      sqsRecord({ body: jobBody('orders.placed', { orderId: 'o-1' }, { id: 'env-1' }) }),
      // Our own producer's bug: a bad time on an envelope of this worker's job.
      sqsRecord({
        body: JSON.stringify({
          specversion: '1.0',
          id: 'env-2',
          source: '/checkout',
          type: 'orders.placed',
          time: 'yesterday',
          datacontenttype: 'application/json',
          data: { orderId: 'o-2' },
        }),
      }),
      // The raw job's own type counts too: a payload naming it is taken as a broken envelope.
      sqsRecord({ body: JSON.stringify({ specversion: 'v2', type: 'orders.import', orderId: 'o-3' }) }),
    ]);

    expect(seen).toEqual([{ data: { orderId: 'o-1' }, jobId: 'env-1' }]);
    const sent = h.sqs.sentTo(h.dlqUrl);
    expect(sent.map(errorName)).toEqual(['EnvelopeError', 'EnvelopeError']);
  });

  it('dead-letters a foreign CloudEvent the raw job cannot identify as a RawMessageError, not an unknown type', async () => {
    const h = worker([]);
    await h.invoke([
      sqsRecord({
        body: JSON.stringify({
          specversion: '1.0',
          id: 'evt-3',
          source: 'legacy',
          type: 'com.example.order.created',
          time: '2026-12-01T10:00:00Z',
          datacontenttype: 'application/json',
          data: {},
        }),
      }),
    ]);
    expect(h.sqs.sentTo(h.dlqUrl).map(errorName)).toEqual(['RawMessageError']);
  });
});
