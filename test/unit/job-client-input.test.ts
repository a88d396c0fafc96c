/**
 * JobClient against input a user gets wrong, from TypeScript or plain JavaScript: numbers in an
 * envelope text that the worker's JSON.parse would not read as written, misspelled option keys,
 * non-array batches, queue URLs that are not what they seem, and SDK setup errors (no region,
 * no credentials) that no retry can fix.
 */
import { describe, expect, it } from 'vitest';
import { JobClient, type JobClientOptions, type SqsBatchSender } from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { jsonNumberProblems } from '../../lib/core/json-numbers.ts';
import { RecordingBatchSender as FakeSqs } from '../factories/batch-sender.ts';

const URLS = {
  booking: 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo',
  payments: 'https://sqs.eu-west-1.amazonaws.com/123456789012/payments',
} as const;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function client(sqs: SqsBatchSender = new FakeSqs(), extra: Partial<JobClientOptions> = {}): JobClient {
  return new JobClient({
    source: '/services/checkout',
    queueUrls: URLS,
    sqs,
    retry: { baseDelayMs: 0, maxAttempts: 3 },
    logger: quiet,
    ...extra,
  });
}

/** A job definition whose schema accepts anything. */
function job(queue: keyof typeof URLS | string = 'payments') {
  return {
    type: 'payments.capture',
    queue,
    schema: {
      '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) },
    },
  };
}

function envelopeText(data: string): string {
  return (
    '{"specversion":"1.0","id":"job-1","source":"/php","type":"payments.capture",' +
    `"time":"2026-11-29T07:00:00Z","datacontenttype":"application/json","data":${data}}`
  );
}

async function errorOf(run: () => unknown): Promise<JobClientError> {
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(JobClientError);
  return caught as JobClientError;
}

describe('envelope text: numbers the worker cannot read as written', () => {
  it.each([
    ['1e400', 'data.amount', 'Infinity'],
    ['-1E+400', 'data.amount', '-Infinity'],
    ['1e-400', 'data.amount', 'would read 0'],
    ['12345678901234567890', 'data.amount', 'would read 12345678901234567000'],
    ['9007199254740993', 'data.amount', 'would read 9007199254740992'],
    ['-9007199254740993', 'data.amount', 'would read -9007199254740992'],
  ])(
    'refuses %s with its path, sends nothing, and says to send it as a string',
    async (literal, path, says) => {
      const sqs = new FakeSqs();
      const text = envelopeText(`{"note":"1e400 in a string is fine","amount":${literal}}`);
      const error = await errorOf(() => client(sqs).sendEnvelope('payments', text));
      expect(error.code).toBe('InvalidEntries');
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]!.message).toContain(`${path}: `);
      expect(error.problems[0]!.message).toContain(literal);
      expect(error.problems[0]!.message).toContain(says);
      expect(error.problems[0]!.message).toContain('send it as a string');
      expect(sqs.requests).toHaveLength(0);
      // checkEnvelope (the CLI's --dry-run) refuses the same
      expect(() => client(sqs).checkEnvelope('payments', text)).toThrow(literal);
    },
  );

  it('keeps every number JavaScript reads as written, byte for byte', async () => {
    const sqs = new FakeSqs();
    const data =
      '{ "a": 9007199254740991, "b": -9007199254740991, "c": 9007199254740992, "d": 1e300, ' +
      '"e": 1.50, "f": 0.1, "g": 5e-324, "h": 0e999, "i": -0.0, "j": 1E2, "l": 1.2345678901234567891e19, "k": [1, 2e3, {"x": 18446744073709551616}] }';
    const text = envelopeText(data);
    await client(sqs).sendEnvelope('payments', text);
    expect(sqs.requests[0]!.Entries![0]!.MessageBody).toBe(text);
  });

  it('names paths in arrays and under keys that are not identifiers', () => {
    expect(
      jsonNumberProblems('{"data":{"items":[1,{"a b":1e999}],"x\\"y":[[12345678901234567890]]}}').map(
        (p) => p.path,
      ),
    ).toEqual(['data.items[1]["a b"]', 'data["x\\"y"][0][0]']);
  });

  it('an object envelope keeps being checked as a value (NaN/Infinity refused by jsonValueProblems)', async () => {
    const error = await errorOf(() =>
      client().sendEnvelope('payments', {
        ...JSON.parse(envelopeText('{}')),
        data: { amount: Number.POSITIVE_INFINITY },
      }),
    );
    expect(error.problems[0]!.message).toContain('envelope.data.amount: Infinity has no JSON form');
  });
});

