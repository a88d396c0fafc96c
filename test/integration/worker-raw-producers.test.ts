/**
 * Bring your producers (issue 20), through the real worker on the emulators: fauxqs (SQS, and its
 * SNS for notifications as SNS delivers them) and dynalite (the default idempotency store). A
 * producer's plain JSON sent twice with the same business id runs once; an SNS notification (raw
 * delivery off and on) and an EventBridge-shaped event run; a poison raw message is dead-lettered
 * with evidence and `sqs-jobs dlq redrive` puts the original body (and its identity attribute)
 * back, where it runs once fixed.
 */
import { CreateTopicCommand, PublishCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PermanentError } from '../../lib/core/errors.ts';
import { defineJob, type JobContext } from '../../lib/runtime/job.ts';
import type { RawMessageOptions } from '../../lib/runtime/raw-messages.ts';
import { runCli } from '../factories/cli.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { guardedWorker, useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();

const orderSchema = z.object({ orderId: z.string(), total: z.number() });

interface Run {
  readonly orderId: string;
  readonly jobId: string;
}

/** A worker with one raw job on `queue`, the default DynamoDB idempotency store. */
function rawWorker(
  raw: RawMessageOptions,
  queue: EmulatedQueue,
  dlq: EmulatedQueue,
  run: (data: z.infer<typeof orderSchema>, ctx: JobContext) => Promise<void>,
) {
  const job = defineJob({ type: 'orders.placed', queue: 'orders', schema: orderSchema, raw, run });
  return guardedWorker(env, { queueName: 'orders', queue, dlq, jobs: [job] });
}

/** A job body that records each run. */
function recording(runs: Run[]) {
  return async (data: z.infer<typeof orderSchema>, ctx: JobContext) => {
    runs.push({ orderId: data.orderId, jobId: ctx.jobId });
  };
}

async function sendRaw(queue: EmulatedQueue, body: string, attributes: Record<string, string> = {}) {
  await env.emulator.sqs.send(
    new SendMessageCommand({
      QueueUrl: queue.url,
      MessageBody: body,
      MessageAttributes: Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
      ),
    }),
  );
}

