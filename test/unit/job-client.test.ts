import {
  QueueDoesNotExist,
  RequestThrottled,
  type SendMessageBatchRequest,
  type SendMessageBatchResult,
} from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type BatchEntry,
  batchEntry,
  JobClient,
  type JobClientOptions,
  type SqsBatchSender,
} from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { deduplicationIdOf, parseEnvelope } from '../../lib/core/envelope.ts';
import type { LogWriter } from '../../lib/core/logger.ts';
import { messageSizeBytes } from '../../lib/core/message-size.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { acceptAll, accepted, RecordingBatchSender as FakeSqs } from '../factories/batch-sender.ts';

// ---------------------------------------------------------------- fixtures

const run = async (): Promise<void> => {};
const reserve = defineJob({
  type: 'booking.reserve-inventory',
  queue: 'booking',
  schema: z.object({ bookingId: z.string(), items: z.array(z.object({ sku: z.string() })).optional() }),
  run,
});
const capture = defineJob({
  type: 'payments.capture',
  queue: 'payments',
  schema: z.object({ paymentId: z.string() }),
  run,
});
const email = defineJob({
  type: 'notifications.email',
  queue: 'notifications',
  schema: z.object({ text: z.string() }),
  run,
});
const anything = defineJob({ type: 'misc.anything', queue: 'payments', schema: z.any(), run });
const report = defineJob({ type: 'reports.build', queue: 'reports', schema: z.object({}), run });

const URLS = {
  booking: 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo',
  payments: 'https://sqs.eu-west-1.amazonaws.com/123456789012/payments',
  notifications: 'https://sqs.eu-west-1.amazonaws.com/123456789012/notifications',
} as const;

/** A fake whose every call throws `error` for the first `times` calls, then accepts. */
function failingCalls(error: unknown, times = Number.POSITIVE_INFINITY): FakeSqs {
  return new FakeSqs((input, call) => {
    if (call <= times) throw error;
    return acceptAll(input, call);
  });
}

function recordingLogger(): LogWriter & {
  warnings: Array<{ message: string; extra?: Record<string, unknown> }>;
} {
  const warnings: Array<{ message: string; extra?: Record<string, unknown> }> = [];
  return {
    warnings,
    debug() {},
    info() {},
    warn(message, extra) {
      warnings.push({ message, ...(extra === undefined ? {} : { extra }) });
    },
    error() {},
  };
}

function client(sqs: SqsBatchSender, options: Partial<JobClientOptions> = {}): JobClient {
  return new JobClient({
    source: '/services/checkout',
    queueUrls: URLS,
    sqs,
    logger: recordingLogger(),
    retry: { baseDelayMs: 0 },
    ...options,
  });
}

async function refusal(promise: Promise<unknown>): Promise<JobClientError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(JobClientError);
  return error as JobClientError;
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

// ---------------------------------------------------------------- lineage and trace

