/**
 * Runs the migration's before and after on embedded emulators (fauxqs for SQS and SNS, dynalite
 * for DynamoDB), with the same producers both times:
 * 1. the checkout service sends order o-1 as a plain JSON body, and sends it again (a retry after
 *    a lost answer: a new SQS message, the same order);
 * 2. the events service publishes order o-2 to an SNS topic the queue subscribes to (raw message
 *    delivery off), and SNS delivers that notification a second time (at least once);
 * 3. a consumer drains the queue, as the event source mapping would: BEFORE the Powertools
 *    handler (src/before.ts), AFTER the sqs-jobs worker (src/after.ts). After it, a producer that
 *    moved to `JobClient` sends o-3 twice, and a message without an order id arrives.
 * Prints one JSON line: the charges per order and what reached the DLQ, per phase.
 *
 *   npm run before-after
 */

import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { CreateTableCommand, DynamoDBClient, type KeySchemaElement } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { JobClient } from 'sqs-jobs/client';
import { charges } from './src/orders.ts';
import { placeOrder } from './src/producer.ts';

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
const region = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

// dynalite ships no types: its factory, as used here.
const dynalite = createRequire(import.meta.url)('dynalite') as (options: { createTableMs: number }) => Server;
const fauxqs = await startFauxqs({ port: 0, logger: false });
const db = dynalite({ createTableMs: 0 });
await new Promise<void>((resolve) => db.listen(0, '127.0.0.1', () => resolve()));
const dbAddress = db.address();
const dynamoEndpoint = `http://127.0.0.1:${typeof dbAddress === 'object' && dbAddress ? dbAddress.port : 0}`;
// The AWS SDK clients of both consumers (their idempotency stores, the worker's SQS client) read these.
Object.assign(process.env, {
  AWS_REGION: region,
  AWS_ACCESS_KEY_ID: credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
  AWS_ENDPOINT_URL_SQS: fauxqs.address,
  POWERTOOLS_LOG_LEVEL: 'ERROR',
  POWERTOOLS_METRICS_DISABLED: 'true',
});
const sqs = new SQSClient({ region, endpoint: fauxqs.address, credentials });
const dynamodb = new DynamoDBClient({ region, endpoint: dynamoEndpoint, credentials });

async function createTable(name: string, key: string): Promise<string> {
  const KeySchema: KeySchemaElement[] = [{ AttributeName: key, KeyType: 'HASH' }];
  await dynamodb.send(
    new CreateTableCommand({
      TableName: name,
      KeySchema,
      AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  return name;
}

/** A Lambda context with 60 s left. */
function lambdaContext(): Context {
  const deadline = Date.now() + 60_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'orders-worker',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:orders-worker`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/orders-worker',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function recordOf(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/** One poll of the event source mapping: receive up to 10, invoke, delete what succeeded. Returns the bodies delivered. */
async function poll(queue: { url: string; arn: string }, handler: Handler): Promise<string[]> {
  const received = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  const messages = received.Messages ?? [];
  if (messages.length === 0) return [];
  const response = await handler({ Records: messages.map((m) => recordOf(m, queue.arn)) }, lambdaContext());
  const failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  for (const message of messages) {
    if (failed.has(message.MessageId ?? '')) throw new Error(`record failed: ${message.Body}`);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }));
  }
  return messages.map((m) => m.Body ?? '');
}

/** Everything the DLQ holds: body and the evidence's error name and message. */
async function drainDeadLetters(
  url: string,
): Promise<{ body: string; errorName?: string; errorMessage?: string }[]> {
  const out: { body: string; errorName?: string; errorMessage?: string }[] = [];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
    );
    if (!received.Messages?.length) return out;
    for (const m of received.Messages) {
      out.push({
        body: m.Body ?? '',
        errorName: m.MessageAttributes?.ErrorName?.StringValue,
        errorMessage: m.MessageAttributes?.ErrorMessage?.StringValue,
      });
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}

/** The producers of steps 1 and 2, then the consumer; the same for both phases. */
async function produceAndConsume(
  phase: string,
  queue: { url: string; arn: string },
  topic: string,
  handler: Handler,
) {
  charges.clear();
  const o1 = { orderId: `${phase}-o-1`, totalCents: 1200 };
  const o2 = { orderId: `${phase}-o-2`, totalCents: 800 };
  await placeOrder(sqs, queue.url, o1);
  fauxqs.publish(topic, JSON.stringify(o2));
  const first = await poll(queue, handler);
  // The retry of the checkout service, and SNS delivering the same notification again.
  await placeOrder(sqs, queue.url, o1);
  const notification = first.find((body) => body.includes('"Notification"'));
  if (notification === undefined) throw new Error(`no SNS notification among ${JSON.stringify(first)}`);
  await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: notification }));
  while ((await poll(queue, handler)).length > 0);
  return { notification: JSON.parse(notification) as Record<string, unknown> };
}

async function createQueue(name: string, attributes: Record<string, string> = {}) {
  const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  // fauxqs names queues on sqs.<region>.localhost, which not every machine resolves, and the SDK
  // sends to the QueueUrl's host: the emulator's own address with the queue's path instead.
  const url = `${new URL(fauxqs.address).origin}${new URL(created.QueueUrl as string).pathname}`;
  const read = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return { url, arn: read.Attributes?.QueueArn as string };
}

const dlq = await createQueue('orders-dlq');
const queue = await createQueue('orders', {
  RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 10 }),
});
const { url: queueUrl } = queue;
const dlqUrl = dlq.url;
fauxqs.createTopic('order-events');
fauxqs.subscribe({ topic: 'order-events', queue: 'orders' });

// BEFORE: Powertools.
const { createPowertoolsHandler } = await import('./src/before.ts');
const powertoolsTable = await createTable('powertools-idempotency', 'id');
const before = await produceAndConsume(
  'before',
  queue,
  'order-events',
  createPowertoolsHandler(powertoolsTable),
);
const beforeCharges = Object.fromEntries(charges);

// AFTER: sqs-jobs, configured as its JobQueue would (environment variables of the function).
Object.assign(process.env, {
  JOBS_QUEUE_NAME: 'orders',
  JOBS_QUEUE_URL: queueUrl,
  JOBS_DLQ_URL: dlqUrl,
  JOBS_IDEMPOTENCY_TABLE: await createTable('jobs-idempotency', 'pk'),
});
const { chargeOrderJob, handler } = await import('./src/after.ts');
await produceAndConsume('after', queue, 'order-events', handler);
// Step 4 of the guide, later: a producer moved to JobClient, sending the same order twice.
const client = new JobClient({ sqs, source: '/services/checkout', queueUrls: { orders: queueUrl } });
const o3 = { orderId: 'after-o-3', totalCents: 500 };
for (let send = 0; send < 2; send++) {
  await client.send(chargeOrderJob, o3, { id: 'order-after-o-3' });
  while ((await poll(queue, handler)).length > 0);
}
// A producer bug: no order id.
await placeOrder(sqs, queueUrl, { totalCents: 1 } as never);
while ((await poll(queue, handler)).length > 0);
const afterCharges = Object.fromEntries(charges);

console.log(
  JSON.stringify({
    snsNotification: {
      type: before.notification.Type,
      messageIsString: typeof before.notification.Message === 'string',
    },
    before: { charges: beforeCharges },
    after: { charges: afterCharges, deadLetters: await drainDeadLetters(dlqUrl) },
  }),
);
await fauxqs.stop();
await new Promise<void>((resolve) => db.close(() => resolve()));
