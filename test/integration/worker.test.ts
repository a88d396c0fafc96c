/**
 * createWorker against the embedded SQS emulator (fauxqs): messages received from a real queue
 * API, the handler's response applied the way the event source mapping applies it (successes
 * deleted, failures left to their visibility), DLQ and visibility changes done for real.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  childJobId,
  createEnvelope,
  deduplicationIdOf,
  type JobEnvelope,
} from '../../lib/runtime/envelope.ts';
import { PermanentError, TransientError } from '../../lib/runtime/errors.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';

let server: Awaited<ReturnType<typeof startFauxqs>>;
let sqs: SQSClient;
let queueCounter = 0;

beforeAll(async () => {
  server = await startFauxqs({ port: 0, logger: false });
  sqs = new SQSClient({
    endpoint: server.address,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
});

afterAll(async () => {
  sqs?.destroy();
  await server?.stop();
});

interface Queue {
  readonly url: string;
  readonly arn: string;
}

async function createQueue(base: string, fifo: boolean): Promise<Queue> {
  queueCounter += 1;
  const name = `${base}-${queueCounter}${fifo ? '.fifo' : ''}`;
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { VisibilityTimeout: '30', ...(fifo ? { FifoQueue: 'true' } : {}) },
    }),
  );
  const url = created.QueueUrl as string;
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return { url, arn: attributes.Attributes?.QueueArn as string };
}

async function receive(queue: Queue): Promise<Message[]> {
  const out = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

/** Waits until the queue returns messages, up to `timeoutMs`. */
async function receiveWithin(queue: Queue, timeoutMs: number): Promise<Message[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const messages = await receive(queue);
    if (messages.length > 0 || Date.now() > deadline) return messages;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One poll of the event source mapping: receive, invoke, delete what succeeded. */
async function deliver(
  queue: Queue,
  handler: WorkerHandler,
): Promise<{ response: SQSBatchResponse; delivered: number }> {
  const messages = await receiveWithin(queue, 2_000);
  const records = messages.map((m) => recordFromMessage(m, queue.arn));
  const { value: response } = await captureOutput(() => handler(sqsEvent(records), lambdaContext(60_000)));
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  for (const message of messages) {
    if (!failed.has(message.MessageId ?? '')) {
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }));
    }
  }
  return { response, delivered: messages.length };
}

function worker(
  jobs: AnyJob[],
  queue: Queue,
  dlq: Queue,
  extra: { queueUrls?: Record<string, string> } = {},
) {
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  return createWorker({
    jobs,
    queueName: 'integration',
    queueUrl: queue.url,
    dlqUrl: dlq.url,
    handlerVersion: 'it-1',
    idempotency: false,
    sqs,
    random: () => 0.9999,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {},
    ...extra,
  });
}

async function send(queue: Queue, envelope: JobEnvelope, groupId?: string): Promise<string> {
  const body = JSON.stringify(envelope);
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queue.url,
      MessageBody: body,
      ...(groupId === undefined
        ? {}
        : { MessageGroupId: groupId, MessageDeduplicationId: deduplicationIdOf(envelope) }),
    }),
  );
  return body;
}

const orderSchema = z.object({ orderId: z.string() });