describe('JobClient lineage and trace context', () => {
  const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const bodyOf = (sqs: FakeSqs, i = 0) => parseEnvelope(sqs.requests[0]!.Entries![i]!.MessageBody!);

  it('starts a new trace for a job sent without one: random ids, flags 00, a different trace per job', async () => {
    const sqs = new FakeSqs();
    await client(sqs).sendBatch([
      batchEntry(capture, { paymentId: 'p-1' }),
      batchEntry(capture, { paymentId: 'p-2' }),
    ]);
    const [a, b] = [bodyOf(sqs, 0), bodyOf(sqs, 1)];
    expect(a.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(a.traceparent?.slice(3, 35)).not.toBe(b.traceparent?.slice(3, 35));
    expect(a).not.toHaveProperty('causationid');
    expect(a).not.toHaveProperty('rootid');
    expect(a).not.toHaveProperty('correlationid');
  });

  it('writes the correlation id, the trace given and the parent link', async () => {
    const sqs = new FakeSqs();
    await client(sqs).send(
      capture,
      { paymentId: 'p-1' },
      {
        correlationId: 'order-42',
        traceparent: TRACEPARENT,
        tracestate: 'rojo=00f067aa0ba902b7',
        parent: { id: 'parent-1', rootId: 'root-1', job: 'orders.place#/shop\nroot-1' },
      },
    );
    expect(bodyOf(sqs)).toMatchObject({
      correlationid: 'order-42',
      traceparent: TRACEPARENT,
      tracestate: 'rojo=00f067aa0ba902b7',
      causationid: 'parent-1',
      rootid: 'root-1',
      parentjob: 'orders.place#/shop\nroot-1',
    });
  });

  it.each([
    [{ traceparent: '00-abc-01' }, 'options.traceparent must be a W3C traceparent'],
    [{ traceparent: TRACEPARENT.toUpperCase() }, 'options.traceparent must be a W3C traceparent'],
    [{ tracestate: 'rojo=1' }, 'options.tracestate needs a traceparent'],
    [{ correlationId: '' }, 'options.correlationId must not be empty'],
    [{ correlationId: 'x'.repeat(257) }, 'options.correlationId must be at most 256 characters'],
    [{ parent: 'parent-1' }, 'options.parent must be an object { id, rootId, job? }, got a string'],
    [{ parent: { id: 'p' } }, "options.parent.rootId is missing: the chain root's envelope id"],
    [{ parent: { id: 'p', rootId: 'r', root: 'x' } }, 'options.parent.root is not an option'],
    [{ parent: { id: 7, rootId: 'r' } }, 'options.parent.id must be a string, got number'],
  ])('refuses %j before sending: %s', async (options, says) => {
    const sqs = new FakeSqs();
    const error = await refusal(
      client(sqs).send(capture, { paymentId: 'p-1' }, options as Parameters<JobClient['send']>[2]),
    );
    expect(error.problems.map((p) => p.message).join('\n')).toContain(says);
    expect(sqs.requests).toHaveLength(0);
  });
});

// ---------------------------------------------------------------- send

describe('JobClient.send', () => {
  it('sends the job as a CloudEvents envelope to the standard queue of the job', async () => {
    const sqs = new FakeSqs();
    const result = await client(sqs).send(capture, { paymentId: 'p-1' }, { id: 'job-1' });

    expect(sqs.requests).toHaveLength(1);
    const request = sqs.requests[0]!;
    expect(request.QueueUrl).toBe(URLS.payments);
    const entry = request.Entries![0]!;
    expect(entry.MessageGroupId).toBeUndefined();
    expect(entry.MessageDeduplicationId).toBeUndefined();
    expect(entry.DelaySeconds).toBeUndefined();
    expect(parseEnvelope(entry.MessageBody!)).toMatchObject({
      specversion: '1.0',
      id: 'job-1',
      source: '/services/checkout',
      type: 'payments.capture',
      datacontenttype: 'application/json',
      data: { paymentId: 'p-1' },
    });
    expect(result).toEqual({ id: 'job-1', messageId: expect.stringMatching(/^msg-0-/), queue: 'payments' });
  });

  it('gives every job a fresh UUID id when none is given', async () => {
    const sqs = new FakeSqs();
    const a = await client(sqs).send(capture, { paymentId: 'p-1' });
    const b = await client(sqs).send(capture, { paymentId: 'p-1' });
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.id).not.toBe(b.id);
  });

  it('on a FIFO queue sets MessageGroupId from the partition key and a dedup id from source, id, type and data', async () => {
    const sqs = new FakeSqs();
    const result = await client(sqs).send(
      reserve,
      { bookingId: 'b-1' },
      { partitionKey: 'user-7', id: 'job-9' },
    );

    const entry = sqs.requests[0]!.Entries![0]!;
    expect(sqs.requests[0]!.QueueUrl).toBe(URLS.booking);
    expect(entry.MessageGroupId).toBe('user-7');
    expect(entry.MessageDeduplicationId).toBe(
      deduplicationIdOf({
        source: '/services/checkout',
        id: 'job-9',
        type: 'booking.reserve-inventory',
        data: { bookingId: 'b-1' },
      }),
    );
    expect(parseEnvelope(entry.MessageBody!).partitionkey).toBe('user-7');
    expect(result.sequenceNumber).toBe('seq-0');
  });

  it('on a standard queue sends the partition key as the MessageGroupId (a fair queue tenant), without a dedup id', async () => {
    const sqs = new FakeSqs();
    const result = await client(sqs).send(capture, { paymentId: 'p-1' }, { partitionKey: 'tenant-7' });
    const entry = sqs.requests[0]!.Entries![0]!;
    expect(sqs.requests[0]!.QueueUrl).toBe(URLS.payments);
    expect(entry.MessageGroupId).toBe('tenant-7');
    expect(entry.MessageDeduplicationId).toBeUndefined();
    expect(parseEnvelope(entry.MessageBody!).partitionkey).toBe('tenant-7');
    expect(result.sequenceNumber).toBeUndefined();
  });

  it('sends each entry of a standard-queue batch with its own MessageGroupId, and none without a partition key', async () => {
    const sqs = new FakeSqs();
    await client(sqs).sendBatch([
      batchEntry(capture, { paymentId: 'p-1' }, { partitionKey: 'tenant-a' }),
      batchEntry(capture, { paymentId: 'p-2' }),
      batchEntry(capture, { paymentId: 'p-3' }, { partitionKey: 'tenant-b', delaySeconds: 5 }),
    ]);
    const entries = sqs.requests[0]!.Entries!;
    expect(entries.map((entry) => entry.MessageGroupId)).toEqual(['tenant-a', undefined, 'tenant-b']);
    expect(entries.map((entry) => entry.MessageDeduplicationId)).toEqual([undefined, undefined, undefined]);
    expect(entries[2]!.DelaySeconds).toBe(5);
  });

  it.each([0, 1, 900])('passes delaySeconds %i on a standard queue', async (delaySeconds) => {
    const sqs = new FakeSqs();
    await client(sqs).send(capture, { paymentId: 'p-1' }, { delaySeconds });
    expect(sqs.requests[0]!.Entries![0]!.DelaySeconds).toBe(delaySeconds);
  });

  it('throws a JobClientError with the SQS code when SQS refuses the message (SenderFault), without retrying', async () => {
    const sqs = new FakeSqs((input) => ({
      Successful: [],
      Failed: [
        { Id: input.Entries![0]!.Id, SenderFault: true, Code: 'InvalidMessageContents', Message: 'bad char' },
      ],
    }));
    const error = await refusal(client(sqs).send(capture, { paymentId: 'p-1' }, { id: 'job-1' }));
    expect(error.code).toBe('InvalidMessageContents');
    expect(error.senderFault).toBe(true);
    expect(error.message).toBe(
      'job payments.capture (id job-1) was not sent to queue "payments": InvalidMessageContents: bad char',
    );
    expect(sqs.requests).toHaveLength(1);
  });

  it('throws after the retries when SQS keeps failing the entry on its side', async () => {
    const sqs = new FakeSqs((input) => ({
      Successful: [],
      Failed: [{ Id: input.Entries![0]!.Id, SenderFault: false, Code: 'InternalError', Message: 'oops' }],
    }));
    const error = await refusal(client(sqs).send(capture, { paymentId: 'p-1' }));
    expect(error.code).toBe('InternalError');
    expect(error.senderFault).toBe(false);
    expect(error.message).toContain('InternalError: oops (after 3 tries)');
    expect(sqs.requests).toHaveLength(3);
  });

  it('throws with the error name when the queue does not exist, without retrying', async () => {
    const sqs = failingCalls(
      new QueueDoesNotExist({ message: 'The specified queue does not exist.', $metadata: {} }),
    );
    const error = await refusal(client(sqs).send(capture, { paymentId: 'p-1' }));
    expect(error.code).toBe('QueueDoesNotExist');
    expect(error.senderFault).toBe(true);
    expect(sqs.requests).toHaveLength(1);
  });
});

