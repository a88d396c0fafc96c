/**
 * JobClient.checkEnvelope / sendEnvelope: a job envelope built elsewhere is checked against the
 * envelope rules and the producer rules of its queue, then sent body unchanged.
 */
import { describe, expect, it } from 'vitest';
import { JobClient, type SqsBatchSender } from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { createEnvelope, deduplicationIdOf } from '../../lib/core/envelope.ts';
import { RecordingBatchSender as FakeSqs, refuseAll } from '../factories/batch-sender.ts';

const URLS = {
  booking: 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo',
  payments: 'https://sqs.eu-west-1.amazonaws.com/123456789012/payments',
} as const;

function client(sqs: SqsBatchSender, maxMessageBytes?: number): JobClient {
  return new JobClient({
    source: '/not/used/for/envelopes',
    queueUrls: URLS,
    sqs,
    retry: { baseDelayMs: 0, maxAttempts: 2 },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
  });
}

const envelope = (extra: Record<string, unknown> = {}) => ({
  specversion: '1.0',
  id: 'job-1',
  source: '/services/legacy-php',
  type: 'payments.capture',
  time: '2026-11-29T07:00:00Z',
  datacontenttype: 'application/json',
  data: { paymentId: 'p-1' },
  ...extra,
});

async function refusedWith(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobClientError);
  expect((error as JobClientError).code).toBe('InvalidEntries');
  return (error as JobClientError).problems.map((p) => p.message).join('\n');
}

