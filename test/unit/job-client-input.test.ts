/**
 * JobClient against input a user gets wrong, from TypeScript or plain JavaScript: numbers in an
 * envelope text that the worker's JSON.parse would not read as written, misspelled option keys,
 * non-array batches, queue URLs that are not what they seem, and SDK setup errors (no region,
 * no credentials) that no retry can fix.
 */
import type {
  SendMessageBatchCommand,
  SendMessageBatchRequest,
  SendMessageBatchResult,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { JobClient, type JobClientOptions, type SqsBatchSender } from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { jsonNumberProblems } from '../../lib/sqs/json-numbers.ts';

const URLS = {
  booking: 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo',
  payments: 'https://sqs.eu-west-1.amazonaws.com/123456789012/payments',
} as const;

/** Records each SendMessageBatch request; accepts every entry. */
class FakeSqs implements SqsBatchSender {
  readonly requests: SendMessageBatchRequest[] = [];
  async send(command: SendMessageBatchCommand): Promise<SendMessageBatchResult> {
    this.requests.push(command.input);
    const entries = command.input.Entries ?? [];
    return {
      Successful: entries.map((e) => ({
        Id: e.Id,
        MessageId: `msg-${e.Id}`,
        MD5OfMessageBody: 'md5',
        ...(e.MessageGroupId === undefined ? {} : { SequenceNumber: '42' }),
      })),
      Failed: [],
    };
  }
}

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