// ---------------------------------------------------------------- refused before sending

const oneMiB = 1_048_576;

describe('refused before anything is sent', () => {
  const cases: ReadonlyArray<readonly [string, BatchEntry, string | RegExp]> = [
    [
      'FIFO queue without partition key',
      { job: reserve, data: { bookingId: 'b-1' } },
      'options.partitionKey is required on FIFO queue "booking": it becomes the MessageGroupId (e.g. the user id)',
    ],
    [
      'delaySeconds on a FIFO queue',
      { job: reserve, data: { bookingId: 'b-1' }, options: { partitionKey: 'u', delaySeconds: 5 } },
      /options\.delaySeconds is not allowed on FIFO queue "booking"/,
    ],
    [
      'delaySeconds 901',
      { job: capture, data: { paymentId: 'p' }, options: { delaySeconds: 901 } },
      'options.delaySeconds must be an integer from 0 to 900, got 901',
    ],
    [
      'delaySeconds -1',
      { job: capture, data: { paymentId: 'p' }, options: { delaySeconds: -1 } },
      'options.delaySeconds must be an integer from 0 to 900, got -1',
    ],
    [
      'delaySeconds 1.5',
      { job: capture, data: { paymentId: 'p' }, options: { delaySeconds: 1.5 } },
      'options.delaySeconds must be an integer from 0 to 900, got 1.5',
    ],
    [
      'a queue with no URL',
      { job: report, data: {} },
      'unknown queue "reports" (known queues: booking, notifications, payments); pass its URL in queueUrls or set JOBS_QUEUE_URL_<NAME>',
    ],
    ['data failing the schema', { job: capture, data: { paymentId: 42 } }, /^data\.paymentId: /],
    ['data missing a field', { job: capture, data: {} }, /^data\.paymentId: /],
    [
      'data failing deep inside',
      {
        job: reserve,
        data: { bookingId: 'b', items: [{ sku: 'a' }, { sku: 1 }] },
        options: { partitionKey: 'u' },
      },
      /^data\.items\[1\]\.sku: /,
    ],
    ['data undefined', { job: anything, data: undefined }, 'data must be a JSON value (undefined is not)'],
    ['data with a BigInt', { job: anything, data: { n: 10n } }, /^data is not JSON-serializable \(/],
    [
      'an id over 256 characters',
      { job: capture, data: { paymentId: 'p' }, options: { id: 'x'.repeat(257) } },
      'options.id must be at most 256 characters',
    ],
    [
      'an empty id',
      { job: capture, data: { paymentId: 'p' }, options: { id: '' } },
      'options.id must not be empty',
    ],
    [
      'a partition key with a space on a FIFO queue',
      { job: reserve, data: { bookingId: 'b' }, options: { partitionKey: 'user 7' } },
      /^options\.partitionKey must be 1-128 characters of a-z, A-Z, 0-9 and punctuation/,
    ],
    [
      'an empty partition key on a FIFO queue: one line, not two',
      { job: reserve, data: { bookingId: 'b' }, options: { partitionKey: '' } },
      /^options\.partitionKey must be 1-128 characters of a-z, A-Z, 0-9 and punctuation \(printable ASCII, no space\) on a FIFO queue: it becomes the MessageGroupId$/,
    ],
    [
      'a partition key with a space on a standard queue (the same rule: it becomes a fair queue MessageGroupId)',
      { job: capture, data: { paymentId: 'p' }, options: { partitionKey: 'tenant 7' } },
      /^options\.partitionKey must be 1-128 characters of a-z, A-Z, 0-9 and punctuation \(printable ASCII, no space\): it becomes the MessageGroupId \(SendMessage API\)$/,
    ],
    [
      'a partition key over 128 characters',
      { job: capture, data: { paymentId: 'p' }, options: { partitionKey: 'k'.repeat(129) } },
      'options.partitionKey must be at most 128 characters',
    ],
    [
      'a message over 1 MiB',
      { job: email, data: { text: 'x'.repeat(oneMiB) } },
      /^message is 10\d{5} bytes, over the limit of 1048576 bytes \(body \+ attributes, UTF-8; SendMessage API\)/,
    ],
    [
      'something that is not a job',
      { job: { type: 'x' }, data: {} } as unknown as BatchEntry,
      'job must be a job definition (from defineJob) with type, queue and schema',
    ],
  ];

  it.each(cases)('%s', async (_name, entry, expected) => {
    const sqs = new FakeSqs();
    const error = await refusal(client(sqs).sendBatch([entry]));
    expect(error.code).toBe('InvalidEntries');
    expect(error.senderFault).toBe(true);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]!.index).toBe(0);
    if (typeof expected === 'string') expect(error.problems[0]!.message).toBe(expected);
    else expect(error.problems[0]!.message).toMatch(expected);
    expect(error.message).toContain('nothing was sent');
    expect(sqs.requests).toHaveLength(0);
  });

  it('send() throws the same refusal for its single job', async () => {
    const sqs = new FakeSqs();
    const error = await refusal(client(sqs).send(reserve, { bookingId: 'b-1' }));
    expect(error.code).toBe('InvalidEntries');
    expect(error.message).toBe(
      '1 of 1 job refused before sending; nothing was sent:\n' +
        '  entry 0 (booking.reserve-inventory): options.partitionKey is required on FIFO queue "booking": it becomes the MessageGroupId (e.g. the user id)',
    );
    expect(sqs.requests).toHaveLength(0);
  });

  it('lists every problem of every bad entry by index, and sends none of the good ones', async () => {
    const sqs = new FakeSqs();
    const error = await refusal(
      client(sqs).sendBatch([
        { job: capture, data: { paymentId: 'p-0' } },
        { job: reserve, data: { bookingId: 'b-1' } },
        { job: capture, data: { paymentId: 'p-2' } },
        { job: reserve, data: { bookingId: 7 }, options: { delaySeconds: 3 } },
        { job: email, data: { text: 'hi' } },
      ]),
    );
    expect(error.problems.map((p) => p.index)).toEqual([1, 3, 3, 3]);
    expect(error.problems.map((p) => p.type)).toEqual([
      'booking.reserve-inventory',
      'booking.reserve-inventory',
      'booking.reserve-inventory',
      'booking.reserve-inventory',
    ]);
    expect(error.message).toMatch(/^2 of 5 jobs refused before sending; nothing was sent:\n/);
    expect(error.message).toContain('entry 1 (booking.reserve-inventory): options.partitionKey is required');
    expect(error.message).toContain(
      'entry 3 (booking.reserve-inventory): options.delaySeconds is not allowed',
    );
    expect(error.message).toContain('entry 3 (booking.reserve-inventory): data.bookingId: ');
    expect(sqs.requests).toHaveLength(0);
  });

  it('refuses two entries with the same job id', async () => {
    const sqs = new FakeSqs();
    const error = await refusal(
      client(sqs).sendBatch([
        { job: capture, data: { paymentId: 'a' }, options: { id: 'same' } },
        { job: email, data: { text: 'b' }, options: { id: 'same' } },
      ]),
    );
    expect(error.problems).toEqual([
      {
        index: 1,
        type: 'notifications.email',
        message: 'options.id "same" is also the id of entry 0; job ids must be unique',
      },
    ]);
    expect(sqs.requests).toHaveLength(0);
  });

  it('counts bytes in UTF-8, not characters', async () => {
    const sqs = new FakeSqs();
    const text = 'é'.repeat(1_000); // 1,000 characters, 2,000 bytes
    await client(sqs).send(email, { text }, { id: 'job-1' });
    const body = sqs.requests[0]!.Entries![0]!.MessageBody!;
    const bytes = Buffer.byteLength(body, 'utf8');
    expect(bytes).toBe(body.length + 1_000);

    await expect(
      client(sqs, { maxMessageBytes: bytes }).send(email, { text }, { id: 'job-1' }),
    ).resolves.toBeDefined();
    const error = await refusal(
      client(sqs, { maxMessageBytes: body.length + 10 }).send(email, { text }, { id: 'job-1' }),
    );
    expect(error.problems[0]!.message).toMatch(
      new RegExp(`^message is ${bytes} bytes, over the limit of ${body.length + 10} bytes`),
    );
  });

  it('accepts a message of exactly maxMessageBytes and refuses one byte more', async () => {
    const sqs = new FakeSqs();
    await client(sqs).send(email, { text: 'abc' }, { id: 'job-1' });
    const bytes = Buffer.byteLength(sqs.requests[0]!.Entries![0]!.MessageBody!, 'utf8');
    await expect(
      client(sqs, { maxMessageBytes: bytes }).send(email, { text: 'abc' }, { id: 'job-1' }),
    ).resolves.toBeDefined();
    const error = await refusal(
      client(sqs, { maxMessageBytes: bytes - 1 }).send(email, { text: 'abc' }, { id: 'job-1' }),
    );
    expect(error.problems[0]!.message).toContain(
      `message is ${bytes} bytes, over the limit of ${bytes - 1} bytes`,
    );
  });
});

