/**
 * Jobs sent for later, end to end on the emulators: `JobClient` (state items in dynalite, SQS
 * messages on fauxqs, schedules in a fake Scheduler whose firing the test plays by sending the
 * schedule's Input to the queue, as EventBridge Scheduler's SQS target does) and the real worker
 * with the DynamoDB idempotency store. A job sent with DelaySeconds and cancelled never runs and is
 * recorded as cancelled; a rescheduled job runs once, at its new generation, and its first message
 * is superseded; a scheduled message delivered twice (Scheduler delivers at least once) runs once.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import { scheduledJobKey } from '../../lib/core/scheduled-job.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { FakeScheduler } from '../factories/fake-scheduler.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput, type OutputLine } from '../factories/worker.ts';
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

const SOURCE = '/services/booking';
/** The job as a producer sees it: type, queue, schema. */
const expireHold = { type: 'booking.expire-hold', queue: 'holds', schema: z.object({ holdId: z.string() }) };

/** A queue, a client sending to it, and the real worker running `booking.expire-hold` on it. */
async function setup(options: { workerClockAheadMs?: number } = {}) {
  const queue = await emulator.createQueue('holds', false);
  const ran: string[] = [];
  const job = defineJob({
    type: 'booking.expire-hold',
    queue: 'holds',
    schema: z.object({ holdId: z.string() }),
    async run({ holdId }) {
      ran.push(holdId);
    },
  });
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  const ahead = options.workerClockAheadMs ?? 0;
  const handler = createWorker({
    jobs: [job],
    queueName: 'holds',
    queueUrl: queue.url,
    dlqUrl: queue.url,
    handlerVersion: 'it-later',
    idempotency: new DynamoIdempotencyStore({ tableName, client: db.client, now: () => Date.now() + ahead }),
    sqs: emulator.sqs,
    logger: new Logger({ logLevel: 'INFO' }),
    metrics,
    now: () => Date.now() + ahead,
    env: {},
  });
  const scheduler = new FakeScheduler();
  const client = new JobClient({
    source: SOURCE,
    queueUrls: { holds: queue.url },
    sqs: emulator.sqs,
    dynamodb: db.client,
    scheduler,
    scheduling: {
      idempotencyTableName: tableName,
      queues: {
        holds: { groupName: 'it-holds', roleArn: 'arn:aws:iam::000000000000:role/it', queueArn: queue.arn },
      },
    },
  });
  return { queue, ran, handler, client, scheduler };
}

/**
 * The event source mapping until `records` records were acknowledged (completed, cancelled,
 * superseded, duplicate): receive (waiting for delayed messages to become visible), invoke,
 * delete what succeeded. Returns the worker's log lines.
 */
async function deliverUntil(
  queue: EmulatedQueue,
  handler: WorkerHandler,
  records: number,
): Promise<OutputLine[]> {
  const lines: OutputLine[] = [];
  let acknowledged = 0;
  for (let round = 0; acknowledged < records; round++) {
    if (round > 50) throw new Error(`only ${acknowledged} of ${records} records were acknowledged`);
    const messages = await emulator.receiveWithin(queue, 10_000);
    const records_ = messages.map((m) => recordFromMessage(m, queue.arn));
    const { value, lines: printed } = await captureOutput(() =>
      handler(sqsEvent(records_), lambdaContext(60_000)),
    );
    lines.push(...printed);
    const failed = new Set(value.batchItemFailures.map((f) => f.itemIdentifier));
    for (const message of messages) {
      if (failed.has(message.MessageId ?? '')) continue;
      acknowledged += 1;
      await emulator.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
  return lines;
}

async function stateOf(id: string): Promise<Record<string, unknown> | undefined> {
  const out = await db.client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: { S: scheduledJobKey(SOURCE, id) } },
      ConsistentRead: true,
    }),
  );
  return out.Item;
}

describe('jobs sent for later, through the real worker', () => {
  it('a job sent with DelaySeconds and cancelled never runs and is recorded as cancelled', async () => {
    const { queue, ran, handler, client } = await setup();
    const sent = await client.send(expireHold, { holdId: 'h-1' }, { id: 'hold-h-1', delayMs: 1_000 });
    expect(sent.via).toBe('delay');

    await expect(client.cancel({ queue: 'holds', id: 'hold-h-1' })).resolves.toMatchObject({
      status: 'cancelled',
    });
    const lines = await deliverUntil(queue, handler, 1);

    expect(ran).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ outcome: 'cancelled', jobId: 'hold-h-1' }));
    expect(lines.find((line) => 'JobCancelled' in line)).toMatchObject({ JobCancelled: 1 });
    expect(await stateOf('hold-h-1')).toMatchObject({ state: { S: 'cancelled' } });
    expect(await emulator.receive(queue)).toEqual([]);
    // Too late to run, and a cancel answers so rather than throwing.
    await expect(client.cancel({ queue: 'holds', id: 'hold-h-1' })).resolves.toMatchObject({
      status: 'already-cancelled',
    });
  });

  it('a rescheduled job runs once, at its new generation; its first message is superseded', async () => {
    const { queue, ran, handler, client } = await setup();
    await client.send(expireHold, { holdId: 'h-2' }, { id: 'hold-h-2', delayMs: 1_000 });
    await expect(
      client.reschedule({ queue: 'holds', id: 'hold-h-2' }, new Date(Date.now() + 1_500)),
    ).resolves.toMatchObject({ status: 'rescheduled', generation: 2, via: 'delay' });

    const lines = await deliverUntil(queue, handler, 2);

    expect(ran).toEqual(['h-2']);
    expect(lines).toContainEqual(expect.objectContaining({ outcome: 'superseded', scheduleGeneration: 1 }));
    expect(await stateOf('hold-h-2')).toMatchObject({ state: { S: 'started' }, generation: { N: '2' } });
    await expect(client.cancel({ queue: 'holds', id: 'hold-h-2' })).resolves.toMatchObject({
      status: 'already-started',
    });
  });

  it('a scheduled message delivered twice (Scheduler fires at least once) runs once', async () => {
    // The worker's clock is 20 minutes ahead: the schedule's time has come for it.
    const { queue, ran, handler, client, scheduler } = await setup({ workerClockAheadMs: 20 * 60_000 });
    const sent = await client.send(expireHold, { holdId: 'h-3' }, { id: 'hold-h-3', delayMs: 16 * 60_000 });
    expect(sent.via).toBe('schedule');
    const [schedule] = [...scheduler.schedules.values()];

    // The firing, twice: the schedule's Input as the message body, as the SQS target sends it.
    for (let firing = 0; firing < 2; firing++) {
      await emulator.sqs.send(
        new SendMessageCommand({ QueueUrl: queue.url, MessageBody: schedule.Target.Input }),
      );
    }
    const lines = await deliverUntil(queue, handler, 2);

    expect(ran).toEqual(['h-3']);
    const summaries = lines.filter((line) => line.message === 'batch processed');
    const total = (key: string) => summaries.reduce((sum, line) => sum + Number(line[key] ?? 0), 0);
    expect([total('completed'), total('duplicates')]).toEqual([1, 1]);
  });
});
