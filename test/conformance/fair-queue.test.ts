/**
 * Fair queues on moto's server (a second SQS emulator): a `partitionKey` sent by `JobClient` to a
 * standard queue arrives as the message's `MessageGroupId` (the tenant), with no sequence number
 * and no dedup id, as on AWS (Amazon SQS fair queues). fauxqs takes the same request but does not
 * hand the group back on receive (test/integration/ops-send.test.ts covers that path).
 */
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchEntry, JobClient } from '../../lib/client/job-client.ts';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { type MotoServer, startMotoServer } from '../factories/moto-server.ts';

const mail = defineJob({
  type: 'mail.send',
  queue: 'notifications',
  schema: z.object({ template: z.string() }),
  run: async () => {},
});

describe('fair queues on moto server', () => {
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

  it("JobClient's partition key on a standard queue arrives as the MessageGroupId of each message", async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'fair-notifications' }));
    const client = new JobClient({
      source: '/services/mail',
      queueUrls: { notifications: QueueUrl as string },
      sqs,
    });
    await client.sendBatch([
      batchEntry(mail, { template: 'a' }, { partitionKey: 'tenant-1' }),
      batchEntry(mail, { template: 'b' }, { partitionKey: 'tenant-2' }),
      batchEntry(mail, { template: 'c' }),
    ]);
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
    );
    const byTemplate = new Map(
      (out.Messages ?? []).map((message) => [
        (parseEnvelope(message.Body ?? '').data as { template: string }).template,
        message.Attributes ?? {},
      ]),
    );
    expect(byTemplate.get('a')?.MessageGroupId).toBe('tenant-1');
    expect(byTemplate.get('b')?.MessageGroupId).toBe('tenant-2');
    expect(byTemplate.get('c')?.MessageGroupId).toBeUndefined();
    for (const attributes of byTemplate.values()) expect(attributes.SequenceNumber).toBeUndefined();
  });
});
