/**
 * SQS events, records and Lambda contexts as Lambda delivers them to a worker, for unit tests of
 * `createWorker` handlers (the repo's own tests use the same factories, through
 * test/factories/sqs.ts). Shapes follow @types/aws-lambda (`SQSRecord`, `SQSEvent`, `Context`);
 * attribute values are strings, as Lambda delivers them ("Using Lambda with Amazon SQS", example
 * standard and FIFO events: https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { createEnvelope, type EnvelopeLineage } from '../core/envelope.ts';
import { JobError } from '../core/errors.ts';
import type { JobDefinition } from '../runtime/job.ts';

/** Region of the queues and functions the factories name. */
export const TEST_REGION = 'us-east-1';
/** Account id of the queues and functions the factories name. */
export const TEST_ACCOUNT = '123456789012';

/** ARN of a queue by name (FIFO when the name ends in `.fifo`), in {@link TEST_REGION} / {@link TEST_ACCOUNT}. */
export function queueArn(name: string): string {
  return `arn:aws:sqs:${TEST_REGION}:${TEST_ACCOUNT}:${name}`;
}

/** URL of a queue by name, in the public SQS form (`https://sqs.us-east-1.amazonaws.com/123456789012/<name>`). */
export function queueUrl(name: string): string {
  return `https://sqs.${TEST_REGION}.amazonaws.com/${TEST_ACCOUNT}/${name}`;
}

/** Input of {@link sqsRecord}. */
export interface RecordInput {
  /** The body, verbatim. */
  readonly body: string;
  /** @default a random UUID */
  readonly messageId?: string;
  /** FIFO `MessageGroupId`; on a FIFO queue also sets a `SequenceNumber`. */
  readonly groupId?: string;
  /** `ApproximateReceiveCount`: 1 on the first delivery, 2 on the second... @default 1 */
  readonly receiveCount?: number;
  /** Source queue name; FIFO when it ends in `.fifo`. @default `jobs`, or `jobs.fifo` when `groupId` is set */
  readonly queue?: string;
  /** `ApproximateFirstReceiveTimestamp`, epoch ms. @default now */
  readonly firstReceiveMs?: number;
  /**
   * `SentTimestamp`, epoch ms: when SQS accepted the message. The worker reads it to tell a copy of
   * a dead-lettered job (sent before the dead-lettering: absorbed) from a redrive (sent after:
   * runs). @default the time the record is built, so a record built after a job was
   * dead-lettered is a redrive of it
   */
  readonly sentAtMs?: number;
}

let sequence = 0;

/**
 * One SQS record as Lambda delivers it, around any body (use {@link jobRecord} for a job).
 * @example
 * ```ts
 * import { sqsEvent, sqsRecord } from 'sqs-jobs/testing';
 *
 * const poison = sqsEvent([sqsRecord({ body: 'not json' })]); // the worker dead-letters it
 * ```
 */
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
      SentTimestamp: String(input.sentAtMs ?? now),
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: String(input.firstReceiveMs ?? now),
      ...(input.groupId === undefined ? {} : { MessageGroupId: input.groupId }),
      ...(fifo ? { SequenceNumber: String(18_000_000_000_000_000_000n + BigInt(sequence)) } : {}),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(input.body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn(queue),
    awsRegion: TEST_REGION,
  };
}

/** Wraps records into the event a worker's handler receives (`{ Records }`). */
export function sqsEvent(records: readonly SQSRecord[]): SQSEvent {
  return { Records: [...records] };
}

/** Options of {@link jobBody}. */
export interface JobBodyOptions {
  /** The envelope `id`. @default a random UUID */
  readonly id?: string;
  /** The envelope `source`. @default `/tests` */
  readonly source?: string;
  /** The envelope `partitionkey` (the FIFO `MessageGroupId`). */
  readonly partitionKey?: string;
  /** Lineage and trace attributes (`correlationid`, `causationid`, `rootid`, `traceparent`...). */
  readonly lineage?: EnvelopeLineage;
}

/**
 * A valid envelope body (CloudEvents 1.0 JSON, docs/contracts.md) for a job type and data.
 * @throws {JobError} when the type, source, id or partition key is not one a producer could send.
 */
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

