/**
 * "What SQS accepts, we send; what we accept, we can send on" on the embedded SQS emulator, started
 * as the local runtime starts it (startEmulators, with its fauxqs character shim):
 * - any Unicode data sent by JobClient reaches the worker's job unchanged (property);
 * - an emoji (above U+FFFF) is taken, as SQS takes it, in a body and in a child job's data;
 * - a dead letter keeps its body byte for byte and carries evidence SQS takes;
 * - a failing body just under the queue's size limit reaches the DLQ with (shrunk) evidence.
 * Every wait is a long-poll receive that returns when the message is there.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError } from '../../lib/core/errors.ts';
import type { JobLogger } from '../../lib/core/logger.ts';
import { newTraceparent } from '../../lib/core/trace-context.ts';
import {
  alignFauxqsBodyCharacters,
  type RunningEmulators,
  startEmulators,
} from '../../lib/local/emulators.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';

/** SQS's body and String attribute rule, written out here on its own. */
const SQS_TAKES = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const quiet: JobLogger = { debug() {}, info() {}, warn() {}, error() {} };
const ONE_MIB = 1_048_576;

let emulators: RunningEmulators;
let sqs: SQSClient;
let counter = 0;

beforeAll(async () => {
  emulators = await startEmulators({}, {});
  sqs = new SQSClient({
    endpoint: emulators.endpoints.sqs,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
});

afterAll(async () => {
  sqs?.destroy();
  await emulators?.stop();
});

interface Queue {
  readonly url: string;
  readonly arn: string;
}

async function createQueue(base: string, fifo = false, maxBytes = ONE_MIB): Promise<Queue> {
  counter += 1;
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${base}-${counter}${fifo ? '.fifo' : ''}`,
      Attributes: {
        VisibilityTimeout: '30',
        MaximumMessageSize: String(maxBytes),
        ...(fifo ? { FifoQueue: 'true' } : {}),
      },
    }),
  );
  const url = created.QueueUrl as string;
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return { url, arn: attributes.Attributes?.QueueArn as string };
}

/** Receives (long poll: returns as soon as messages are there) until `count` messages came; deletes them. */
async function receive(queue: Queue, count = 1): Promise<Message[]> {
  const messages: Message[] = [];
  for (let polls = 0; messages.length < count && polls < 20; polls++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 5,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    for (const message of out.Messages ?? []) {
      messages.push(message);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }));
    }
  }
  expect(messages).toHaveLength(count);
  return messages;
}

function worker(jobs: AnyJob[], queue: Queue, dlq: Queue, queueUrls: Record<string, string> = {}) {
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  return createWorker({
    jobs,
    queueName: 'characters',
    queueUrl: queue.url,
    dlqUrl: dlq.url,
    handlerVersion: 'it-1',
    idempotency: false,
    sqs,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {},
    queueUrls,
  });
}

/** The event source mapping, once: the received messages go to the handler as one batch. */
async function deliver(handler: ReturnType<typeof worker>, queue: Queue, messages: Message[]) {
  const records = messages.map((m) => recordFromMessage(m, queue.arn));
  const { value } = await captureOutput(() => handler(sqsEvent(records), lambdaContext(60_000)));
  return value;
}

/** Strings of any code point: lone surrogates, U+FFFE/U+FFFF, C0 controls and astral characters included. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({
    unit: fc.constantFrom(
      '\uFFFE',
      '\uFFFF',
      '\uD800',
      '\uDFFF',
      '\u0000',
      '\u001b',
      '\u{1F600}',
      '\u{10FFFF}',
      'é',
      '"',
    ),
    maxLength: 16,
  }),
);
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyText,
    fc.boolean(),
    fc.constant(null),
    fc.integer(),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(anyText, tie('value'), { maxKeys: 3 }),
  ),
})).value;

describe('the embedded SQS emulator takes what SQS takes', () => {
  it('takes astral characters (an emoji) in SendMessage and SendMessageBatch bodies, and still refuses U+FFFF', async () => {
    expect(await alignFauxqsBodyCharacters()).toBe('already-aligned');
    const queue = await createQueue('emoji');
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'hi \u{1F44B}' }));
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: [
          { Id: 'ok', MessageBody: '\u{1F600}\u{10FFFF}' },
          { Id: 'bad', MessageBody: 'a\uFFFF' },
        ],
      }),
    );
    expect(batch.Successful?.map((s) => s.Id)).toEqual(['ok']);
    expect(batch.Failed?.map((f) => [f.Id, f.Code])).toEqual([['bad', 'InvalidMessageContents']]);
    await expect(
      sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'a\u0000' })),
    ).rejects.toThrow(/Invalid characters/);
    const bodies = (await receive(queue, 2)).map((m) => m.Body);
    expect(bodies.sort()).toEqual(['hi \u{1F44B}', '\u{1F600}\u{10FFFF}'].sort());
  });
});

describe('JobClient → SQS → worker', () => {
  it('delivers any Unicode data to the job unchanged (property)', async () => {
    const queue = await createQueue('unicode');
    const dlq = await createQueue('unicode-dlq');
    const seen: unknown[] = [];
    const job = defineJob({
      type: 'unicode.echo',
      queue: 'unicode',
      schema: z.object({ value: z.unknown() }),
      run: async (data) => {
        seen.push(data.value);
      },
    });
    const handler = worker([job], queue, dlq);
    const client = new JobClient({
      source: '/tests/unicode',
      queueUrls: { unicode: queue.url },
      sqs,
      logger: quiet,
      payloadWarnBytes: Number.MAX_SAFE_INTEGER,
    });
    await fc.assert(
      fc.asyncProperty(anyJson, async (value) => {
        seen.length = 0;
        await client.send(job, { value });
        const messages = await receive(queue);
        expect(SQS_TAKES.test(messages[0]?.Body ?? '')).toBe(true);
        const response = await deliver(handler, queue, messages);
        expect(response.batchItemFailures).toEqual([]);
        expect(seen).toEqual([value]);
      }),
      { numRuns: 40 },
    );
  });

  it('sends a child job whose data holds an emoji to a FIFO queue; the child runs with the same data', async () => {
    const parentQueue = await createQueue('parent');
    const parentDlq = await createQueue('parent-dlq');
    const childQueue = await createQueue('greetings', true);
    const childDlq = await createQueue('greetings-dlq', true);
    const greeting = { text: 'olá \u{1F44B}\u{1F1F5}\u{1F1F9}' };
    const received: unknown[] = [];
    const greet = defineJob({
      type: 'greetings.send',
      queue: 'greetings',
      schema: z.object({ text: z.string() }),
      run: async (data) => {
        received.push(data);
      },
    });
    const plan = defineJob({
      type: 'greetings.plan',
      queue: 'parent',
      schema: z.object({ userId: z.string() }),
      run: async ({ userId }, ctx) => ctx.enqueue(greet, greeting, { partitionKey: userId }),
    });
    await new JobClient({
      source: '/tests/greetings',
      queueUrls: { parent: parentQueue.url },
      sqs,
      logger: quiet,
    }).send(plan, { userId: 'user-1' });
    const parentResponse = await deliver(
      worker([plan], parentQueue, parentDlq, { greetings: childQueue.url }),
      parentQueue,
      await receive(parentQueue),
    );
    expect(parentResponse.batchItemFailures).toEqual([]);
    const children = await receive(childQueue);
    expect(children[0]?.Attributes?.MessageGroupId).toBe('user-1');
    const childResponse = await deliver(worker([greet], childQueue, childDlq), childQueue, children);
    expect(childResponse.batchItemFailures).toEqual([]);
    expect(received).toEqual([greeting]);
  });
});

describe('dead letters on the emulator', () => {
  const failing = (message: string, stackBytes = 0) =>
    defineJob({
      type: 'orders.capture',
      queue: 'orders',
      schema: z.object({ pad: z.string() }),
      run: async () => {
        const error = new PermanentError(message);
        if (stackBytes > 0)
          error.stack = `PermanentError: ${message}\n${'    at frame (job.ts:1:1)\n'.repeat(stackBytes / 27)}`;
        throw error;
      },
    });

  async function sendAndFail(
    queue: Queue,
    dlq: Queue,
    job: AnyJob,
    pad: string,
  ): Promise<{ sent: string; dead: Message }> {
    const client = new JobClient({
      source: '/tests/dlq',
      queueUrls: { orders: queue.url },
      sqs,
      logger: quiet,
      payloadWarnBytes: Number.MAX_SAFE_INTEGER,
    });
    await client.send(job, { pad });
    const messages = await receive(queue);
    const response = await deliver(worker([job], queue, dlq), queue, messages);
    expect(response.batchItemFailures).toEqual([]);
    const [dead] = await receive(dlq);
    return { sent: messages[0]?.Body as string, dead: dead as Message };
  }

  it('keeps the body byte for byte and writes evidence SQS takes (ANSI colour codes and NUL escaped)', async () => {
    const queue = await createQueue('orders');
    const dlq = await createQueue('orders-dlq');
    const { sent, dead } = await sendAndFail(
      queue,
      dlq,
      failing('\u001b[31mcard declined\u001b[0m \u0000'),
      'x\uFFFF \u{1F600}',
    );
    expect(dead.Body).toBe(sent);
    const attributes = dead.MessageAttributes ?? {};
    expect(attributes.ErrorMessage?.StringValue).toBe('\\u001b[31mcard declined\\u001b[0m \\u0000');
    for (const value of Object.values(attributes)) expect(SQS_TAKES.test(value.StringValue ?? '')).toBe(true);
  });

  it.each([
    { name: '1 MiB queue, 40 bytes left', maxBytes: ONE_MIB, room: 40, marker: false },
    { name: '1 MiB queue, 2 kB left', maxBytes: ONE_MIB, room: 2_000, marker: true },
    { name: '256 KiB queue and DLQ, 300 bytes left', maxBytes: 262_144, room: 300, marker: true },
  ])(
    'dead-letters a failing body just under the size limit with its evidence: $name',
    async ({ maxBytes, room, marker }) => {
      const queue = await createQueue('big', false, maxBytes);
      const dlq = await createQueue('big-dlq', false, maxBytes);
      const job = failing('m'.repeat(20_000), 80_000);
      // The envelope around the pad has a fixed size (UUID id, ISO time, the traceparent JobClient
      // starts): fill the body up to the wanted size.
      const overhead = Buffer.byteLength(
        JSON.stringify(
          createEnvelope({
            type: 'orders.capture',
            source: '/tests/dlq',
            data: { pad: '' },
            lineage: { traceparent: newTraceparent() },
          }),
        ),
      );
      const { sent, dead } = await sendAndFail(queue, dlq, job, 'p'.repeat(maxBytes - room - overhead));
      expect(Buffer.byteLength(sent)).toBe(maxBytes - room);
      expect(dead.Body).toBe(sent);
      const attributes = dead.MessageAttributes ?? {};
      expect(attributes.ErrorName?.StringValue).toBe('PermanentError');
      if (marker) expect(attributes.EvidenceTruncated?.StringValue ?? '').toContain('ErrorStack');
    },
  );
});