// ---------------------------------------------------------------- payload warning

describe('payload size warning', () => {
  it('warns when the data is over 16 KiB by default, and still sends it', async () => {
    const logger = recordingLogger();
    const sqs = new FakeSqs();
    await client(sqs, { logger }).send(email, { text: 'x'.repeat(17_000) }, { id: 'big' });
    expect(sqs.requests).toHaveLength(1);
    expect(logger.warnings).toEqual([
      {
        message: 'job data is larger than payloadWarnBytes: payloads should carry ids only',
        extra: expect.objectContaining({
          jobType: 'notifications.email',
          jobId: 'big',
          dataBytes: 17_011,
          payloadWarnBytes: 16_384,
        }),
      },
    ]);
  });

  it('stays quiet for ids-only data, and follows a configured threshold', async () => {
    const logger = recordingLogger();
    await client(new FakeSqs(), { logger }).send(capture, { paymentId: 'p-1' });
    expect(logger.warnings).toEqual([]);
    await client(new FakeSqs(), { logger, payloadWarnBytes: 10 }).send(capture, { paymentId: 'p-1' });
    expect(logger.warnings).toHaveLength(1);
  });
});

// ---------------------------------------------------------------- splitting

function requestBytes(request: SendMessageBatchRequest): number {
  return (request.Entries ?? []).reduce((sum, entry) => sum + messageSizeBytes(entry), 0);
}

