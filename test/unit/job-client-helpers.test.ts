import { SQSClient } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobClient, type JobClientOptions, type SqsBatchSender } from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { formatIssuePath } from '../../lib/client/prepare.ts';
import { clientRetryDelayMs, MAX_CLIENT_RETRY_DELAY_MS } from '../../lib/client/retry.ts';
import { chunkByCountAndBytes } from '../../lib/core/chunk.ts';
import { JobError } from '../../lib/core/errors.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from '../../lib/core/message-size.ts';
import { isFifoQueueUrl, queueUrlEnvName, queueUrlsFromEnv } from '../../lib/core/queue-urls.ts';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('queueUrlsFromEnv', () => {
  it('maps JOBS_QUEUE_URL_<NAME> back to lowercase-with-dashes logical names', () => {
    expect(
      queueUrlsFromEnv({
        JOBS_QUEUE_URL_BOOKING: 'https://sqs.eu-west-1.amazonaws.com/1/booking.fifo',
        JOBS_QUEUE_URL_BOOKING_RETRIES: 'https://sqs.eu-west-1.amazonaws.com/1/booking-retries',
        JOBS_QUEUE_URL_V2: 'https://sqs.eu-west-1.amazonaws.com/1/v2',
      }),
    ).toEqual({
      booking: 'https://sqs.eu-west-1.amazonaws.com/1/booking.fifo',
      'booking-retries': 'https://sqs.eu-west-1.amazonaws.com/1/booking-retries',
      v2: 'https://sqs.eu-west-1.amazonaws.com/1/v2',
    });
  });

  it("ignores the worker's own JOBS_QUEUE_URL, other variables, empty values and a bare prefix", () => {
    expect(
      queueUrlsFromEnv({
        JOBS_QUEUE_URL: 'https://sqs/own',
        JOBS_QUEUE_URL_: 'https://sqs/bare',
        JOBS_DLQ_URL: 'https://sqs/dlq',
        JOBS_QUEUE_URL_EMPTY: '',
        JOBS_QUEUE_URL_BLANK: '   ',
        JOBS_QUEUE_URL_UNSET: undefined,
        PATH: '/usr/bin',
      }),
    ).toEqual({});
  });

  it('reads process.env by default', () => {
    vi.stubEnv('JOBS_QUEUE_URL_PAYMENTS', 'https://sqs.eu-west-1.amazonaws.com/1/payments');
    expect(queueUrlsFromEnv().payments).toBe('https://sqs.eu-west-1.amazonaws.com/1/payments');
  });

  it('round-trips with queueUrlEnvName for names of lowercase letters, digits and dashes', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]+(-[a-z0-9]+)*$/), (name) => {
        expect(queueUrlsFromEnv({ [queueUrlEnvName(name)]: 'https://sqs/x' })).toEqual({
          [name]: 'https://sqs/x',
        });
      }),
    );
    expect(queueUrlEnvName('booking-retries')).toBe('JOBS_QUEUE_URL_BOOKING_RETRIES');
  });
});

describe('isFifoQueueUrl', () => {
  it.each([
    ['https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo', true],
    ['http://sqs.us-east-1.localhost:4566/000000000000/booking.fifo', true],
    ['https://sqs.eu-west-1.amazonaws.com/123456789012/payments', false],
    ['https://sqs.eu-west-1.amazonaws.com/123456789012/fifo', false],
  ])('%s → %s', (url, fifo) => {
    expect(isFifoQueueUrl(url)).toBe(fifo);
  });
});

describe('messageSizeBytes', () => {
  it.each([
    ['ASCII body', { MessageBody: 'hello' }, 5],
    ['multi-byte body', { MessageBody: 'é€😀' }, 2 + 3 + 4],
    ['empty', {}, 0],
    [
      'string attribute: name + type + value',
      { MessageBody: 'x', MessageAttributes: { JobType: { DataType: 'String', StringValue: 'a.b' } } },
      1 + 7 + 6 + 3,
    ],
    [
      'number and binary attributes',
      {
        MessageBody: '',
        MessageAttributes: {
          Attempts: { DataType: 'Number', StringValue: '12' },
          Blob: { DataType: 'Binary', BinaryValue: new Uint8Array(10) },
        },
      },
      8 + 6 + 2 + (4 + 6 + 10),
    ],
  ])('%s', (_name, message, bytes) => {
    expect(messageSizeBytes(message)).toBe(bytes);
  });
});

