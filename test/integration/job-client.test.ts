/**
 * JobClient against the embedded SQS emulator (fauxqs): what a producer sends is what a worker
 * receives — FIFO group ids and dedup ids, per-group order, batches split under the real request
 * limits, and SQS's own refusals reported per entry.
 */
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchEntry, JobClient } from '../../lib/client/job-client.ts';
import { deduplicationIdOf, parseEnvelope } from '../../lib/core/envelope.ts';
import type { JobLogger } from '../../lib/core/logger.ts';
import { queueUrlEnvName, queueUrlsFromEnv } from '../../lib/core/queue-urls.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { type LoopbackFauxqs, startLoopbackFauxqs } from '../factories/loopback-fauxqs.ts';

let server: LoopbackFauxqs;
let sqs: SQSClient;
let counter = 0;

const quiet: JobLogger = { debug() {}, info() {}, warn() {}, error() {} };
const run = async (): Promise<void> => {};
const SOURCE = '/services/checkout';

beforeAll(async () => {
  server = await startLoopbackFauxqs();
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

async function createQueue(name: string, attributes: Record<string, string> = {}): Promise<string> {
  counter += 1;
  const fifo = name.endsWith('.fifo');
  const queueName = fifo ? `${name.slice(0, -5)}-${counter}.fifo` : `${name}-${counter}`;
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: queueName,
      Attributes: { MaximumMessageSize: '1048576', ...(fifo ? { FifoQueue: 'true' } : {}), ...attributes },
    }),
  );
  return created.QueueUrl as string;
}

/** Receives until the queue stays empty, deleting each message (a FIFO group unlocks on delete). */
async function drain(url: string): Promise<Message[]> {
  const all: Message[] = [];
  for (let emptyReads = 0; emptyReads < 2; ) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) emptyReads += 1;
    for (const message of messages) {
      all.push(message);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
    }
  }
  return all;
}

const reserve = defineJob({
  type: 'booking.reserve-inventory',
  queue: 'booking',
  schema: z.object({ bookingId: z.string() }),
  run,
});
const email = defineJob({
  type: 'notifications.email',
  queue: 'notifications',
  schema: z.object({ to: z.string(), note: z.string().optional() }),
  run,
});

describe('JobClient on fauxqs', () => {
  it('delivers a mixed batch: FIFO groups in order with their group and dedup ids, standard jobs as sent', async () => {
    const bookingUrl = await createQueue('booking.fifo');
    const notificationsUrl = await createQueue('notifications');
    const queueUrls = queueUrlsFromEnv({
      [queueUrlEnvName('booking')]: bookingUrl,
      [queueUrlEnvName('notifications')]: notificationsUrl,
    });
    const client = new JobClient({ source: SOURCE, queueUrls, sqs, logger: quiet });

    const entries = [
      batchEntry(reserve, { bookingId: 'u1-a' }, { partitionKey: 'user-1', id: 'job-u1-a' }),
      batchEntry(email, { to: 'u1@example.com' }, { id: 'mail-1' }),
      batchEntry(reserve, { bookingId: 'u2-a' }, { partitionKey: 'user-2', id: 'job-u2-a' }),
      batchEntry(reserve, { bookingId: 'u1-b' }, { partitionKey: 'user-1', id: 'job-u1-b' }),
      batchEntry(email, { to: 'u2@example.com' }, { id: 'mail-2' }),
      batchEntry(reserve, { bookingId: 'u2-b' }, { partitionKey: 'user-2', id: 'job-u2-b' }),
      batchEntry(reserve, { bookingId: 'u1-c' }, { partitionKey: 'user-1', id: 'job-u1-c' }),
    ];
    const result = await client.sendBatch(entries);

    expect(result.failed).toEqual([]);
    expect(result.sent.map((s) => [s.index, s.queue])).toEqual(entries.map((e, i) => [i, e.job.queue]));
    for (const sent of result.sent.filter((s) => s.queue === 'booking')) {
      expect(sent.sequenceNumber).toMatch(/^\d+$/);
    }

    // Sending the same FIFO jobs again inside the 5-minute window is absorbed by SQS dedup.
    const again = await client.sendBatch(entries.filter((e) => e.job === reserve));
    expect(again.failed).toEqual([]);

    const fifoMessages = await drain(bookingUrl);
    expect(fifoMessages).toHaveLength(5);
    const byGroup = new Map<string, string[]>();
    for (const message of fifoMessages) {
      const envelope = parseEnvelope(message.Body as string);
      expect(envelope.source).toBe(SOURCE);
      expect(envelope.type).toBe('booking.reserve-inventory');
      expect(message.Attributes?.MessageGroupId).toBe(envelope.partitionkey);
      expect(message.Attributes?.MessageDeduplicationId).toBe(deduplicationIdOf(envelope));
      const group = message.Attributes?.MessageGroupId as string;
      byGroup.set(group, [...(byGroup.get(group) ?? []), (envelope.data as { bookingId: string }).bookingId]);
    }
    expect(Object.fromEntries(byGroup)).toEqual({
      'user-1': ['u1-a', 'u1-b', 'u1-c'],
      'user-2': ['u2-a', 'u2-b'],
    });

    const standardMessages = await drain(notificationsUrl);
    expect(standardMessages.map((m) => parseEnvelope(m.Body as string).id).sort()).toEqual([
      'mail-1',
      'mail-2',
    ]);
    for (const message of standardMessages) expect(message.Attributes?.MessageGroupId).toBeUndefined();
  });

  it('splits large jobs into requests the emulator accepts and delivers every body intact', async () => {
    const notificationsUrl = await createQueue('notifications');
    const client = new JobClient({
      source: SOURCE,
      queueUrls: { notifications: notificationsUrl },
      sqs,
      logger: quiet,
      payloadWarnBytes: Number.POSITIVE_INFINITY,
    });
    // five ~300 KB messages: at most three fit in one 1 MiB request
    const notes = ['a', 'b', 'c', 'd', 'e'].map((c) => c.repeat(300_000));
    const result = await client.sendBatch(notes.map((note, i) => batchEntry(email, { to: `${i}`, note })));
    expect(result.failed).toEqual([]);
    expect(result.sent).toHaveLength(5);

    const received = await drain(notificationsUrl);
    const bodies = received.map((m) => parseEnvelope(m.Body as string).data as { note: string });
    expect(bodies.map((b) => b.note).sort()).toEqual(notes);
  });

  it('reports what SQS itself refuses, naming its error, and still sends the rest', async () => {
    const smallUrl = await createQueue('notifications', { MaximumMessageSize: '1024' });
    const client = new JobClient({
      source: SOURCE,
      queueUrls: { notifications: smallUrl },
      sqs,
      logger: quiet,
    });
    const result = await client.sendBatch([
      batchEntry(email, { to: 'ok@example.com' }),
      batchEntry(email, { to: 'big@example.com', note: 'x'.repeat(2_000) }),
    ]);
    expect(result.sent.length + result.failed.length).toBe(2);
    expect(result.failed).toEqual([
      expect.objectContaining({
        index: 1,
        queue: 'notifications',
        senderFault: true,
        code: expect.any(String),
      }),
    ]);
    expect(result.sent.map((s) => s.index)).toEqual([0]);
    const received = await drain(smallUrl);
    expect(received.map((m) => (parseEnvelope(m.Body as string).data as { to: string }).to)).toEqual([
      'ok@example.com',
    ]);
  });
});