function snsClient(): SNSClient {
  return new SNSClient({
    endpoint: env.emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

describe('raw producers through the worker and the DynamoDB store', () => {
  it('runs a raw JSON message sent twice with the same business id once (a producer retry)', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('orders', false);
    const runs: Run[] = [];
    const handler = rawWorker({ from: 'json', id: { field: 'orderId' } }, queue, dlq, recording(runs));
    const body = JSON.stringify({ orderId: 'o-1', total: 42 });

    await sendRaw(queue, body);
    const first = await env.emulator.deliver(queue, handler);
    // The producer retries: a second SendMessage, a new SQS message id, the same order.
    await sendRaw(queue, body);
    const second = await env.emulator.deliver(queue, handler);

    expect(first.delivered).toBe(1);
    expect(second.delivered).toBe(1);
    expect(second.messages[0]?.MessageId).not.toBe(first.messages[0]?.MessageId);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(runs).toEqual([{ orderId: 'o-1', jobId: 'o-1' }]);
    expect(await env.emulator.receive(queue)).toEqual([]);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });

  it('absorbs a producer retry whose body differs only outside the schema; another payload under the same id is dead-lettered', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('orders-retry', false);
    const runs: Run[] = [];
    const handler = rawWorker({ from: 'json', id: { field: 'orderId' } }, queue, dlq, recording(runs));
    await sendRaw(queue, JSON.stringify({ orderId: 'o-2', total: 2, sentAt: '2026-12-01T10:00:00Z' }));
    await env.emulator.deliver(queue, handler);
    await sendRaw(queue, JSON.stringify({ orderId: 'o-2', total: 2, sentAt: '2026-12-01T10:00:05Z' }));
    const retry = await env.emulator.deliver(queue, handler);
    expect(retry.response.batchItemFailures).toEqual([]);
    expect(await env.emulator.receive(dlq)).toEqual([]);

    await sendRaw(queue, JSON.stringify({ orderId: 'o-2', total: 3 }));
    await env.emulator.deliver(queue, handler);
    const [dead] = await env.emulator.receiveWithin(dlq, 2_000);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('PayloadMismatchError');
    expect(runs).toEqual([{ orderId: 'o-2', jobId: 'o-2' }]);
  });

  it('runs SNS notifications with raw delivery off (SNS MessageId) and on (a field), each once', async () => {
    const wrapped = await env.emulator.createQueuePair('orders-sns', false);
    const plain = await env.emulator.createQueuePair('orders-sns-raw', false);
    const sns = snsClient();
    const topic = await sns.send(new CreateTopicCommand({ Name: `orders-${Date.now()}` }));
    await sns.send(
      new SubscribeCommand({ TopicArn: topic.TopicArn, Protocol: 'sqs', Endpoint: wrapped.queue.arn }),
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn: topic.TopicArn,
        Protocol: 'sqs',
        Endpoint: plain.queue.arn,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    const published = await sns.send(
      new PublishCommand({ TopicArn: topic.TopicArn, Message: JSON.stringify({ orderId: 'o-7', total: 7 }) }),
    );

    const wrappedRuns: Run[] = [];
    const wrappedWorker = rawWorker(
      { from: 'sns', id: 'sns-message-id' },
      wrapped.queue,
      wrapped.dlq,
      recording(wrappedRuns),
    );
    const delivered = await env.emulator.deliver(wrapped.queue, wrappedWorker);
    // What SNS put on the queue: the notification, its Message a string.
    const notification = JSON.parse(delivered.messages[0]?.Body ?? '{}') as Record<string, unknown>;
    expect(notification.Type).toBe('Notification');
    expect(typeof notification.Message).toBe('string');
    expect(wrappedRuns).toEqual([{ orderId: 'o-7', jobId: published.MessageId }]);

    const plainRuns: Run[] = [];
    const plainWorker = rawWorker(
      { from: 'sns', id: { field: 'orderId' } },
      plain.queue,
      plain.dlq,
      recording(plainRuns),
    );
    const plainDelivery = await env.emulator.deliver(plain.queue, plainWorker);
    expect(plainDelivery.messages[0]?.Body).toBe(JSON.stringify({ orderId: 'o-7', total: 7 }));
    expect(plainRuns).toEqual([{ orderId: 'o-7', jobId: 'o-7' }]);

    // SNS redelivers the same notification (same MessageId): absorbed.
    await sendRaw(wrapped.queue, delivered.messages[0]?.Body ?? '');
    const again = await env.emulator.deliver(wrapped.queue, wrappedWorker);
    expect(again.delivered).toBe(1);
    expect(wrappedRuns).toHaveLength(1);
    expect(await env.emulator.receive(wrapped.dlq)).toEqual([]);
    expect(await env.emulator.receive(plain.dlq)).toEqual([]);
  });

  it('runs an EventBridge event once by its id, detail as the data', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('orders-events', false);
    const runs: Run[] = [];
    const handler = rawWorker({ from: 'eventbridge', id: 'event-id' }, queue, dlq, recording(runs));
    const event = JSON.stringify({
      version: '0',
      id: '3f0c8a52-1b7e-4a1c-9d2e-5e6f7a8b9c0d',
      'detail-type': 'Order Placed',
      source: 'com.example.orders',
      account: '123456789012',
      time: '2026-12-01T10:00:00Z',
      region: 'us-east-1',
      resources: [],
      detail: { orderId: 'o-9', total: 9 },
    });
    await sendRaw(queue, event);
    await env.emulator.deliver(queue, handler);
    await sendRaw(queue, event); // EventBridge delivers at least once: the same event again
    const again = await env.emulator.deliver(queue, handler);
    expect(again.delivered).toBe(1);
    expect(again.response.batchItemFailures).toEqual([]);
    expect(runs).toEqual([{ orderId: 'o-9', jobId: '3f0c8a52-1b7e-4a1c-9d2e-5e6f7a8b9c0d' }]);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });

  it('dead-letters a raw message without its identity, saying what was missing, the body kept', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('orders-poison', false);
    const runs: Run[] = [];
    const handler = rawWorker({ from: 'json', id: { field: 'orderId' } }, queue, dlq, recording(runs));
    const body = JSON.stringify({ order: 'o-1', total: 1 });
    await sendRaw(queue, body);
    await env.emulator.deliver(queue, handler);

    const [dead] = await env.emulator.receiveWithin(dlq, 2_000);
    expect(runs).toEqual([]);
    expect(dead?.Body).toBe(body);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('RawMessageError');
    expect(dead?.MessageAttributes?.JobType?.StringValue).toBe('orders.placed');
    expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(/orderId .*it is missing/);
  });

  it('dead-letters a poison raw message with evidence; sqs-jobs dlq redrive puts its body and identity back, and it runs', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('orders-redrive', false);
    const body = JSON.stringify({ orderId: 'o-5', total: 5 });
    let fixed = false;
    const runs: Run[] = [];
    const handler = rawWorker(
      { from: 'json', id: { attribute: 'order-id' } },
      queue,
      dlq,
      async (data, ctx) => {
        if (!fixed) throw new PermanentError(`customer of ${data.orderId} not found`);
        runs.push({ orderId: data.orderId, jobId: ctx.jobId });
      },
    );
    await sendRaw(queue, body, { 'order-id': 'o-5' });
    await env.emulator.deliver(queue, handler);

    const [dead] = await env.emulator.receiveWithin(dlq, 2_000);
    expect(dead?.Body).toBe(body);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('PermanentError');
    expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toBe('customer of o-5 not found');
    expect(dead?.MessageAttributes?.['order-id']?.StringValue).toBe('o-5');
    // Listing made it invisible for a while: let the redrive see it at once.
    const { ChangeMessageVisibilityCommand } = await import('@aws-sdk/client-sqs');
    await env.emulator.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dlq.url,
        ReceiptHandle: dead?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );

    fixed = true;
    const redrive = await runCli(
      [
        'dlq',
        'redrive',
        '--dlq-url',
        dlq.url,
        '--target-url',
        queue.url,
        '--yes',
        '--endpoint',
        env.emulator.endpoint,
        '--wait-seconds',
        '0',
      ],
      env.emulator.endpoint,
    );
    expect(redrive.code, redrive.stderr).toBe(0);
    const delivered = await env.emulator.deliver(queue, handler);
    expect(delivered.messages[0]?.Body).toBe(body);
    expect(delivered.messages[0]?.MessageAttributes?.['order-id']?.StringValue).toBe('o-5');
    expect(Object.keys(delivered.messages[0]?.MessageAttributes ?? {})).toEqual(['order-id']);
    expect(runs).toEqual([{ orderId: 'o-5', jobId: 'o-5' }]);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });
});