describe('sendBatch splitting', () => {
  it('sends 25 jobs to one queue as requests of 10, 10 and 5, in order', async () => {
    const sqs = new FakeSqs();
    const entries = Array.from({ length: 25 }, (_, i) => batchEntry(capture, { paymentId: `p-${i}` }));
    const result = await client(sqs).sendBatch(entries);

    expect(sqs.requests.map((r) => r.Entries?.length)).toEqual([10, 10, 5]);
    expect(sqs.idsPerRequest.flat()).toEqual(entries.map((_, i) => String(i)));
    expect(result.sent.map((s) => s.index)).toEqual(entries.map((_, i) => i));
    expect(result.failed).toEqual([]);
  });

  it('sends each queue its own requests, keeping the input order within a queue', async () => {
    const sqs = new FakeSqs();
    const entries: BatchEntry[] = [];
    for (let i = 0; i < 12; i++) {
      entries.push(
        i % 2 === 0
          ? batchEntry(reserve, { bookingId: `b-${i}` }, { partitionKey: `user-${i % 3}` })
          : batchEntry(capture, { paymentId: `p-${i}` }),
      );
    }
    const result = await client(sqs).sendBatch(entries);

    const byQueue = new Map<string, string[]>();
    for (const request of sqs.requests) {
      byQueue.set(request.QueueUrl!, [
        ...(byQueue.get(request.QueueUrl!) ?? []),
        ...request.Entries!.map((e) => e.Id!),
      ]);
    }
    expect(byQueue.get(URLS.booking)).toEqual(['0', '2', '4', '6', '8', '10']);
    expect(byQueue.get(URLS.payments)).toEqual(['1', '3', '5', '7', '9', '11']);
    expect(result.sent.map((s) => s.queue)).toEqual(entries.map((e) => e.job.queue));
  });

  it('splits by total bytes so that no request exceeds maxMessageBytes', async () => {
    const sqs = new FakeSqs();
    const entries = Array.from({ length: 9 }, (_, i) => batchEntry(email, { text: `${i}`.padEnd(700, '.') }));
    const result = await client(sqs, { maxMessageBytes: 2_500 }).sendBatch(entries);

    // each message is a little under 1 KB: two fit in 2,500 bytes, three do not
    expect(sqs.requests.map((r) => r.Entries?.length)).toEqual([2, 2, 2, 2, 1]);
    for (const request of sqs.requests) expect(requestBytes(request)).toBeLessThanOrEqual(2_500);
    expect(result.sent).toHaveLength(9);
  });

  it('fills a request up to exactly maxMessageBytes', async () => {
    const probe = new FakeSqs();
    await client(probe).sendBatch([
      batchEntry(email, { text: 'a' }, { id: 'job-a' }),
      batchEntry(email, { text: 'b' }, { id: 'job-b' }),
    ]);
    const total = requestBytes(probe.requests[0]!);

    const sqs = new FakeSqs();
    await client(sqs, { maxMessageBytes: total }).sendBatch([
      batchEntry(email, { text: 'a' }, { id: 'job-a' }),
      batchEntry(email, { text: 'b' }, { id: 'job-b' }),
    ]);
    expect(sqs.requests).toHaveLength(1);

    const tighter = new FakeSqs();
    await client(tighter, { maxMessageBytes: total - 1 }).sendBatch([
      batchEntry(email, { text: 'a' }, { id: 'job-a' }),
      batchEntry(email, { text: 'b' }, { id: 'job-b' }),
    ]);
    expect(tighter.requests).toHaveLength(2);
  });

  it('puts near-1 MiB messages in requests of their own', async () => {
    const sqs = new FakeSqs();
    const big = 'x'.repeat(600_000);
    const result = await client(sqs, { payloadWarnBytes: Number.POSITIVE_INFINITY }).sendBatch([
      batchEntry(email, { text: big }),
      batchEntry(email, { text: big }),
      batchEntry(email, { text: 'small' }),
    ]);
    expect(sqs.requests.map((r) => r.Entries?.length)).toEqual([1, 2]);
    for (const request of sqs.requests) expect(requestBytes(request)).toBeLessThanOrEqual(oneMiB);
    expect(result.sent).toHaveLength(3);
  });

  it('sends nothing for an empty batch', async () => {
    const sqs = new FakeSqs();
    await expect(client(sqs).sendBatch([])).resolves.toEqual({ sent: [], failed: [] });
    expect(sqs.requests).toHaveLength(0);
  });
});

