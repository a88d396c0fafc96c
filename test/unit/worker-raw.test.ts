/**
 * Bring your producers (issue 20): a job with `raw` takes messages that are not sqs-jobs
 * envelopes (a plain JSON body, an SNS notification with raw delivery on or off, an EventBridge
 * event), its identity from the place `raw.id` names; what cannot be read is dead-lettered on the
 * first delivery with evidence naming what was missing, the original body kept.
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type JobContext, type JobSpec } from '../../lib/runtime/job.ts';
import type { RawMessageOptions } from '../../lib/runtime/raw-messages.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

const orderSchema = z.object({ orderId: z.string(), total: z.number() });

interface Seen {
  readonly data: unknown;
  readonly jobId: string;
  readonly source: string;
}

function orderJob(raw: RawMessageOptions, seen: Seen[], extra: Partial<JobSpec<unknown, void>> = {}) {
  return defineJob({
    type: 'orders.placed',
    queue: 'jobs',
    schema: orderSchema,
    raw,
    async run(data, ctx: JobContext) {
      seen.push({ data, jobId: ctx.jobId, source: ctx.source });
    },
    ...extra,
  });
}

const attribute = (
  sent: { MessageAttributes?: Record<string, { StringValue?: string }> } | undefined,
  name: string,
) => sent?.MessageAttributes?.[name]?.StringValue;

/** An SNS notification as SNS delivers it to SQS with raw message delivery off. */
function snsNotification(
  message: unknown,
  options: { messageId?: string; attributes?: Record<string, string> } = {},
) {
  return JSON.stringify({
    Type: 'Notification',
    MessageId: options.messageId ?? '0c8a1f3e-5b2d-5f43-9a0e-3c3f2a1b9e01',
    TopicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
    Message: JSON.stringify(message),
    Timestamp: '2026-12-01T10:00:00.000Z',
    SignatureVersion: '1',
    Signature: 'c2lnbmF0dXJl',
    SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/cert.pem',
    UnsubscribeURL: 'https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe',
    ...(options.attributes
      ? {
          MessageAttributes: Object.fromEntries(
            Object.entries(options.attributes).map(([name, value]) => [
              name,
              { Type: 'String', Value: value },
            ]),
          ),
        }
      : {}),
  });
}

function withAttributes(record: SQSRecord, attributes: Record<string, string>): SQSRecord {
  return {
    ...record,
    messageAttributes: Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [
        name,
        { dataType: 'String', stringValue: value, stringListValues: [], binaryListValues: [] },
      ]),
    ),
  };
}

describe('defineJob raw option', () => {
  it('refuses bad raw options, all problems in one message', () => {
    expect(() =>
      defineJob({
        type: 'orders.placed',
        queue: 'jobs',
        schema: orderSchema,
        raw: { from: 'kafka', id: 'event-id', extra: 1 } as unknown as RawMessageOptions,
        run: async () => {},
      }),
    ).toThrow(
      /unknown field raw\.extra.*raw\.from must be 'json', 'sns' or 'eventbridge', got "kafka".*raw\.id 'event-id' needs raw\.from 'eventbridge'/,
    );
  });

  it.each([
    [{ from: 'json', id: 'sns-message-id' }, /raw\.id 'sns-message-id' needs raw\.from 'sns'/],
    [{ from: 'json', id: { field: 'order..id' } }, /raw\.id\.field must be a field name or dot path/],
    [
      { from: 'json', id: { attribute: 'AWS.TraceId' } },
      /raw\.id\.attribute must be an SQS message attribute name/,
    ],
    [{ from: 'json', id: { attribute: 'ErrorName' } }, /"ErrorName" is a DLQ evidence attribute name/],
    [{ from: 'json', id: 'orderId' }, /raw\.id must be \{ field: 'path' \}/],
  ])('refuses %j', (raw, message) => {
    expect(() =>
      defineJob({
        type: 'orders.placed',
        queue: 'jobs',
        schema: orderSchema,
        raw: raw as RawMessageOptions,
        run: async () => {},
      }),
    ).toThrow(message);
  });

  it('createWorker refuses two jobs that take raw messages: a raw body names no type to route by', () => {
    const raw: RawMessageOptions = { from: 'json', id: 'sqs-message-id' };
    const a = orderJob(raw, []);
    const b = defineJob({
      type: 'orders.other',
      queue: 'jobs',
      schema: orderSchema,
      raw,
      run: async () => {},
    });
    expect(() => createWorker({ jobs: [a, b], idempotency: false })).toThrow(
      /only one job of a worker can accept raw messages .*got raw on orders\.placed, orders\.other/,
    );
  });
});

