/**
 * `onDeadLetter: 'park'` end to end on the emulators: the real worker on a FIFO queue (fauxqs)
 * with the DynamoDB idempotency store (dynalite), and the DLQ redrive of lib/ops. A user's
 * "confirm reservation" fails permanently: the user's later jobs (the invoice, and a job sent
 * while the group is parked) are dead-lettered after it as `GroupParked`; another user goes on. A
 * redrive before the fix parks the group again in the same order; a redrive after the fix runs
 * the blocker, then the parked jobs, in order, and everything completes.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { redriveDeadLetters } from '../../lib/ops/redrive.ts';
import { createEnvelope } from '../../lib/runtime/envelope.ts';
import { PermanentError } from '../../lib/runtime/errors.ts';
import { defaultJobKey } from '../../lib/runtime/idempotency/keys.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

let emulator: EmulatedSqs;
let db: DynaliteHandle;
let tableName: string;

beforeAll(async () => {
  [emulator, db] = await Promise.all([startEmulatedSqs(), startDynalite()]);
  tableName = await db.createTable();
});

afterAll(async () => {
  await Promise.all([emulator?.stop(), db?.stop()]);
});

/** Fast DLQ reads on the emulator: short polls, one empty receive ends a read. */
const FAST = { waitTimeSeconds: 0, emptyReceivesToStop: 1, holdSeconds: 60 } as const;
const SOURCE = '/checkout';
const schema = z.object({ bookingId: z.string() });

/**
 * The booking chain of the sample; `confirm` parks its group when dead-lettered. A step fails
 * permanently while `broken` holds `<step> <bookingId>` (the cause an operator fixes).
 */
function bookingWorker(queue: EmulatedQueue, dlq: EmulatedQueue, ran: string[], broken: Set<string>) {
  const step =
    (name: string) =>
    async ({ bookingId }: { bookingId: string }) => {
      ran.push(`${name} ${bookingId}`);
      if (broken.has(`${name} ${bookingId}`))
        throw new PermanentError(`reservation of ${bookingId} does not exist`);
    };
  const jobs = [
    defineJob({ type: 'booking.reserve', queue: 'booking', schema, run: step('reserve') }),
    defineJob({
      type: 'booking.confirm',
      queue: 'booking',
      schema,
      onDeadLetter: 'park',
      run: step('confirm'),
    }),
    defineJob({ type: 'booking.invoice', queue: 'booking', schema, run: step('invoice') }),
  ];
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  const store = new DynamoIdempotencyStore({ tableName, client: db.client });
  const handler = createWorker({
    jobs,
    queueName: queue.url.split('/').pop() ?? 'booking',
    queueUrl: queue.url,
    dlqUrl: dlq.url,
    handlerVersion: 'it-park',
    idempotency: store,
    sqs: emulator.sqs,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {},
  });
  return { handler, store };
}

/** The event source mapping until the queue is empty: receive, invoke, delete what succeeded. */
async function drain(queue: EmulatedQueue, handler: WorkerHandler): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const messages = await emulator.receive(queue);
    if (messages.length === 0) return;
    const records = messages.map((m) => recordFromMessage(m, queue.arn));
    const { value } = await captureOutput(() => handler(sqsEvent(records), lambdaContext(60_000)));
    // Nothing here fails transiently: every record is completed or dead-lettered.
    expect(value.batchItemFailures).toEqual([]);
    for (const message of messages) {
      await emulator.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
  throw new Error('the queue did not drain');
}

async function send(queue: EmulatedQueue, type: string, id: string, user: string, bookingId: string) {
  await emulator.send(
    queue,
    createEnvelope({ type, source: SOURCE, id, data: { bookingId }, partitionKey: user }),
    user,
  );
}

async function redrive(queue: EmulatedQueue, dlq: EmulatedQueue) {
  const result = await redriveDeadLetters({
    sqs: emulator.sqs,
    dlqUrl: dlq.url,
    targetUrl: queue.url,
    ...FAST,
  });
  expect(result.failed).toEqual([]);
  expect(result.skipped).toEqual([]);
  // In DLQ order, which is the group's order.
  return result.moved.map((m) => [m.jobId, m.reason, m.messageGroupId]);
}

