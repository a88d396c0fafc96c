/**
 * DLQ handling on moto server, as on the embedded emulator:
 * - the report's read of the dead-letter queues (lib/sample/workload/dead-letters.ts; the fauxqs
 *   test is test/integration/dead-letter-collection.test.ts): every dead letter read, and every
 *   one left in its DLQ, visible, with its body and evidence; the FIFO DLQ's groups rotated
 *   through, each in its order;
 * - `sqs-jobs dlq redrive` refuses a main queue as the DLQ, found with ListDeadLetterSourceQueues
 *   (which moto has and fauxqs has not).
 */
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDeadLetters } from '../../lib/ops/dlq-reader.ts';
import { collectDeadLetters } from '../../lib/sample/workload/dead-letters.ts';
import { runCli } from '../factories/cli.ts';
import { byGroup, drainQueue, queueCounts, seedDeadLetters } from '../factories/dead-letters.ts';
import { type MotoServer, startMotoServer } from '../factories/moto-server.ts';

let moto: MotoServer | undefined;
let sqs: SQSClient;

beforeAll(async () => {
  moto = await startMotoServer();
  sqs = new SQSClient({
    endpoint: moto.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
});

afterAll(() => {
  sqs?.destroy();
  moto?.stop();
});

const READ = { waitTimeSeconds: 0, emptyReceivesToStop: 2, holdSeconds: 60 } as const;

describe('collectDeadLetters on moto server', () => {
  it('reads every dead letter and leaves all of them there, visible, each FIFO group in order', async () => {
    const create = async (name: string, fifo: boolean) =>
      (
        await sqs.send(
          new CreateQueueCommand({ QueueName: name, Attributes: fifo ? { FifoQueue: 'true' } : {} }),
        )
      ).QueueUrl as string;
    const urls = {
      fifoUrl: await create('booking-dlq.fifo', true),
      standardUrl: await create('payments-dlq', false),
    };
    const groups = { 'user-1': 4, 'user-2': 3, 'user-3': 1 };
    const sent = await seedDeadLetters(sqs, urls, groups, 5);

    const collection = await collectDeadLetters(
      sqs,
      { booking: urls.fifoUrl, payments: urls.standardUrl },
      { booking: 8, payments: 5 },
      READ,
    );
    expect(collection.deadLetters.filter((d) => d.queue === 'booking')).toHaveLength(8);
    expect(collection.deadLetters.filter((d) => d.queue === 'payments')).toHaveLength(5);
    expect(await queueCounts(sqs, urls.fifoUrl)).toEqual({ visible: 8, inFlight: 0 });
    expect(await queueCounts(sqs, urls.standardUrl)).toEqual({ visible: 5, inFlight: 0 });
    const standard = await readDeadLetters({ sqs, queueUrl: urls.standardUrl, ...READ });
    expect(standard.messages.map((m) => m.body).sort()).toEqual(sent.standard.map((m) => m.body).sort());
    const left = await drainQueue(sqs, urls.fifoUrl);
    expect(left).toHaveLength(8);
    expect(byGroup(left)).toEqual(byGroup(sent.fifo));
  });
});

describe('sqs-jobs dlq redrive on moto server', () => {
  it('refuses a main queue as --dlq-url (ListDeadLetterSourceQueues finds no source), accepts the DLQ', async () => {
    const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'orders-dlq' }))).QueueUrl as string;
    const dlqArn = `arn:aws:sqs:us-east-1:123456789012:orders-dlq`;
    const queueUrl = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: 'orders',
          Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 5 }) },
        }),
      )
    ).QueueUrl as string;
    const other = (await sqs.send(new CreateQueueCommand({ QueueName: 'elsewhere' }))).QueueUrl as string;
    const endpoint = moto?.endpoint as string;
    const swapped = await runCli(
      ['dlq', 'redrive', '--dlq-url', queueUrl, '--target-url', other, '--yes', '--wait-seconds', '0'],
      endpoint,
    );
    expect(swapped.code).toBe(2);
    expect(swapped.stderr).toMatch(
      /is no queue's dead-letter queue: .*\(checked: ListDeadLetterSourceQueues\)/,
    );
    const fine = await runCli(
      ['dlq', 'redrive', '--dlq-url', dlqUrl, '--target-url', other, '--dry-run', '--wait-seconds', '0'],
      endpoint,
    );
    expect(fine.code, fine.stderr).toBe(0);
  });
});