describe('plain JavaScript: option keys, batch shape, queue URLs', () => {
  const anyClient = (sqs: FakeSqs) =>
    client(sqs) as unknown as Record<string, (...args: unknown[]) => unknown>;

  it('send refuses a misspelled option key with the known ones and the nearest, and sends nothing', async () => {
    const sqs = new FakeSqs();
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { delay: 30 },
        'options.delay is not an option (known: awsTraceHeader, batchId, correlationId, delayMs, delaySeconds, id, parent, partitionKey, runAt, traceparent, tracestate); did you mean delaySeconds (up to 900 seconds) or delayMs (any length)?',
      ],
      [{ delaySecond: 30 }, 'did you mean delaySeconds?'],
      [{ partition_key: 'u-1' }, 'did you mean partitionKey?'],
      [{ MessageGroupId: 'u-1' }, 'did you mean partitionKey (it becomes the MessageGroupId)?'],
      [
        { zzz: 1 },
        'options.zzz is not an option (known: awsTraceHeader, batchId, correlationId, delayMs, delaySeconds, id, parent, partitionKey, runAt, traceparent, tracestate)',
      ],
    ];
    for (const [options, says] of cases) {
      const error = await errorOf(() => anyClient(sqs).send!.call(client(sqs), job(), { a: 1 }, options));
      expect(error.code).toBe('InvalidEntries');
      expect(error.problems.map((p) => p.message)).toEqual([expect.stringContaining(says)]);
    }
    const notObject = await errorOf(() => anyClient(sqs).send!.call(client(sqs), job(), { a: 1 }, 'user-7'));
    expect(notObject.problems[0]!.message).toBe(
      'options must be an object { partitionKey, id, delaySeconds }, got a string ("user-7") (a partition key goes in { partitionKey })',
    );
    expect(sqs.requests).toHaveLength(0);
  });

  it('shows a wrongly typed option value as typed: the string "5" is not the number 5', async () => {
    const sqs = new FakeSqs();
    for (const [delaySeconds, shown] of [
      ['5', '"5"'],
      [1.5, '1.5'],
      [Number.NaN, 'NaN'],
    ] as const) {
      const error = await errorOf(() =>
        anyClient(sqs).send!.call(client(sqs), job(), { a: 1 }, { delaySeconds }),
      );
      expect(error.problems.map((p) => p.message)).toEqual([
        `options.delaySeconds must be an integer from 0 to 900, got ${shown}`,
      ]);
    }
    expect(sqs.requests).toHaveLength(0);
  });

  it('sendBatch refuses unknown keys of an entry, and sendEnvelope unknown keys of its options', async () => {
    const sqs = new FakeSqs();
    const c = client(sqs);
    const batch = await errorOf(() =>
      c.sendBatch([
        { job: job(), data: {}, partitionKey: 'u-1' } as unknown as Parameters<typeof c.sendBatch>[0][0],
      ]),
    );
    expect(batch.problems[0]!.message).toBe(
      'entry.partitionKey is not a key of a sendBatch entry (known: data, job, options); did you mean options: { partitionKey }?',
    );
    const envelope = await errorOf(() =>
      c.sendEnvelope('payments', envelopeText('{}'), { delay: 5 } as unknown as { delaySeconds: number }),
    );
    expect(envelope.problems[0]!.message).toBe(
      'options.delay is not an option (known: delaySeconds); did you mean delaySeconds?',
    );
    expect(sqs.requests).toHaveLength(0);
  });

  it('sendBatch with a non-array is a JobClientError saying what it takes, not a TypeError', async () => {
    for (const input of [{ job: job(), data: {} }, undefined, 'x', new Set()]) {
      const error = await errorOf(() =>
        client().sendBatch(input as unknown as Parameters<JobClient['sendBatch']>[0]),
      );
      expect(error.code).toBe('InvalidEntries');
      expect(error.message).toMatch(
        /^sendBatch takes an array of entries \[\{ job, data, options \}, \.\.\.\], got .+; to send one job use send\(job, data, options\)$/,
      );
    }
  });

  it('JobClient refuses unknown option keys (nearest named), queueUrls that are not a plain object, and a bad retry', () => {
    const make = (options: Record<string, unknown>) => () =>
      new JobClient({ source: '/s', queueUrls: URLS, sqs: new FakeSqs(), ...options } as JobClientOptions);
    expect(make({ payloadWarnByte: 1 })).toThrow(
      'payloadWarnByte is not an option (known: batches, dynamodb, logger, maxMessageBytes, payloadWarnBytes, queueUrls, retry, scheduleBatchWatchdog, scheduler, scheduling, source, sqs); did you mean payloadWarnBytes?',
    );
    expect(make({ region: 'eu-west-1' })).toThrow(
      'region is not an option (known: batches, dynamodb, logger, maxMessageBytes, payloadWarnBytes, queueUrls, retry, scheduleBatchWatchdog, scheduler, scheduling, source, sqs); did you mean sqs: new SQSClient({ region }) (or set AWS_REGION)?',
    );
    expect(make({ retry: { attempts: 5 } })).toThrow(
      'retry.attempts is not an option (known: baseDelayMs, maxAttempts); did you mean maxAttempts?',
    );
    expect(make({ queueUrls: [URLS.payments] })).toThrow(
      "queueUrls must be an object of logical queue name → queue URL (e.g. { booking: 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo' }), got an array",
    );
    expect(make({ queueUrls: new Map([['payments', URLS.payments]]) })).toThrow(
      'got a Map: pass Object.fromEntries(map)',
    );
    expect(make({ queueUrls: { payments: `${URLS.payments}?x=1` } })).toThrow(
      'queueUrls.payments must be a queue URL without spaces, query or fragment',
    );
    expect(make({ queueUrls: { payments: 'https://sqs.eu-west-1.amazonaws.com/' } })).toThrow(
      'queueUrls.payments has no queue in its path',
    );
    expect(make({ logger: {} })).toThrow('logger must have warn(message, extra)');
    for (const bad of [make({ delay: 1 }), make({ queueUrls: [] })]) {
      try {
        bad();
      } catch (error) {
        expect(error).toBeInstanceOf(JobClientError);
        expect((error as JobClientError).code).toBe('InvalidOptions');
      }
    }
  });

  it('a FIFO queue URL with a trailing slash is FIFO: MessageGroupId and dedup id sent, URL without the slash', async () => {
    const sqs = new FakeSqs();
    const fifo = new JobClient({
      source: '/services/checkout',
      queueUrls: { booking: `${URLS.booking}/` },
      sqs,
      logger: quiet,
    });
    const missing = await errorOf(() => fifo.send(job('booking'), { a: 1 }));
    expect(missing.problems[0]!.message).toContain(
      'options.partitionKey is required on FIFO queue "booking"',
    );
    const sent = await fifo.send(job('booking'), { a: 1 }, { partitionKey: 'user-7' });
    expect(sent.sequenceNumber).toBe('seq-0');
    expect(sqs.requests[0]!.QueueUrl).toBe(URLS.booking);
    expect(sqs.requests[0]!.Entries![0]!.MessageGroupId).toBe('user-7');
    expect(sqs.requests[0]!.Entries![0]!.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('SDK setup errors fail at once, saying what to configure', () => {
  /** An SQS client whose every send throws `error` (as the SDK does before a request leaves). */
  class Throwing implements SqsBatchSender {
    calls = 0;
    constructor(private readonly error: () => unknown) {}
    async send(): Promise<never> {
      this.calls++;
      throw this.error();
    }
  }
  const credentialsError = (message: string) =>
    Object.assign(new Error(message), { name: 'CredentialsProviderError', tryNextLink: false });

  it.each([
    [
      'no region',
      () => new Error('Region is missing'),
      'MissingRegion',
      'Region is missing: set AWS_REGION (or a region in the AWS_PROFILE profile), or pass sqs: new SQSClient({ region })',
    ],
    [
      'an invalid region',
      () => new Error('Region not accepted: region="eu west 1" is not a valid hostname component.'),
      'InvalidRegion',
      'set AWS_REGION (or the SQSClient region) to a region such as eu-west-1',
    ],
    [
      'no credentials',
      () => credentialsError('Could not load credentials from any providers'),
      'MissingCredentials',
      'Could not load credentials from any providers: configure the AWS credentials chain: AWS_PROFILE',
    ],
    [
      'an SSO token expired',
      () => Object.assign(new Error('The SSO session has expired'), { name: 'TokenProviderError' }),
      'MissingCredentials',
      'run aws sso login',
    ],
  ])('%s: one try, no retry warnings, a JobClientError naming what to set', async (_, error, code, says) => {
    const sqs = new Throwing(error);
    const warnings: string[] = [];
    const c = client(sqs, { logger: { ...quiet, warn: (message) => warnings.push(message) } });
    const thrown = await errorOf(() => c.send(job(), { a: 1 }));
    expect(thrown.code).toBe(code);
    expect(thrown.senderFault).toBe(true);
    expect(thrown.message).toContain(says);
    expect(thrown.message).not.toContain('tries');
    expect(sqs.calls).toBe(1);
    expect(warnings).toEqual([]);

    const batch = await client(sqs).sendBatch([{ job: job(), data: {} }]);
    expect(batch.failed).toEqual([expect.objectContaining({ code, senderFault: true })]);
    expect(JSON.parse(JSON.stringify(batch.failed[0]))).not.toHaveProperty('cause');
  });

  it('a credentials endpoint that timed out or throttled is still retried', async () => {
    for (const message of ['Connection timed out after 1000 ms', 'Request throttled (429)']) {
      const sqs = new Throwing(() => credentialsError(message));
      const thrown = await errorOf(() => client(sqs).send(job(), { a: 1 }));
      expect(sqs.calls).toBe(3);
      expect(thrown.code).toBe('CredentialsProviderError');
      expect(thrown.senderFault).toBe(false);
    }
  });
});

describe('awsTraceHeader', () => {
  it('awsTraceHeader becomes the AWSTraceHeader system attribute, outside the size count; a malformed one is refused', async () => {
    const sqs = new FakeSqs();
    const header =
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0;Lineage=a87bd80c:3';
    await client(sqs).send(job(), { a: 1 }, { awsTraceHeader: header });
    const entry = sqs.requests[0]?.Entries?.[0];
    expect(entry?.MessageSystemAttributes).toEqual({
      AWSTraceHeader: { DataType: 'String', StringValue: header },
    });
    for (const bad of ['Parent=53995c3f42cd8ad8', 'Root=1-5759e988-bd862e3fe1be46a994272793;\n', 42]) {
      const error = await errorOf(() => client(sqs).send(job(), { a: 1 }, { awsTraceHeader: bad as string }));
      expect(error.problems.map((p) => p.message)).toEqual([
        expect.stringContaining(
          'options.awsTraceHeader must be an X-Ray trace header of printable ASCII with a Root field',
        ),
      ]);
    }
    expect(sqs.requests).toHaveLength(1);
  });
});

describe('data nested deeper than the call stack allows', () => {
  it('send and sendEnvelope refuse it as InvalidEntries naming the problem, and send nothing (no RangeError)', async () => {
    const sqs = new FakeSqs();
    let data: unknown = 1;
    for (let i = 0; i < 100_000; i++) data = [data];
    const sent = await errorOf(() => client(sqs).send(job(), data));
    expect(sent.code).toBe('InvalidEntries');
    expect(sent.problems.map((p) => p.message)).toEqual([
      expect.stringContaining('data: is nested too deeply to check or serialize'),
    ]);
    const envelope = {
      specversion: '1.0',
      id: 'deep-1',
      source: '/tests',
      type: 'payments.capture',
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data,
    };
    const forwarded = await errorOf(() => client(sqs).sendEnvelope('payments', envelope));
    expect(forwarded.code).toBe('InvalidEntries');
    expect(forwarded.problems.map((p) => p.message).join('\n')).toContain('nested too deeply');
    expect(sqs.requests).toHaveLength(0);
  });
});
