/**
 * createWorker against the embedded SQS emulator (fauxqs): messages received from a real queue
 * API, the handler's response applied the way the event source mapping applies it (successes
 * deleted, failures left to their visibility), DLQ and visibility changes done for real.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { childJobId, createEnvelope, type JobEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { SqsSender } from '../../lib/runtime/sqs-port.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import {
  type EmulatedSqs,
  type EmulatedQueue as Queue,
  startEmulatedSqs,
} from '../factories/emulated-sqs.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

const createQueue = (base: string, fifo: boolean) => emulator.createQueue(base, fifo);
const receive = (queue: Queue) => emulator.receive(queue);
const receiveWithin = (queue: Queue, ms: number) => emulator.receiveWithin(queue, ms);
const deliver = (queue: Queue, handler: ReturnType<typeof createWorker>) => emulator.deliver(queue, handler);
const send = (queue: Queue, envelope: JobEnvelope, groupId?: string) =>
  emulator.send(queue, envelope, groupId);

function worker(
  jobs: AnyJob[],
  queue: Queue,
  dlq: Queue,
  extra: { queueUrls?: Record<string, string>; sqs?: SqsSender } = {},
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
    sqs: emulator.sqs,
    random: () => 0.9999,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {},
    ...extra,
  });
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
    await emulator.sqs.send(
      new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"not": "an envelope"' }),
    );
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
    // The moment the worker asks SQS to hide the message for its backoff, and for how long.
    const hides: { atMs: number; seconds: unknown }[] = [];
    const sqs: SqsSender = {
      send(command) {
        if (command instanceof ChangeMessageVisibilityCommand)
          hides.push({ atMs: Date.now(), seconds: command.input.VisibilityTimeout });
        return emulator.sqs.send(command as Parameters<EmulatedSqs['sqs']['send']>[0]);
      },
    };
    const handler = worker([job], queue, dlq, { sqs });

    const first = await deliver(queue, handler);
    expect(first.response.batchItemFailures).toHaveLength(1);
    // Hidden for the backoff, far less than the queue's 30 s visibility timeout: polled from now
    // on, it comes back no sooner than 2 s after the worker hid it (the clock of the request, not
    // of a guess at when the test gets to poll).
    expect(hides.map((h) => h.seconds)).toEqual([2]);
    const back = await receiveWithin(queue, 10_000);
    const waited = Date.now() - (hides[0]?.atMs ?? 0);
    expect(back).toHaveLength(1);
    expect(waited).toBeGreaterThanOrEqual(2_000);
    expect(waited).toBeLessThan(10_000);
    expect(back[0]?.Attributes?.ApproximateReceiveCount).toBe('2');

    // Hand the returned message to the worker as the event source mapping would.
    const record = recordFromMessage(back[0] as Message, queue.arn);
    const { value: second } = await captureOutput(() => handler(sqsEvent([record]), lambdaContext()));
    expect(second.batchItemFailures).toEqual([]);
    await emulator.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: back[0]?.ReceiptHandle }),
    );
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