// ---------------------------------------------------------------- partial failures and retries

describe('sendBatch partial failures', () => {
  const three = (): BatchEntry[] => [
    batchEntry(capture, { paymentId: 'p-0' }, { id: 'job-0' }),
    batchEntry(capture, { paymentId: 'p-1' }, { id: 'job-1' }),
    batchEntry(capture, { paymentId: 'p-2' }, { id: 'job-2' }),
  ];

  it('reports entries SQS refused as the sender fault, without retrying them', async () => {
    const sqs = new FakeSqs((input) => ({
      Successful: input.Entries!.filter((e) => e.Id !== '1').map(accepted),
      Failed: [{ Id: '1', SenderFault: true, Code: 'InvalidParameterValue', Message: 'nope' }],
    }));
    const result = await client(sqs).sendBatch(three());

    expect(sqs.requests).toHaveLength(1);
    expect(result.sent.map((s) => s.index)).toEqual([0, 2]);
    expect(result.failed).toEqual([
      {
        index: 1,
        id: 'job-1',
        queue: 'payments',
        code: 'InvalidParameterValue',
        message: 'nope',
        senderFault: true,
      },
    ]);
  });

  it('retries only the entries SQS failed on its side, with the same message', async () => {
    const sqs = new FakeSqs((input, call) =>
      call === 1
        ? {
            Successful: [accepted(input.Entries![0]!)],
            Failed: [
              { Id: '1', SenderFault: false, Code: 'InternalError', Message: 'try again' },
              { Id: '2', SenderFault: true, Code: 'InvalidMessageContents', Message: 'bad' },
            ],
          }
        : acceptAll(input, call),
    );
    const result = await client(sqs).sendBatch(three());

    expect(sqs.idsPerRequest).toEqual([['0', '1', '2'], ['1']]);
    expect(sqs.requests[1]!.Entries![0]).toEqual(sqs.requests[0]!.Entries![1]);
    expect(result.sent.map((s) => s.index)).toEqual([0, 1]);
    expect(result.failed.map((f) => [f.index, f.code, f.senderFault])).toEqual([
      [2, 'InvalidMessageContents', true],
    ]);
  });

  it('keeps the FIFO group and dedup id of a retried entry', async () => {
    const sqs = new FakeSqs((input, call) =>
      call === 1
        ? {
            Successful: [],
            Failed: [{ Id: '0', SenderFault: false, Code: 'ServiceUnavailable', Message: '' }],
          }
        : acceptAll(input, call),
    );
    await client(sqs).send(reserve, { bookingId: 'b' }, { partitionKey: 'user-1', id: 'job-1' });
    const [first, second] = sqs.requests.map((r) => r.Entries![0]!);
    expect(second!.MessageGroupId).toBe('user-1');
    expect(second!.MessageDeduplicationId).toBe(first!.MessageDeduplicationId);
  });

  it('gives up after retry.maxAttempts tries and reports the last error', async () => {
    const sqs = new FakeSqs((input) => ({
      Successful: [],
      Failed: input.Entries!.map((e) => ({
        Id: e.Id,
        SenderFault: false,
        Code: 'InternalError',
        Message: 'down',
      })),
    }));
    const result = await client(sqs, { retry: { maxAttempts: 4, baseDelayMs: 0 } }).sendBatch(three());
    expect(sqs.requests).toHaveLength(4);
    expect(result.sent).toEqual([]);
    expect(result.failed.map((f) => [f.index, f.code, f.senderFault])).toEqual([
      [0, 'InternalError', false],
      [1, 'InternalError', false],
      [2, 'InternalError', false],
    ]);
    expect(result.failed[0]!.message).toBe('down (after 4 tries)');
  });

  it('does not retry at all with retry.maxAttempts 1', async () => {
    const sqs = failingCalls(new RequestThrottled({ message: 'slow down', $metadata: {} }));
    const result = await client(sqs, { retry: { maxAttempts: 1 } }).sendBatch(three());
    expect(sqs.requests).toHaveLength(1);
    expect(result.failed.map((f) => f.code)).toEqual([
      'RequestThrottled',
      'RequestThrottled',
      'RequestThrottled',
    ]);
  });

  it('sends again an entry the response does not mention', async () => {
    const sqs = new FakeSqs((input, call) =>
      call === 1 ? { Successful: [accepted(input.Entries![0]!)], Failed: [] } : acceptAll(input, call),
    );
    const result = await client(sqs).sendBatch(three());
    expect(sqs.idsPerRequest).toEqual([
      ['0', '1', '2'],
      ['1', '2'],
    ]);
    expect(result.sent).toHaveLength(3);
  });

  it('retries a whole request that failed with a transient error (throttling)', async () => {
    const sqs = failingCalls(new RequestThrottled({ message: 'Rate exceeded', $metadata: {} }), 2);
    const result = await client(sqs).sendBatch(three());
    expect(sqs.requests).toHaveLength(3);
    expect(result.sent).toHaveLength(3);
  });

  it('retries a whole request after a network error and names its code when it gives up', async () => {
    const reset = new TypeError('fetch failed', {
      cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    });
    const sqs = failingCalls(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    const result = await client(sqs).sendBatch(three());
    expect(sqs.requests).toHaveLength(3);
    expect(result.failed.map((f) => [f.code, f.senderFault])).toEqual([
      ['ECONNRESET', false],
      ['ECONNRESET', false],
      ['ECONNRESET', false],
    ]);
    const fetchFailure = failingCalls(reset, 1);
    expect((await client(fetchFailure).sendBatch(three())).sent).toHaveLength(3);
  });

  it('fails a queue whose request fails permanently while other queues go through', async () => {
    const sqs = new FakeSqs((input, call) => {
      if (input.QueueUrl === URLS.payments) {
        throw new QueueDoesNotExist({ message: 'The specified queue does not exist.', $metadata: {} });
      }
      return acceptAll(input, call);
    });
    const result = await client(sqs).sendBatch([
      batchEntry(capture, { paymentId: 'p' }),
      batchEntry(email, { text: 'hi' }),
      batchEntry(capture, { paymentId: 'q' }),
    ]);
    expect(result.sent.map((s) => [s.index, s.queue])).toEqual([[1, 'notifications']]);
    expect(result.failed.map((f) => [f.index, f.code, f.senderFault])).toEqual([
      [0, 'QueueDoesNotExist', true],
      [2, 'QueueDoesNotExist', true],
    ]);
    expect(sqs.requests.filter((r) => r.QueueUrl === URLS.payments)).toHaveLength(1);
  });

  it('finishes retrying one request of a queue before sending the next (FIFO order across requests)', async () => {
    const sqs = new FakeSqs((input, call) =>
      call === 1
        ? {
            Successful: input.Entries!.slice(1).map(accepted),
            Failed: [{ Id: input.Entries![0]!.Id, SenderFault: false, Code: 'InternalError', Message: '' }],
          }
        : acceptAll(input, call),
    );
    const entries = Array.from({ length: 12 }, (_, i) =>
      batchEntry(reserve, { bookingId: `b-${i}` }, { partitionKey: 'user-1' }),
    );
    await client(sqs).sendBatch(entries);
    expect(sqs.idsPerRequest).toEqual([
      ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
      ['0'],
      ['10', '11'],
    ]);
  });

  /** Milliseconds between the tries of a batch whose first two tries are throttled, on a fake clock. */
  async function gapsBetweenTries(random: number, baseDelayMs: number): Promise<number[]> {
    vi.useFakeTimers({ now: 0 });
    vi.spyOn(Math, 'random').mockReturnValue(random);
    const times: number[] = [];
    const sqs = new FakeSqs((input, call) => {
      times.push(Date.now());
      if (call <= 2) throw new RequestThrottled({ message: 'slow down', $metadata: {} });
      return acceptAll(input, call);
    });
    const promise = client(sqs, { retry: { maxAttempts: 3, baseDelayMs } }).sendBatch(three());
    await vi.runAllTimersAsync();
    await expect(promise).resolves.toMatchObject({ failed: [] });
    return times.slice(1).map((t, i) => t - times[i]!);
  }

  it('waits with exponential backoff between tries: the bound doubles, base * 2^(n-1)', async () => {
    // a draw at the top of the jitter range waits the whole bound: 1,000 ms, then 2,000 ms
    expect(await gapsBetweenTries(0.99999, 1_000)).toEqual([1_000, 2_000]);
  });

  it('uses full jitter: a draw in the middle waits half the bound, a zero draw retries at once', async () => {
    expect(await gapsBetweenTries(0.5, 1_000)).toEqual([500, 1_000]);
    expect(await gapsBetweenTries(0, 1_000)).toEqual([0, 0]);
  });
});

// ---------------------------------------------------------------- the counts always add up

describe('sendBatch accounts for every entry', () => {
  type Reply = 'ok' | 'sender' | 'retryable' | 'omit' | 'throw-transient' | 'throw-permanent';
  const reply = fc.constantFrom<Reply>(
    'ok',
    'ok',
    'ok',
    'sender',
    'retryable',
    'omit',
    'throw-transient',
    'throw-permanent',
  );
  const entryArb = fc.record({
    kind: fc.constantFrom('fifo', 'standard', 'other'),
    group: fc.constantFrom('u1', 'u2', 'u3'),
    size: fc.integer({ min: 0, max: 3_000 }),
  });

  it('sent.length + failed.length === entries.length, each index once, each request within the limits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArb, { maxLength: 40 }),
        fc.array(reply, { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 4_000, max: 20_000 }),
        fc.integer({ min: 1, max: 4 }),
        async (specs, script, maxMessageBytes, maxAttempts) => {
          let step = 0;
          const next = (): Reply => script[step++ % script.length]!;
          const sqs = new FakeSqs((input) => {
            const whole = next();
            if (whole === 'throw-transient') throw new RequestThrottled({ message: 'slow', $metadata: {} });
            if (whole === 'throw-permanent') throw new QueueDoesNotExist({ message: 'gone', $metadata: {} });
            const successful: NonNullable<SendMessageBatchResult['Successful']> = [];
            const failed: NonNullable<SendMessageBatchResult['Failed']> = [];
            for (const entry of input.Entries ?? []) {
              const r = next();
              if (r === 'ok' || r.startsWith('throw')) successful.push(accepted(entry));
              else if (r === 'sender')
                failed.push({ Id: entry.Id, SenderFault: true, Code: 'Bad', Message: '' });
              else if (r === 'retryable')
                failed.push({ Id: entry.Id, SenderFault: false, Code: 'Int', Message: '' });
            }
            return { Successful: successful, Failed: failed };
          });
          const entries = specs.map((spec, i): BatchEntry => {
            const text = 'x'.repeat(spec.size);
            if (spec.kind === 'fifo')
              return batchEntry(reserve, { bookingId: text }, { partitionKey: spec.group, id: `j${i}` });
            if (spec.kind === 'standard') return batchEntry(capture, { paymentId: text }, { id: `j${i}` });
            return batchEntry(email, { text }, { id: `j${i}` });
          });
          const result = await client(sqs, {
            maxMessageBytes,
            retry: { maxAttempts, baseDelayMs: 0 },
          }).sendBatch(entries);

          expect(result.sent.length + result.failed.length).toBe(entries.length);
          const indices = [...result.sent, ...result.failed].map((e) => e.index).sort((a, b) => a - b);
          expect(indices).toEqual(entries.map((_, i) => i));
          for (const entry of [...result.sent, ...result.failed]) expect(entry.id).toBe(`j${entry.index}`);
          for (const request of sqs.requests) {
            expect(request.Entries!.length).toBeGreaterThan(0);
            expect(request.Entries!.length).toBeLessThanOrEqual(10);
            expect(requestBytes(request)).toBeLessThanOrEqual(maxMessageBytes);
          }
          const tries = new Map<string, number>();
          for (const id of sqs.idsPerRequest.flat()) tries.set(id, (tries.get(id) ?? 0) + 1);
          for (const count of tries.values()) expect(count).toBeLessThanOrEqual(maxAttempts);
        },
      ),
      { numRuns: 150 },
    );
  });
});