/** Options of {@link jobRecord}. */
export interface JobRecordOptions extends JobBodyOptions {
  /**
   * A FIFO queue's record: `MessageGroupId` = `partitionKey` (required then) and a `SequenceNumber`.
   * @default true when `partitionKey` is given or `queue` ends in `.fifo`
   */
  readonly fifo?: boolean;
  /** Source queue name. @default `jobs.fifo` on a FIFO queue, else `jobs` */
  readonly queue?: string;
  /** SQS `messageId`. @default a random UUID */
  readonly messageId?: string;
  /** `ApproximateReceiveCount`: 2 for the second delivery of the same message. @default 1 */
  readonly receiveCount?: number;
  /** `ApproximateFirstReceiveTimestamp`, epoch ms. @default now */
  readonly firstReceiveMs?: number;
  /** `SentTimestamp`, epoch ms ({@link RecordInput.sentAtMs}). @default the time the record is built */
  readonly sentAtMs?: number;
}

/**
 * One SQS record carrying a job: its envelope body for `job` (a job definition, or a type) and
 * `data`, on a FIFO queue (grouped by `partitionKey`) or a standard one. Two records made with the
 * same `id` (and `source`) are two deliveries of one job: the worker's idempotency store runs it
 * once.
 *
 * @example
 * ```ts
 * import { jobRecord, sqsEvent } from 'sqs-jobs/testing';
 * import { defineJob } from 'sqs-jobs';
 * import { z } from 'zod';
 *
 * const sendEmail = defineJob({
 *   type: 'emails.send',
 *   queue: 'emails',
 *   schema: z.object({ to: z.string() }),
 *   async run() {},
 * });
 * const first = jobRecord(sendEmail, { to: 'a@example.com' }, { id: 'job-1' });
 * const again = jobRecord(sendEmail, { to: 'a@example.com' }, { id: 'job-1', receiveCount: 2 });
 * const ordered = jobRecord('booking.confirm', { bookingId: 'b-1' }, { partitionKey: 'user-7' }); // FIFO
 * const event = sqsEvent([first, again, ordered]);
 * ```
 * @throws {JobError} when `fifo` is true without a `partitionKey` (every FIFO message has a group),
 *   or the envelope fields are invalid ({@link jobBody}).
 */
export function jobRecord<Data>(
  job: JobDefinition<Data>,
  data: NoInfer<Data>,
  options?: JobRecordOptions,
): SQSRecord;
export function jobRecord(type: string, data: unknown, options?: JobRecordOptions): SQSRecord;
export function jobRecord(
  job: string | JobDefinition,
  data: unknown,
  options: JobRecordOptions = {},
): SQSRecord {
  const type = typeof job === 'string' ? job : job.type;
  const fifo =
    options.fifo ?? (options.partitionKey !== undefined || options.queue?.endsWith('.fifo') === true);
  if (fifo && options.partitionKey === undefined) {
    throw new JobError(
      `jobRecord(${JSON.stringify(type)}): a FIFO record needs a partitionKey (its MessageGroupId); pass { partitionKey } or fifo: false`,
    );
  }
  const { fifo: _fifo, queue, messageId, receiveCount, firstReceiveMs, sentAtMs, ...body } = options;
  return sqsRecord({
    body: jobBody(type, data, body),
    queue: queue ?? (fifo ? 'jobs.fifo' : 'jobs'),
    ...(fifo ? { groupId: options.partitionKey } : {}),
    ...(messageId === undefined ? {} : { messageId }),
    ...(receiveCount === undefined ? {} : { receiveCount }),
    ...(firstReceiveMs === undefined ? {} : { firstReceiveMs }),
    ...(sentAtMs === undefined ? {} : { sentAtMs }),
  });
}

/** A Lambda Context whose deadline the test controls. */
export interface TestLambdaContext extends Context {
  /** Moves the deadline so that `ms` milliseconds remain from now. */
  setRemainingMs(ms: number): void;
}

/**
 * A Lambda Context with a deadline `remainingMs` from now (real clock), for calling a worker's
 * handler directly: `handler(sqsEvent([...]), lambdaContext())`.
 * @param remainingMs time left, in milliseconds. @default 60000
 */
export function lambdaContext(remainingMs = 60_000): TestLambdaContext {
  let deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'sqs-jobs-test-worker',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${TEST_REGION}:${TEST_ACCOUNT}:function:sqs-jobs-test-worker`,
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