describe('chunkByCountAndBytes', () => {
  const size = (n: number): number => n;

  it.each([
    ['25 small items by 10', Array(25).fill(1), { maxEntries: 10, maxBytes: 1_000 }, [10, 10, 5]],
    ['by bytes', [400, 400, 400, 400], { maxEntries: 10, maxBytes: 1_000 }, [2, 2]],
    ['up to exactly the byte limit', [500, 500, 1], { maxEntries: 10, maxBytes: 1_000 }, [2, 1]],
    ['an item over the limit alone', [10, 2_000, 10], { maxEntries: 10, maxBytes: 1_000 }, [1, 1, 1]],
    ['nothing', [], { maxEntries: 10, maxBytes: 1_000 }, []],
  ])('%s', (_name, items, limits, lengths) => {
    expect(chunkByCountAndBytes(items as number[], size, limits).map((c) => c.length)).toEqual(lengths);
  });

  it('keeps order and every item; each chunk within the limits unless one item alone is too big', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2_000 }), { maxLength: 80 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 3_000 }),
        (items, maxEntries, maxBytes) => {
          const chunks = chunkByCountAndBytes(items, size, { maxEntries, maxBytes });
          expect(chunks.flat()).toEqual(items);
          for (const chunk of chunks) {
            expect(chunk.length).toBeGreaterThan(0);
            expect(chunk.length).toBeLessThanOrEqual(maxEntries);
            if (chunk.length > 1) expect(chunk.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(maxBytes);
          }
        },
      ),
    );
  });
});

describe('clientRetryDelayMs', () => {
  it('is whole milliseconds in [0, min(20 s, base * 2^(n-1))]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        fc.double({ min: 0, max: 1 - Number.EPSILON, noNaN: true }),
        (attempt, baseDelayMs, r) => {
          const delay = clientRetryDelayMs(attempt, baseDelayMs, 0, () => r);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(
            Math.min(MAX_CLIENT_RETRY_DELAY_MS, baseDelayMs * 2 ** (attempt - 1)),
          );
        },
      ),
    );
  });

  it('honours a Retry-After floor, but never waits more than 20 s', () => {
    expect(clientRetryDelayMs(1, 100, 1_500, () => 0)).toBe(1_500);
    expect(clientRetryDelayMs(1, 100, 60_000, () => 0)).toBe(MAX_CLIENT_RETRY_DELAY_MS);
  });

  it('spreads delays over the whole range (full jitter)', () => {
    let seed = 1;
    const random = (): number => {
      seed = (seed * 16_807) % 2_147_483_647;
      return (seed - 1) / 2_147_483_646;
    };
    const delays = Array.from({ length: 10_000 }, () => clientRetryDelayMs(3, 100, 0, random)); // bound 400 ms
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
    expect(mean).toBeGreaterThan(190);
    expect(mean).toBeLessThan(210);
    expect(Math.min(...delays)).toBeLessThan(5);
    expect(Math.max(...delays)).toBeGreaterThan(395);
    expect(delays.filter((d) => d === 400).length / delays.length).toBeLessThan(0.01);
  });
});

describe('formatIssuePath', () => {
  it.each([
    [undefined, 'data'],
    [[], 'data'],
    [['userId'], 'data.userId'],
    [['items', 2, 'sku'], 'data.items[2].sku'],
    [[{ key: 'items' }, { key: 0 }], 'data.items[0]'],
    [['with space'], 'data["with space"]'],
  ] as const)('%j → %s', (path, expected) => {
    expect(formatIssuePath(path)).toBe(expected);
  });
});

describe('JobClient options', () => {
  const valid: JobClientOptions = {
    source: '/svc',
    queueUrls: { a: 'https://sqs.eu-west-1.amazonaws.com/1/a' },
  };

  it('accepts an SQSClient of @aws-sdk/client-sqs as its sqs', () => {
    const sqs: SqsBatchSender = new SQSClient({ region: 'eu-west-1' });
    expect(() => new JobClient({ ...valid, sqs })).not.toThrow();
  });

  it('lists every bad option in one JobClientError', () => {
    let caught: unknown;
    try {
      new JobClient({
        source: '',
        queueUrls: { a: 'not a url' },
        payloadWarnBytes: -1,
        maxMessageBytes: 2_000_000,
        retry: { maxAttempts: 0, baseDelayMs: -5 },
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(JobClientError);
    expect(caught).toBeInstanceOf(JobError);
    const error = caught as JobClientError;
    expect(error.code).toBe('InvalidOptions');
    expect(error.message).toBe(
      'invalid JobClient options: source must be a non-empty string; ' +
        'queueUrls.a must be an http(s) queue URL, got "not a url"; ' +
        'payloadWarnBytes must be a number >= 0, got -1; ' +
        `maxMessageBytes must be an integer from 1 to ${SQS_MAX_MESSAGE_BYTES} (1 MiB, the SQS limit), got 2000000; ` +
        'retry.maxAttempts must be an integer from 1 to 20, got 0; ' +
        'retry.baseDelayMs must be a finite number >= 0, got -5',
    );
  });

  it('defaults to 1 MiB messages: a 1,048,576-byte limit is valid, one more is not', () => {
    expect(() => new JobClient({ ...valid, maxMessageBytes: SQS_MAX_MESSAGE_BYTES })).not.toThrow();
    expect(() => new JobClient({ ...valid, maxMessageBytes: SQS_MAX_MESSAGE_BYTES + 1 })).toThrow(
      JobClientError,
    );
  });
});