describe('worker on the SQS emulator', () => {
  it('dead-letters a permanent failure with its evidence and the body unchanged', async () => {
    const queue = await createQueue('orders', false);
    const dlq = await createQueue('orders-dlq', false);
    const job = defineJob({
      type: 'orders.capture',
      queue: 'orders',
      schema: orderSchema,
      run: async ({ orderId }) => {
        throw new PermanentError(`order ${orderId} does not exist`);
      },
    });
    const body = await send(
      queue,
      createEnvelope({
        type: 'orders.capture',
        source: '/checkout',
        id: 'job-404',
        data: { orderId: 'o-404' },
      }),
    );
    const { response, delivered } = await deliver(queue, worker([job], queue, dlq));

    expect(delivered).toBe(1);
    expect(response.batchItemFailures).toEqual([]);
    const [dead] = await receiveWithin(dlq, 2_000);
    expect(dead?.Body).toBe(body);
    const attributes = dead?.MessageAttributes ?? {};
    expect(attributes.JobType?.StringValue).toBe('orders.capture');
    expect(attributes.ErrorName?.StringValue).toBe('PermanentError');
    expect(attributes.ErrorMessage?.StringValue).toBe('order o-404 does not exist');
    expect(attributes.ErrorReason?.StringValue).toBe('PermanentError');
    expect(attributes.Attempts).toMatchObject({ DataType: 'Number', StringValue: '1' });
    expect(attributes.HandlerVersion?.StringValue).toBe('it-1');
    expect(attributes.ErrorStack?.StringValue).toMatch(/PermanentError: order o-404/);
    expect(Date.parse(attributes.LastFailureAt?.StringValue ?? '')).not.toBeNaN();
    // Acknowledged: nothing is left on the source queue.
    expect(await receive(queue)).toEqual([]);
  });

  it('dead-letters a malformed body as it came, next to a good record that runs', async () => {
    const queue = await createQueue('mixed', false);
    const dlq = await createQueue('mixed-dlq', false);
    const ran: string[] = [];
    const job = defineJob({
      type: 'orders.capture',
      queue: 'orders',
      schema: orderSchema,
      run: async ({ orderId }) => void ran.push(orderId),
    });
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"not": "an envelope"' }));
    await send(
      queue,
      createEnvelope({ type: 'orders.capture', source: '/checkout', data: { orderId: 'o-1' } }),
    );
    const handler = worker([job], queue, dlq);
    let deliveredTotal = 0;
    while (deliveredTotal < 2) deliveredTotal += (await deliver(queue, handler)).delivered;

    expect(ran).toEqual(['o-1']);
    const [dead] = await receiveWithin(dlq, 2_000);
    expect(dead?.Body).toBe('{"not": "an envelope"');
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('EnvelopeError');
  });

  it('brings a transient failure back after its backoff, then it succeeds', async () => {
    const queue = await createQueue('payments', false);
    const dlq = await createQueue('payments-dlq', false);
    const attempts: number[] = [];
    const job = defineJob({
      type: 'payments.capture',
      queue: 'payments',
      schema: orderSchema,
      // Attempt 1 fails; with random 0.9999 the backoff is the full base: 2 s.
      retry: { maxAttempts: 3, baseDelaySeconds: 2 },
      run: async (_data, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new TransientError('gateway 503');
      },
    });
    await send(
      queue,
      createEnvelope({ type: 'payments.capture', source: '/checkout', data: { orderId: 'o-1' } }),
    );
    const handler = worker([job], queue, dlq);

    const first = await deliver(queue, handler);
    const failedAt = Date.now();
    expect(first.response.batchItemFailures).toHaveLength(1);
    // Hidden for the backoff, far less than the queue's 30 s visibility timeout.
    expect(await receive(queue)).toEqual([]);
    const back = await receiveWithin(queue, 10_000);
    const waited = Date.now() - failedAt;
    expect(back).toHaveLength(1);
    expect(waited).toBeGreaterThanOrEqual(1_500);
    expect(waited).toBeLessThan(10_000);
    expect(back[0]?.Attributes?.ApproximateReceiveCount).toBe('2');

    // Hand the returned message to the worker as the event source mapping would.
    const record = recordFromMessage(back[0] as Message, queue.arn);
    const { value: second } = await captureOutput(() => handler(sqsEvent([record]), lambdaContext()));
    expect(second.batchItemFailures).toEqual([]);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: back[0]?.ReceiptHandle }));
    expect(attempts).toEqual([1, 2]);
    expect(await receiveWithin(dlq, 300)).toEqual([]);
  });

  it('keeps the MessageGroupId when dead-lettering from a FIFO queue to its FIFO DLQ', async () => {
    const queue = await createQueue('booking', true);
    const dlq = await createQueue('booking-dlq', true);
    const job = defineJob({
      type: 'booking.reserve',
      queue: 'booking',
      schema: orderSchema,
      run: async () => {
        throw new PermanentError('sold out');
      },
    });
    const envelope = createEnvelope({
      type: 'booking.reserve',
      source: '/checkout',
      data: { orderId: 'o-7' },
      partitionKey: 'user-7',
    });
    const body = await send(queue, envelope, 'user-7');
    const { response } = await deliver(queue, worker([job], queue, dlq));
    expect(response.batchItemFailures).toEqual([]);
    const [dead] = await receiveWithin(dlq, 2_000);
    expect(dead?.Body).toBe(body);
    expect(dead?.Attributes?.MessageGroupId).toBe('user-7');
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('PermanentError');
  });

  it('sends a child job to its queue only after the parent succeeded, with an id derived from the parent', async () => {
    const queue = await createQueue('parents', false);
    const dlq = await createQueue('parents-dlq', false);
    const children = await createQueue('children', false);
    const child = defineJob({
      type: 'mail.send',
      queue: 'notifications',
      schema: orderSchema,
      run: async () => {},
    });
    const parent = defineJob({
      type: 'orders.place',
      queue: 'orders',
      schema: orderSchema,
      run: async ({ orderId }, ctx) => {
        ctx.enqueue(child, { orderId });
      },
    });
    await send(
      queue,
      createEnvelope({ type: 'orders.place', source: '/checkout', id: 'p-1', data: { orderId: 'o-9' } }),
    );
    const { response } = await deliver(
      queue,
      worker([parent], queue, dlq, { queueUrls: { notifications: children.url } }),
    );
    expect(response.batchItemFailures).toEqual([]);
    const [message] = await receiveWithin(children, 2_000);
    const envelope = JSON.parse(message?.Body ?? '{}') as JobEnvelope;
    expect(envelope).toMatchObject({
      type: 'mail.send',
      id: childJobId({ source: '/checkout', id: 'p-1' }, 'mail.send', 0),
      data: { orderId: 'o-9' },
    });
  });
});
