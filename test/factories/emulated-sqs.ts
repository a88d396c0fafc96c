/**
 * The embedded SQS emulator (fauxqs) for integration tests, with the few moves of Lambda's event
 * source mapping a worker test needs: receive with system attributes, invoke the handler, delete
 * what it did not report failed (services-sqs-errorhandling).
 */
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
import { deduplicationIdOf, type JobEnvelope } from '../../lib/core/envelope.ts';
import type { WorkerHandler } from '../../lib/runtime/worker.ts';
import { startLoopbackFauxqs } from './loopback-fauxqs.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from './sqs.ts';
import { captureOutput } from './worker.ts';

/** A queue on the emulator. */
export interface EmulatedQueue {
  readonly url: string;
  readonly arn: string;
}

/** A running emulator and helpers bound to it. */
export interface EmulatedSqs {
  /** Client for the emulator (region us-east-1, dummy credentials). */
  readonly sqs: SQSClient;
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** Creates a queue named `<base>-<n>` (plus `.fifo`), visibility timeout 30 s. */
  createQueue(base: string, fifo: boolean): Promise<EmulatedQueue>;
  /**
   * Creates a DLQ (`<base>-dlq-<n>`) and a queue (`<base>-<n>`) whose redrive policy names it
   * (maxReceiveCount 10), as a stack does.
   */
  createQueuePair(base: string, fifo: boolean): Promise<{ queue: EmulatedQueue; dlq: EmulatedQueue }>;
  /** One ReceiveMessage (up to 10, no wait) with all system and message attributes. */
  receive(queue: EmulatedQueue): Promise<Message[]>;
  /** Polls every 100 ms until messages come, or `timeoutMs` passed (then returns []). */
  receiveWithin(queue: EmulatedQueue, timeoutMs: number): Promise<Message[]>;
  /** Sends an envelope as the body (FIFO: with the group and the envelope's dedup id); returns the body. */
  send(queue: EmulatedQueue, envelope: JobEnvelope, groupId?: string): Promise<string>;
  /** One poll of the event source mapping: receive, invoke, delete what succeeded. */
  deliver(
    queue: EmulatedQueue,
    handler: WorkerHandler,
  ): Promise<{ response: SQSBatchResponse; delivered: number; messages: Message[] }>;
  stop(): Promise<void>;
}

/** Starts fauxqs on a free port of 127.0.0.1 (loopback-fauxqs.ts). */
export async function startEmulatedSqs(): Promise<EmulatedSqs> {
  const server = await startLoopbackFauxqs();
  const sqs = new SQSClient({
    endpoint: server.address,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  let counter = 0;

  const receive = async (queue: EmulatedQueue): Promise<Message[]> => {
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
  };

  const receiveWithin = async (queue: EmulatedQueue, timeoutMs: number): Promise<Message[]> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const messages = await receive(queue);
      if (messages.length > 0 || Date.now() > deadline) return messages;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const createQueue = async (
    base: string,
    fifo: boolean,
    extra: Record<string, string> = {},
  ): Promise<EmulatedQueue> => {
    counter += 1;
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: `${base}-${counter}${fifo ? '.fifo' : ''}`,
        Attributes: { VisibilityTimeout: '30', ...(fifo ? { FifoQueue: 'true' } : {}), ...extra },
      }),
    );
    const url = created.QueueUrl as string;
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    return { url, arn: attributes.Attributes?.QueueArn as string };
  };

  return {
    sqs,
    endpoint: server.address,
    createQueue: (base, fifo) => createQueue(base, fifo),
    async createQueuePair(base, fifo) {
      const dlq = await createQueue(`${base}-dlq`, fifo);
      const queue = await createQueue(base, fifo, {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 10 }),
      });
      return { queue, dlq };
    },
    receive,
    receiveWithin,
    async send(queue, envelope, groupId) {
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
    },
    async deliver(queue, handler) {
      const messages = await receiveWithin(queue, 2_000);
      const records = messages.map((m) => recordFromMessage(m, queue.arn));
      const { value: response } = await captureOutput(() =>
        handler(sqsEvent(records), lambdaContext(60_000)),
      );
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const message of messages) {
        if (!failed.has(message.MessageId ?? '')) {
          await sqs.send(
            new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }),
          );
        }
      }
      return { response, delivered: messages.length, messages };
    },
    async stop() {
      sqs.destroy();
      await server.stop();
    },
  };
}