describe("onDeadLetter: 'park' with the real worker, the DynamoDB store and a DLQ redrive", () => {
  it('parks the group after a dead letter, keeps it parked through a failed redrive, and runs it in order once fixed', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const ran: string[] = [];
    const broken = new Set(['confirm b1']);
    const { handler, store } = bookingWorker(queue, dlq, ran, broken);
    const queueName = queue.url.split('/').pop() as string;

    await send(queue, 'booking.reserve', 'u1-reserve-b1', 'user-1', 'b1');
    await send(queue, 'booking.confirm', 'u1-confirm-b1', 'user-1', 'b1');
    await send(queue, 'booking.invoice', 'u1-invoice-b1', 'user-1', 'b1');
    await send(queue, 'booking.reserve', 'u2-reserve-b9', 'user-2', 'b9');
    await send(queue, 'booking.confirm', 'u2-confirm-b9', 'user-2', 'b9');
    await drain(queue, handler);

    // user-1 stops at the failed confirmation: no invoice for it. user-2 goes on.
    expect(ran.filter((r) => r.endsWith('b1'))).toEqual(['reserve b1', 'confirm b1']);
    expect(ran.filter((r) => r.endsWith('b9'))).toEqual(['reserve b9', 'confirm b9']);
    const park = await store.readGroupPark(queueName, 'user-1');
    expect(park).toMatchObject({
      blockerJobType: 'booking.confirm',
      blockerJobId: 'u1-confirm-b1',
      parkCount: 1,
    });
    expect(await store.readGroupPark(queueName, 'user-2')).toBeUndefined();

    // A job of the user sent while the group is parked (another instance, a later batch): held too.
    await send(queue, 'booking.reserve', 'u1-reserve-b2', 'user-1', 'b2');
    await drain(queue, handler);
    expect(ran).not.toContain('reserve b2');

    // Redrive before the fix: the blocker fails again and the group is parked again, same order.
    expect(await redrive(queue, dlq)).toEqual([
      ['u1-confirm-b1', 'PermanentError', 'user-1'],
      ['u1-invoice-b1', 'GroupParked', 'user-1'],
      ['u1-reserve-b2', 'GroupParked', 'user-1'],
    ]);
    await drain(queue, handler);
    expect(ran.filter((r) => r.endsWith('b1') || r.endsWith('b2'))).toEqual([
      'reserve b1',
      'confirm b1',
      'confirm b1',
    ]);
    expect(await store.readGroupPark(queueName, 'user-1')).toMatchObject({ parkCount: 2 });

    // Fixed: the redrive runs the blocker first, then the parked jobs, in order; all complete.
    broken.clear();
    expect(await redrive(queue, dlq)).toEqual([
      ['u1-confirm-b1', 'PermanentError', 'user-1'],
      ['u1-invoice-b1', 'GroupParked', 'user-1'],
      ['u1-reserve-b2', 'GroupParked', 'user-1'],
    ]);
    await drain(queue, handler);

    expect(ran.filter((r) => r.endsWith('b1') || r.endsWith('b2'))).toEqual([
      'reserve b1',
      'confirm b1',
      'confirm b1',
      'confirm b1',
      'invoice b1',
      'reserve b2',
    ]);
    expect(await store.readGroupPark(queueName, 'user-1')).toBeUndefined();
    for (const [type, id] of [
      ['booking.confirm', 'u1-confirm-b1'],
      ['booking.invoice', 'u1-invoice-b1'],
      ['booking.reserve', 'u1-reserve-b2'],
    ] as const) {
      expect((await store.readRecord(type, defaultJobKey(SOURCE, id)))?.status).toBe('COMPLETED');
    }
    expect(await emulator.receive(dlq)).toEqual([]);

    // The group is free again: the user's next job runs at once.
    await send(queue, 'booking.invoice', 'u1-invoice-b2', 'user-1', 'b2');
    await drain(queue, handler);
    expect(ran.at(-1)).toBe('invoice b2');
  });
});