describe('a raw JSON body', () => {
  it('runs with the body as data and the identity from a field, the key being that field and its value', async () => {
    const guard = new FakeGuard();
    const seen: Seen[] = [];
    const h = workerHarness({
      idempotency: guard,
      jobs: [orderJob({ from: 'json', id: { field: 'orderId' } }, seen)],
    });
    const body = JSON.stringify({ orderId: 'o-1', total: 42 });

    const first = await h.invoke([sqsRecord({ body })]);
    // A producer retry: the same body, a new SQS message id.
    const second = await h.invoke([sqsRecord({ body })]);

    expect(first.response.batchItemFailures).toEqual([]);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(seen).toEqual([
      { data: { orderId: 'o-1', total: 42 }, jobId: 'o-1', source: 'raw:field:orderId' },
    ]);
    expect(guard.begins.map((begin) => begin.key)).toEqual([
      'raw:field:orderId\no-1',
      'raw:field:orderId\no-1',
    ]);
    expect(second.logs.some((line) => line.outcome === 'duplicate')).toBe(true);
  });

  it("compares a producer's retry on what the schema keeps: a field it drops may differ, one it keeps may not", async () => {
    const guard = new FakeGuard();
    const seen: Seen[] = [];
    const h = workerHarness({
      idempotency: guard,
      jobs: [orderJob({ from: 'json', id: { field: 'orderId' } }, seen)],
    });
    await h.invoke([sqsRecord({ body: JSON.stringify({ orderId: 'o-1', total: 42, sentAt: '10:00:00' }) })]);
    // The retry carries a new sentAt (not in the schema): the same job, absorbed.
    const retry = await h.invoke([
      sqsRecord({ body: JSON.stringify({ orderId: 'o-1', total: 42, sentAt: '10:00:05' }) }),
    ]);
    expect(retry.logs.some((line) => line.outcome === 'duplicate')).toBe(true);
    // Another total under the same order id: a different payload under a used identity (the
    // DynamoDB store refuses it as PayloadMismatchError: test/integration/worker-raw-producers.test.ts).
    await h.invoke([sqsRecord({ body: JSON.stringify({ orderId: 'o-1', total: 43 }) })]);
    const hashes = guard.begins.map((begin) => begin.payloadHash);
    expect(hashes[1]).toBe(hashes[0]);
    expect(hashes[2]).not.toBe(hashes[0]);
    expect(seen).toHaveLength(1);
  });

  it('reads a nested field by dot path and takes a number as the identity', async () => {
    const seen: Seen[] = [];
    const job = defineJob({
      type: 'orders.placed',
      queue: 'jobs',
      schema: z.object({ order: z.object({ number: z.number() }) }),
      raw: { from: 'json', id: { field: 'order.number' } },
      async run(data, ctx) {
        seen.push({ data, jobId: ctx.jobId, source: ctx.source });
      },
    });
    const h = workerHarness({ jobs: [job] });
    await h.invoke([sqsRecord({ body: JSON.stringify({ order: { number: 1042 } }) })]);
    expect(seen.map((s) => s.jobId)).toEqual(['1042']);
  });

  it('with sqs-message-id, a producer retry (a new SQS message) runs again, a redelivery does not', async () => {
    const guard = new FakeGuard();
    const seen: Seen[] = [];
    const h = workerHarness({
      idempotency: guard,
      jobs: [orderJob({ from: 'json', id: 'sqs-message-id' }, seen)],
    });
    const body = JSON.stringify({ orderId: 'o-1', total: 42 });
    const delivery = sqsRecord({ body, messageId: 'm-1' });
    await h.invoke([delivery]);
    await h.invoke([{ ...delivery, attributes: { ...delivery.attributes, ApproximateReceiveCount: '2' } }]);
    await h.invoke([sqsRecord({ body, messageId: 'm-2' })]);
    expect(seen.map((s) => s.jobId)).toEqual(['m-1', 'm-2']);
  });

  it('dead-letters a body without the identity field on its first delivery, evidence naming the field, body kept', async () => {
    const guard = new FakeGuard();
    const seen: Seen[] = [];
    const h = workerHarness({
      idempotency: guard,
      jobs: [orderJob({ from: 'json', id: { field: 'orderId' } }, seen)],
    });
    const record = sqsRecord({ body: JSON.stringify({ total: 42 }) });
    const { response } = await h.invoke([record]);

    expect(response.batchItemFailures).toEqual([]);
    expect(seen).toEqual([]);
    expect(guard.begins).toEqual([]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(sent?.MessageBody).toBe(record.body);
    expect(attribute(sent, 'ErrorName')).toBe('RawMessageError');
    expect(attribute(sent, 'JobType')).toBe('orders.placed');
    expect(attribute(sent, 'Attempts')).toBe('1');
    expect(attribute(sent, 'ErrorMessage')).toBe(
      'raw message for orders.placed: orderId must be a non-empty string or a finite number, the job\'s identity (raw.id is { field: "orderId" }): it is missing',
    );
  });

  it('dead-letters a body that fails the schema as JobDataInvalidError, naming the field', async () => {
    const h = workerHarness({ jobs: [orderJob({ from: 'json', id: { field: 'orderId' } }, [])] });
    const { response } = await h.invoke([sqsRecord({ body: JSON.stringify({ orderId: 'o-1' }) })]);
    expect(response.batchItemFailures).toEqual([]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(attribute(sent, 'ErrorName')).toBe('JobDataInvalidError');
    expect(attribute(sent, 'ErrorMessage')).toMatch(/^data of orders\.placed failed its schema: total: /);
  });

  it('dead-letters a body that is not JSON as RawMessageError', async () => {
    const h = workerHarness({ jobs: [orderJob({ from: 'json', id: 'sqs-message-id' }, [])] });
    await h.invoke([sqsRecord({ body: 'order o-1 placed' })]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(sent?.MessageBody).toBe('order o-1 placed');
    expect(attribute(sent, 'ErrorMessage')).toMatch(/^raw message for orders\.placed: body is not JSON/);
  });
});

describe('envelopes on a worker with a raw job', () => {
  it('still run by type, and a malformed envelope is still an EnvelopeError', async () => {
    const seen: Seen[] = [];
    const h = workerHarness({ jobs: [orderJob({ from: 'json', id: { field: 'orderId' } }, seen)] });
    await h.invoke([
      sqsRecord({ body: jobBody('orders.placed', { orderId: 'o-1', total: 1 }, { id: 'env-1' }) }),
      sqsRecord({
        body: JSON.stringify({ specversion: '1.0', type: 'orders.placed', orderId: 'o-2', total: 2 }),
      }),
    ]);
    expect(seen.map((s) => s.jobId)).toEqual(['env-1']);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(attribute(sent, 'ErrorName')).toBe('EnvelopeError');
  });

  it('without a raw job, a raw body is an EnvelopeError as before', async () => {
    const h = workerHarness({
      jobs: [defineJob({ type: 'orders.placed', queue: 'jobs', schema: orderSchema, run: async () => {} })],
    });
    await h.invoke([sqsRecord({ body: JSON.stringify({ orderId: 'o-1', total: 1 }) })]);
    expect(attribute(h.sqs.sentTo(h.dlqUrl)[0], 'ErrorMessage')).toBe(
      'invalid job envelope: specversion is missing',
    );
  });
});

describe('SNS notifications', () => {
  it('unwraps a notification (raw delivery off): data is the parsed Message, identity the SNS MessageId', async () => {
    const seen: Seen[] = [];
    const h = workerHarness({ jobs: [orderJob({ from: 'sns', id: 'sns-message-id' }, seen)] });
    await h.invoke([
      sqsRecord({ body: snsNotification({ orderId: 'o-1', total: 42 }, { messageId: 'sns-1' }) }),
    ]);
    expect(seen).toEqual([
      { data: { orderId: 'o-1', total: 42 }, jobId: 'sns-1', source: 'raw:sns-message-id' },
    ]);
  });

  it('takes a raw-delivered message (raw delivery on) as the message itself', async () => {
    const seen: Seen[] = [];
    const h = workerHarness({ jobs: [orderJob({ from: 'sns', id: { field: 'orderId' } }, seen)] });
    await h.invoke([
      sqsRecord({ body: JSON.stringify({ orderId: 'o-1', total: 42 }) }),
      sqsRecord({ body: snsNotification({ orderId: 'o-2', total: 43 }) }),
    ]);
    expect(seen.map((s) => [s.jobId, s.data])).toEqual([
      ['o-1', { orderId: 'o-1', total: 42 }],
      ['o-2', { orderId: 'o-2', total: 43 }],
    ]);
  });

  it('reads an attribute identity from the notification when raw delivery is off, from the SQS message when on', async () => {
    const seen: Seen[] = [];
    const h = workerHarness({ jobs: [orderJob({ from: 'sns', id: { attribute: 'order-id' } }, seen)] });
    await h.invoke([
      sqsRecord({
        body: snsNotification({ orderId: 'o-1', total: 1 }, { attributes: { 'order-id': 'a-1' } }),
      }),
      withAttributes(sqsRecord({ body: JSON.stringify({ orderId: 'o-2', total: 2 }) }), {
        'order-id': 'a-2',
      }),
    ]);
    expect(seen.map((s) => s.jobId).sort()).toEqual(['a-1', 'a-2']);
  });

  it('dead-letters a raw-delivered message when the identity is the SNS MessageId, saying why', async () => {
    const h = workerHarness({ jobs: [orderJob({ from: 'sns', id: 'sns-message-id' }, [])] });
    await h.invoke([sqsRecord({ body: JSON.stringify({ orderId: 'o-1', total: 42 }) })]);
    expect(attribute(h.sqs.sentTo(h.dlqUrl)[0], 'ErrorMessage')).toMatch(
      /MessageId is missing: the body is not an SNS notification \(is raw message delivery on\?/,
    );
  });

  it('names the SNS Message as not JSON in a notification without MessageId or TopicArn (as the docs describe one)', async () => {
    const h = workerHarness({ jobs: [orderJob({ from: 'sns', id: { field: 'orderId' } }, [])] });
    await h.invoke([
      sqsRecord({ body: JSON.stringify({ Type: 'Notification', Message: 'order o-1 placed' }) }),
    ]);
    const message = attribute(h.sqs.sentTo(h.dlqUrl)[0], 'ErrorMessage');
    expect(message).toMatch(/Message of the SNS notification is not JSON \(.*\); publish JSON messages/);
    expect(message).not.toMatch(/orderId/);
  });

  it("reads a notification without TopicArn, and names a missing MessageId as the notification's", async () => {
    const seen: Seen[] = [];
    const h = workerHarness({ jobs: [orderJob({ from: 'sns', id: { field: 'orderId' } }, seen)] });
    const bare = { Type: 'Notification', Message: JSON.stringify({ orderId: 'o-9', total: 9 }) };
    await h.invoke([sqsRecord({ body: JSON.stringify(bare) })]);
    expect(seen.map((s) => [s.jobId, s.data])).toEqual([['o-9', { orderId: 'o-9', total: 9 }]]);

    const byMessageId = workerHarness({ jobs: [orderJob({ from: 'sns', id: 'sns-message-id' }, [])] });
    await byMessageId.invoke([sqsRecord({ body: JSON.stringify(bare) })]);
    expect(attribute(byMessageId.sqs.sentTo(byMessageId.dlqUrl)[0], 'ErrorMessage')).toMatch(
      /MessageId is missing from the SNS notification \(SNS always sets it/,
    );
  });

  it('dead-letters a notification whose Message is not JSON', async () => {
    const h = workerHarness({ jobs: [orderJob({ from: 'sns', id: 'sns-message-id' }, [])] });
    const body = JSON.stringify({ ...JSON.parse(snsNotification({})), Message: 'hello' });
    await h.invoke([sqsRecord({ body })]);
    expect(attribute(h.sqs.sentTo(h.dlqUrl)[0], 'ErrorMessage')).toMatch(
      /Message of the SNS notification is not JSON/,
    );
  });
});

describe('EventBridge events', () => {
  const event = {
    version: '0',
    id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    'detail-type': 'Order Placed',
    source: 'com.example.orders',
    account: '123456789012',
    time: '2026-12-01T10:00:00Z',
    region: 'eu-west-1',
    resources: [],
    detail: { orderId: 'o-1', total: 42 },
  };

  it('runs with detail as data and the event id as identity', async () => {
    const seen: Seen[] = [];
    const h = workerHarness({ jobs: [orderJob({ from: 'eventbridge', id: 'event-id' }, seen)] });
    await h.invoke([sqsRecord({ body: JSON.stringify(event) })]);
    expect(seen).toEqual([{ data: event.detail, jobId: event.id, source: 'raw:event-id' }]);
  });

  it('reads a field identity from detail', async () => {
    const seen: Seen[] = [];
    const h = workerHarness({ jobs: [orderJob({ from: 'eventbridge', id: { field: 'orderId' } }, seen)] });
    await h.invoke([sqsRecord({ body: JSON.stringify(event) })]);
    expect(seen.map((s) => s.jobId)).toEqual(['o-1']);
  });

  it('dead-letters a body that is not an event, naming the missing field', async () => {
    const h = workerHarness({ jobs: [orderJob({ from: 'eventbridge', id: 'event-id' }, [])] });
    await h.invoke([sqsRecord({ body: JSON.stringify({ id: 'x', source: 's', detail: {} }) })]);
    expect(attribute(h.sqs.sentTo(h.dlqUrl)[0], 'ErrorMessage')).toBe(
      'raw message for orders.placed: detail-type is missing: the body is not an EventBridge event',
    );
  });
});

describe('an identity attribute in the DLQ', () => {
  it('is kept with the body next to the evidence, so a redrive can send it back', async () => {
    const h = workerHarness({ jobs: [orderJob({ from: 'json', id: { attribute: 'order-id' } }, [])] });
    const record = withAttributes(sqsRecord({ body: JSON.stringify({ orderId: 'o-1' }) }), {
      'order-id': 'o-1',
      other: 'not kept',
    });
    await h.invoke([record]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(sent?.MessageBody).toBe(record.body);
    expect(attribute(sent, 'order-id')).toBe('o-1');
    expect(attribute(sent, 'other')).toBeUndefined();
    expect(attribute(sent, 'ErrorName')).toBe('JobDataInvalidError');
    // 10 attributes at most: the evidence made room (its marker says which it left out).
    expect(Object.keys(sent?.MessageAttributes ?? {}).length).toBeLessThanOrEqual(10);
    expect(attribute(sent, 'EvidenceTruncated')).toBe('HandlerVersion,FirstFailureAt');
  });
});
