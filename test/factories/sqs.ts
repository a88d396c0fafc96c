/**
 * Typed factories for SQS events and Lambda contexts, shared by unit and integration tests.
 * Shapes follow @types/aws-lambda (SQSRecord, Context); attribute values are strings, as Lambda
 * delivers them.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { createEnvelope, type EnvelopeLineage } from '../../lib/core/envelope.ts';

export const REGION = 'us-east-1';
export const ACCOUNT = '123456789012';

/** ARN of a queue by name (FIFO when the name ends in `.fifo`). */
export function queueArn(name: string): string {
  return `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
}

/** URL of a queue by name, in the public SQS form. */
export function queueUrl(name: string): string {
  return `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}`;
}

/** Input of {@link sqsRecord}. */
export interface RecordInput {
  /** The body, verbatim. */
  readonly body: string;
  /** @default a random UUID */
  readonly messageId?: string;
  /** FIFO `MessageGroupId`; on a FIFO queue also sets a `SequenceNumber`. */
  readonly groupId?: string;
  /** `ApproximateReceiveCount`. @default 1 */
  readonly receiveCount?: number;
  /** Source queue name; FIFO when it ends in `.fifo`. @default `jobs` or `jobs.fifo` when `groupId` is set */
  readonly queue?: string;
  /** `ApproximateFirstReceiveTimestamp`, epoch ms. @default now */
  readonly firstReceiveMs?: number;
}

let sequence = 0;

/** Builds one SQS record as Lambda delivers it. */
export function sqsRecord(input: RecordInput): SQSRecord {
  const queue = input.queue ?? (input.groupId === undefined ? 'jobs' : 'jobs.fifo');
  const fifo = queue.endsWith('.fifo');
  const now = Date.now();
  sequence += 1;
  return {
    messageId: input.messageId ?? randomUUID(),
    receiptHandle: `rh-${randomUUID()}`,
    body: input.body,
    attributes: {
      ApproximateReceiveCount: String(input.receiveCount ?? 1),
      SentTimestamp: String(now - 1000),
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: String(input.firstReceiveMs ?? now),
      ...(input.groupId === undefined ? {} : { MessageGroupId: input.groupId }),
      ...(fifo ? { SequenceNumber: String(18_000_000_000_000_000_000n + BigInt(sequence)) } : {}),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(input.body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn(queue),
    awsRegion: REGION,
  };
}

/** Wraps records into an event. */
export function sqsEvent(records: readonly SQSRecord[]): SQSEvent {
  return { Records: [...records] };
}

/** Options of {@link jobBody}. */
export interface JobBodyOptions {
  readonly id?: string;
  /** @default `/tests` */
  readonly source?: string;
  readonly partitionKey?: string;
  /** Lineage and trace attributes (`correlationid`, `traceparent`...). */
  readonly lineage?: EnvelopeLineage;
}

/** A valid envelope body (CloudEvents JSON) for a job type and data. */
export function jobBody(type: string, data: unknown, options: JobBodyOptions = {}): string {
  return JSON.stringify(
    createEnvelope({
      type,
      data,
      source: options.source ?? '/tests',
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(options.partitionKey === undefined ? {} : { partitionKey: options.partitionKey }),
      ...(options.lineage === undefined ? {} : { lineage: options.lineage }),
    }),
  );
}

/** A Lambda Context whose deadline the test controls. */
export interface TestContext extends Context {
  /** Moves the deadline so that `ms` remain from now. */
  setRemainingMs(ms: number): void;
}

/**
 * A Lambda Context with a deadline `remainingMs` from now (real clock).
 * @param remainingMs time left, in milliseconds. @default 60000
 */
export function lambdaContext(remainingMs = 60_000): TestContext {
  let deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'sqs-jobs-test-worker',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:sqs-jobs-test-worker`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/sqs-jobs-test-worker',
    logStreamName: '2026/11/29/[$LATEST]test',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
    setRemainingMs: (ms: number) => {
      deadline = Date.now() + ms;
    },
  };
}

/**
 * Converts a message received from SQS (with `MessageSystemAttributeNames: ['All']`) into the
 * record Lambda's event source mapping would deliver.
 */
export function recordFromMessage(message: Message, sourceQueueArn: string): SQSRecord {
  const attrs = message.Attributes ?? {};
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
    };
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attrs.MessageGroupId === undefined ? {} : { MessageGroupId: attrs.MessageGroupId }),
      ...(attrs.SequenceNumber === undefined ? {} : { SequenceNumber: attrs.SequenceNumber }),
      ...(attrs.MessageDeduplicationId === undefined
        ? {}
        : { MessageDeduplicationId: attrs.MessageDeduplicationId }),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: sourceQueueArn,
    awsRegion: REGION,
  };
}
