/**
 * Through the local runtime: dead-letter paths of the sample app and what the alarms watch.
 * - A malformed message among good ones goes to the DLQ alone, body unchanged, with its evidence;
 *   its neighbours in the same batch complete.
 * - Out of stock goes straight to the DLQ (one attempt, no retry) and does not block the user's
 *   next booking on the FIFO queue.
 * - Queue age and DLQ depth are readable from the emulator while a run is going on.
 */
import { ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobClient } from '../../lib/client/job-client.ts';
import { createEnvelope } from '../../lib/core/envelope.ts';
import type { QueueDepth } from '../../lib/local/runtime.ts';
import type { Booking } from '../../lib/sample/domain.ts';
import { sampleJobs } from '../../lib/sample/jobs.ts';
import { type SampleStack, SOLD_OUT_SKU, startSampleStack } from '../../lib/sample/workload.ts';

let stack: SampleStack;

beforeAll(async () => {
  // The default client timeout for the fake partner (5 s): no fault here makes a call hang, and a
  // short one (it was 3 s) can be outlasted by a `slow` call (700 ms) on a loaded machine.
  stack = await startSampleStack({ externalService: { slowMs: 700 } });
  await stack.repository.putStock('sku-01', 1_000);
  await stack.repository.putStock(SOLD_OUT_SKU, 0);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const functionStats = (queue: string) =>
  stack.runtime.stats().functions[stack.runtime.worker(queue).functionLogicalId];

async function seedBookings(userId: string, count: number, sku = 'sku-01'): Promise<Booking[]> {
  await stack.repository.putUser({ userId, email: `${userId}@example.com`, name: userId });
  const bookings: Booking[] = [];
  for (let i = 1; i <= count; i++) {
    const booking: Booking = {
      bookingId: `${userId}-b${i}`,
      userId,
      sku,
      quantity: 1,
      amountCents: 1_000 + i,
      ordinal: i,
      status: 'PENDING',
    };
    await stack.repository.putBooking(booking);
    bookings.push(booking);
  }
  return bookings;
}

async function readDeadLetters(queue: string) {
  const url = stack.runtime.queue(queue).deadLetterQueue?.url ?? '';
  const out = await stack.runtime.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 0,
      MessageAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

describe('dead letters on the local runtime', () => {
  it('a malformed message among good ones lands in the DLQ with its evidence; its neighbours complete', async () => {
    const { runtime, target, repository } = stack;
    const bookings = await seedBookings('u-malformed', 4);
    const good = bookings.map((b) =>
      JSON.stringify(
        createEnvelope({
          type: sampleJobs.capturePayment.type,
          source: '/test/dead-letters',
          id: `capture-${b.bookingId}`,
          data: { userId: b.userId, bookingId: b.bookingId },
        }),
      ),
    );
    const malformedBody = '{"specversion":"1.0","type":"payments.capture","data":';
    const bodies = [good[0], good[1], malformedBody, good[2], good[3]] as string[];
    const before = functionStats('payments');
    const sent = await runtime.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: target.queueUrls.payments,
        Entries: bodies.map((MessageBody, i) => ({ Id: String(i), MessageBody })),
      }),
    );
    const malformedId = sent.Successful?.find((s) => s.Id === '2')?.MessageId;
    expect(malformedId).toBeDefined();
    await runtime.waitUntilDrained({ queues: ['payments'], timeoutMs: 30_000 });

    for (const b of bookings)
      expect((await repository.getBooking(b.userId, b.bookingId)).paymentId).toMatch(/^pay_/);
    const after = functionStats('payments');
    // Five records received once each, all acknowledged (the malformed one after it was dead-lettered).
    expect((after?.recordsReceived ?? 0) - (before?.recordsReceived ?? 0)).toBe(5);
    expect((after?.recordsDeleted ?? 0) - (before?.recordsDeleted ?? 0)).toBe(5);

    const dead = await readDeadLetters('payments');
    expect(dead).toHaveLength(1);
    const [message] = dead;
    expect(message?.Body).toBe(malformedBody);
    const attr = (name: string) => message?.MessageAttributes?.[name]?.StringValue;
    expect(attr('SourceMessageId')).toBe(malformedId);
    expect(attr('Attempts')).toBe('1');
    // The names survive the minified bundle (keepNames): operators group the DLQ by them.
    expect(attr('ErrorName')).toBe('EnvelopeError');
    expect(attr('ErrorReason')).toBe('EnvelopeError');
    expect(attr('ErrorMessage')).toMatch(/JSON/);
    expect(attr('FirstFailureAt')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  }, 60_000);

  it('out of stock goes straight to the DLQ without a retry, and the user’s next booking goes on', async () => {
    const { runtime, target, repository, metrics } = stack;
    await repository.putUser({ userId: 'u-stock', email: 'stock@example.com', name: 'Stock' });
    const soldOut: Booking = {
      bookingId: 'u-stock-b1',
      userId: 'u-stock',
      sku: SOLD_OUT_SKU,
      quantity: 1,
      amountCents: 100,
      ordinal: 1,
      status: 'PENDING',
    };
    const next: Booking = { ...soldOut, bookingId: 'u-stock-b2', sku: 'sku-01', ordinal: 2 };
    await repository.putBooking(soldOut);
    await repository.putBooking(next);
    const retriedBefore = metrics.JobRetried ?? 0;
    const before = functionStats('booking');
    const client = new JobClient({
      source: '/test/dead-letters',
      queueUrls: target.queueUrls,
      sqs: runtime.sqs,
    });
    for (const b of [soldOut, next]) {
      await client.send(
        sampleJobs.reserveInventory,
        { userId: b.userId, bookingId: b.bookingId },
        { partitionKey: b.userId, id: `reserve-${b.bookingId}` },
      );
    }
    await runtime.waitUntilDrained({ queues: ['booking', 'notifications'], timeoutMs: 30_000 });

    const dead = await readDeadLetters('booking');
    expect(dead).toHaveLength(1);
    const attr = (name: string) => dead[0]?.MessageAttributes?.[name]?.StringValue;
    expect(attr('ErrorName')).toBe('OutOfStockError');
    expect(attr('ErrorReason')).toBe('OutOfStockError');
    expect(attr('JobType')).toBe('booking.reserve-inventory');
    expect(attr('Attempts')).toBe('1');
    expect(JSON.parse(dead[0]?.Body ?? '{}')).toMatchObject({
      id: 'reserve-u-stock-b1',
      data: { bookingId: 'u-stock-b1' },
    });
    expect(metrics.JobRetried ?? 0).toBe(retriedBefore);
    // Received once, never again; no confirmation was chained. The next booking ran its whole chain.
    const after = functionStats('booking');
    expect((after?.recordsReceived ?? 0) - (before?.recordsReceived ?? 0)).toBe(4);
    expect((await repository.getBooking('u-stock', 'u-stock-b1')).status).toBe('PENDING');
    expect((await repository.getBooking('u-stock', 'u-stock-b2')).status).toBe('INVOICED');
    expect((await repository.getStock(SOLD_OUT_SKU))?.stock).toBe(0);
  }, 60_000);
});

describe('what the alarms watch, read from the emulator during a run', () => {
  it('shows the age of the oldest message while jobs wait and the DLQ depth once one is dead-lettered', async () => {
    const { runtime, target, service } = stack;
    const bookings = await seedBookings('u-depth', 40);
    service.setFaults({ slow: 1 });
    const client = new JobClient({ source: '/test/depth', queueUrls: target.queueUrls, sqs: runtime.sqs });
    await client.sendBatch(
      bookings.map((b) => ({
        job: sampleJobs.sendEmail,
        data: { userId: b.userId, bookingId: b.bookingId, template: 'booking-confirmed' },
        options: { id: `email-${b.bookingId}` },
      })),
    );
    // A schema failure: dead-lettered at once while the slow emails are still in the queue.
    await runtime.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: target.queueUrls.notifications,
        Entries: [
          {
            Id: 'bad',
            MessageBody: JSON.stringify(
              createEnvelope({
                type: sampleJobs.sendEmail.type,
                source: '/test/depth',
                data: { userId: 'u-depth' },
              }),
            ),
          },
        ],
      }),
    );
    const dlqUrl = runtime.queue('notifications').deadLetterQueue?.url ?? '';
    let during: { queue: QueueDepth; dlq: QueueDepth } | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const [queue, dlq] = await Promise.all([
        runtime.queueDepth('notifications'),
        runtime.queueDepth(dlqUrl),
      ]);
      if (
        queue.visible + queue.notVisible > 0 &&
        (queue.oldestMessageAgeMs ?? 0) >= 300 &&
        dlq.visible >= 1
      ) {
        during = { queue, dlq };
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    service.setFaults({});
    expect(during).toBeDefined();
    // ApproximateAgeOfOldestMessage (ms here, s in CloudWatch) and ApproximateNumberOfMessagesVisible of the DLQ.
    expect(during?.queue.oldestMessageAgeMs).toBeGreaterThanOrEqual(300);
    expect(during?.dlq.visible).toBe(1);

    await runtime.waitUntilDrained({ queues: ['notifications'], timeoutMs: 60_000 });
    const drained = await runtime.queueDepth('notifications');
    expect(drained).toMatchObject({ visible: 0, notVisible: 0, delayed: 0, oldestMessageAgeMs: 0 });
    expect((await runtime.queueDepth(dlqUrl)).visible).toBe(1);
  }, 90_000);
});