describe('JobClient.sendEnvelope', () => {
  it('sends the text exactly as given: spacing, number spelling and extension attributes survive', async () => {
    const sqs = new FakeSqs();
    const text =
      '{ "specversion": "1.0", "id": "job-1", "source": "/php", "type": "payments.capture",\n' +
      '  "time": "2026-11-29T07:00:00Z", "datacontenttype": "application/json",\n' +
      '  "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "myext": "x", "data": { "amount": 1.50, "ref": 9007199254740991, "big": 1.0e300 } }';
    const result = await client(sqs).sendEnvelope('payments', text);
    expect(result).toEqual({ id: 'job-1', messageId: expect.stringMatching(/^msg-0-/), queue: 'payments' });
    expect(sqs.requests).toHaveLength(1);
    expect(sqs.requests[0]!.QueueUrl).toBe(URLS.payments);
    const entry = sqs.requests[0]!.Entries![0]!;
    expect(entry.MessageBody).toBe(text);
    expect(entry.MessageGroupId).toBeUndefined();
    expect(entry.MessageDeduplicationId).toBeUndefined();
  });

  it('on a FIFO queue: MessageGroupId from partitionkey, dedup id from the envelope source, id, type and data', async () => {
    const sqs = new FakeSqs();
    const built = createEnvelope({
      type: 'booking.reserve',
      source: '/web',
      id: 'b-1',
      data: {},
      partitionKey: 'user-9',
    });
    const result = await client(sqs).sendEnvelope('booking', built);
    const entry = sqs.requests[0]!.Entries![0]!;
    expect(entry.MessageBody).toBe(JSON.stringify(built));
    expect(entry.MessageGroupId).toBe('user-9');
    expect(entry.MessageDeduplicationId).toBe(
      deduplicationIdOf({ source: '/web', id: 'b-1', type: 'booking.reserve', data: {} }),
    );
    expect(result.sequenceNumber).toBe('seq-0');
  });

  it("on a standard queue: MessageGroupId from partitionkey (a fair queue's tenant), no dedup id", async () => {
    const sqs = new FakeSqs();
    const built = createEnvelope({
      type: 'payments.capture',
      source: '/web',
      id: 'p-1',
      data: {},
      partitionKey: 'tenant-9',
    });
    await client(sqs).sendEnvelope('payments', built);
    const entry = sqs.requests[0]!.Entries![0]!;
    expect(sqs.requests[0]!.QueueUrl).toBe(URLS.payments);
    expect(entry.MessageGroupId).toBe('tenant-9');
    expect(entry.MessageDeduplicationId).toBeUndefined();
  });

  it('passes delaySeconds on a standard queue and refuses it on a FIFO queue', async () => {
    const sqs = new FakeSqs();
    await client(sqs).sendEnvelope('payments', envelope(), { delaySeconds: 30 });
    expect(sqs.requests[0]!.Entries![0]!.DelaySeconds).toBe(30);
    const fifo = await refusedWith(
      client(sqs).sendEnvelope('booking', envelope({ partitionkey: 'u' }), { delaySeconds: 30 }),
    );
    expect(fifo).toContain('delaySeconds is not allowed on FIFO queue "booking"');
    const range = await refusedWith(client(sqs).sendEnvelope('payments', envelope(), { delaySeconds: 901 }));
    expect(range).toBe('delaySeconds must be an integer from 0 to 900, got 901');
    expect(sqs.requests).toHaveLength(1);
  });

  it.each([
    ['a body that is not JSON', '{"id":', /^invalid job envelope: body is not JSON/],
    [
      'a missing field',
      JSON.stringify(envelope({ time: undefined })),
      'invalid job envelope: time is missing',
    ],
    [
      'a bad time',
      JSON.stringify(envelope({ time: 'yesterday' })),
      'invalid job envelope: time must be an RFC 3339 timestamp, got "yesterday"',
    ],
    [
      'a bad attribute name',
      JSON.stringify(envelope({ TraceParent: 'x' })),
      'invalid job envelope: TraceParent is not a valid CloudEvents attribute name (lowercase a-z, 0-9, max 20)',
    ],
  ])('refuses %s with the envelope rule, sending nothing', async (_, body, message) => {
    const sqs = new FakeSqs();
    const problems = await refusedWith(client(sqs).sendEnvelope('payments', body));
    expect(problems).toMatch(message);
    expect(sqs.requests).toHaveLength(0);
  });

  it('refuses a FIFO envelope without partitionkey, or with one that is not a MessageGroupId', async () => {
    const sqs = new FakeSqs();
    expect(await refusedWith(client(sqs).sendEnvelope('booking', envelope()))).toBe(
      'partitionkey is required on FIFO queue "booking": it becomes the MessageGroupId (e.g. the user id)',
    );
    // Not a MessageGroupId: the envelope rule itself refuses it (the worker would send it on as
    // the MessageGroupId of the job's children), on a standard queue too.
    for (const queue of ['booking', 'payments']) {
      expect(
        await refusedWith(client(sqs).sendEnvelope(queue, envelope({ partitionkey: 'user 9' }))),
      ).toMatch(
        /^invalid job envelope: partitionkey must be 1-128 characters of a-z, A-Z, 0-9 and punctuation/,
      );
    }
    expect(sqs.requests).toHaveLength(0);
  });

  it('refuses an unknown queue, a character SQS refuses, and a message over the size limit', async () => {
    const sqs = new FakeSqs();
    expect(await refusedWith(client(sqs).sendEnvelope('nope', envelope()))).toBe(
      'unknown queue "nope" (known queues: booking, payments); pass its URL in queueUrls or set JOBS_QUEUE_URL_<NAME>',
    );
    const raw = JSON.stringify(envelope({ data: { note: 'a\uFFFFb' } }));
    expect(await refusedWith(client(sqs).sendEnvelope('payments', raw))).toMatch(
      /^body has the character U\+FFFF at index \d+, which SQS does not accept .*JSON escape \\uffff$/,
    );
    // The same text with the escape is fine.
    await client(sqs).sendEnvelope('payments', raw.replace('\uFFFF', '\\uffff'));
    const body = JSON.stringify(envelope());
    const bytes = Buffer.byteLength(body);
    await client(sqs, bytes).sendEnvelope('payments', body);
    expect(await refusedWith(client(sqs, bytes - 1).sendEnvelope('payments', body))).toBe(
      `message is ${bytes} bytes, over the limit of ${bytes - 1} bytes (body + attributes, UTF-8; SendMessage API); send ids and let the worker reload the data`,
    );
    expect(sqs.requests).toHaveLength(2);
  });

  it('throws the SQS code when SQS refuses the message', async () => {
    const error = await client(new FakeSqs(refuseAll('InvalidMessageContents', true)))
      .sendEnvelope('payments', envelope())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobClientError);
    expect((error as JobClientError).code).toBe('InvalidMessageContents');
    expect((error as JobClientError).senderFault).toBe(true);
    expect((error as Error).message).toBe(
      'job payments.capture (id job-1) was not sent to queue "payments": InvalidMessageContents: refused',
    );
  });
});

describe('JobClient.checkEnvelope', () => {
  it('returns the parameters it would send with, and sends nothing', () => {
    const sqs = new FakeSqs();
    const checked = client(sqs).checkEnvelope('booking', envelope({ partitionkey: 'user-9' }));
    expect(checked).toEqual({
      envelope: envelope({ partitionkey: 'user-9' }),
      queue: 'booking',
      queueUrl: URLS.booking,
      body: JSON.stringify(envelope({ partitionkey: 'user-9' })),
      messageGroupId: 'user-9',
      messageDeduplicationId: deduplicationIdOf(envelope({ partitionkey: 'user-9' })),
      bytes: Buffer.byteLength(JSON.stringify(envelope({ partitionkey: 'user-9' }))),
    });
    expect(sqs.requests).toHaveLength(0);
  });

  it('throws the same refusal as sendEnvelope', () => {
    expect(() => client(new FakeSqs()).checkEnvelope('booking', envelope())).toThrow(
      /1 of 1 job refused before sending; nothing was sent:\n {2}entry 0 \(payments\.capture\): partitionkey is required on FIFO queue "booking"/,
    );
  });
});
