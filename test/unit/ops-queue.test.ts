/** Queue URL checks, redrive pair checks, SDK error translation and the CLI's client configuration. */
import { describe, expect, it, vi } from 'vitest';
import { opsClientConfig } from '../../lib/ops/client.ts';
import { InvalidQueueUrlError, translateSqsError } from '../../lib/ops/errors.ts';
import {
  checkRedrivePair,
  type QueueInfo,
  redrivePairWarnings,
  regionFromQueueUrl,
  validateQueueUrl,
} from '../../lib/ops/queue.ts';

describe('validateQueueUrl', () => {
  it('accepts AWS and emulator queue URLs and returns the queue name', () => {
    expect(validateQueueUrl('https://sqs.eu-west-1.amazonaws.com/123456789012/booking-dlq.fifo')).toBe(
      'booking-dlq.fifo',
    );
    expect(validateQueueUrl('http://localhost:4566/000000000000/jobs_dlq')).toBe('jobs_dlq');
    expect(validateQueueUrl('http://sqs.us-east-1.localhost:4566/000000000000/x')).toBe('x');
  });

  it.each([
    [undefined, /missing/],
    ['', /missing/],
    ['arn:aws:sqs:eu-west-1:123456789012:jobs-dlq', /is an ARN; pass the queue URL instead/],
    ['jobs-dlq', /is not a URL/],
    ['ftp://host/1/q', /must start with https:\/\//],
    ['https://sqs.eu-west-1.amazonaws.com/jobs-dlq', /path \/<account-id>\/<queue-name>/],
    ['https://sqs.eu-west-1.amazonaws.com/1/jobs dlq', /queue name "jobs%20dlq" is not valid/],
    [`https://sqs.eu-west-1.amazonaws.com/1/${'q'.repeat(81)}`, /is not valid/],
  ])('refuses %s', (url, message) => {
    expect(() => validateQueueUrl(url, '--dlq-url')).toThrow(InvalidQueueUrlError);
    expect(() => validateQueueUrl(url, '--dlq-url')).toThrow(message);
    expect(() => validateQueueUrl(url, '--dlq-url')).toThrow(/^--dlq-url: /);
  });
});

describe('regionFromQueueUrl', () => {
  it('reads the region of AWS, legacy and fauxqs hosts, and nothing from others', () => {
    expect(regionFromQueueUrl('https://sqs.eu-west-1.amazonaws.com/1/q')).toBe('eu-west-1');
    expect(regionFromQueueUrl('https://sqs.us-gov-west-1.amazonaws.com/1/q')).toBe('us-gov-west-1');
    expect(regionFromQueueUrl('https://ap-southeast-2.queue.amazonaws.com/1/q')).toBe('ap-southeast-2');
    expect(regionFromQueueUrl('http://sqs.us-east-1.localhost:4566/0/q')).toBe('us-east-1');
    expect(regionFromQueueUrl('http://localhost:4566/0/q')).toBeUndefined();
    expect(regionFromQueueUrl('not a url')).toBeUndefined();
  });
});

function queue(name: string, overrides: Partial<QueueInfo> = {}): QueueInfo {
  return {
    url: `https://sqs.eu-west-1.amazonaws.com/1/${name}`,
    name,
    arn: `arn:aws:sqs:eu-west-1:1:${name}`,
    fifo: name.endsWith('.fifo'),
    contentBasedDeduplication: false,
    visibilityTimeoutSeconds: 30,
    approximateVisible: 0,
    approximateNotVisible: 0,
    approximateDelayed: 0,
    redrivePolicy: undefined,
    ...overrides,
  };
}

describe('checkRedrivePair and redrivePairWarnings', () => {
  it('refuses FIFO to standard, standard to FIFO, and the DLQ onto itself', () => {
    expect(() => checkRedrivePair(queue('a-dlq.fifo'), queue('a'))).toThrow(
      /FIFO queue but the target a is a standard/,
    );
    expect(() => checkRedrivePair(queue('a-dlq'), queue('a.fifo'))).toThrow(
      /standard queue but the target a.fifo is a FIFO/,
    );
    expect(() => checkRedrivePair(queue('a-dlq'), queue('a-dlq'))).toThrow(/the target is the DLQ itself/);
    expect(() => checkRedrivePair(queue('a-dlq.fifo'), queue('a.fifo'))).not.toThrow();
  });

  it('warns when the target does not dead-letter to this DLQ', () => {
    const dlq = queue('a-dlq');
    const policy = (arn: string) => ({ redrivePolicy: { deadLetterTargetArn: arn, maxReceiveCount: 10 } });
    expect(redrivePairWarnings(dlq, queue('a', policy(dlq.arn as string)))).toEqual([]);
    expect(redrivePairWarnings(dlq, queue('b', policy('arn:aws:sqs:eu-west-1:1:b-dlq')))[0]).toMatch(
      /dead-letters to arn:aws:sqs:eu-west-1:1:b-dlq, not to this DLQ/,
    );
    expect(redrivePairWarnings(dlq, queue('c'))[0]).toMatch(/has no redrive policy/);
  });
});

describe('translateSqsError', () => {
  const url = 'https://sqs.eu-west-1.amazonaws.com/1/q';
  it.each([
    [
      { name: 'QueueDoesNotExist', message: 'The specified queue does not exist.' },
      'QueueNotFound',
      /queue does not exist/,
    ],
    [
      { name: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:4566' },
      'EndpointUnreachable',
      /cannot reach/,
    ],
    [
      { name: 'Error', code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND nope' },
      'EndpointUnreachable',
      /--endpoint/,
    ],
    [
      { name: 'TimeoutError', message: 'Connection timed out after 5000 ms' },
      'EndpointUnreachable',
      /cannot reach/,
    ],
    [
      { name: 'CredentialsProviderError', message: 'Could not load credentials from any providers' },
      'MissingCredentials',
      /AWS_PROFILE/,
    ],
    [{ name: 'Error', message: 'Region is missing' }, 'MissingRegion', /--region/],
    [
      { name: 'AccessDenied', message: 'not authorized to perform sqs:ReceiveMessage' },
      'AccessDenied',
      /was refused/,
    ],
    [
      { name: 'OverLimit', message: 'too many in flight' },
      'SqsRequestFailed',
      /ReceiveMessage on .* failed: OverLimit/,
    ],
  ])('%o → %s', (shape, code, message) => {
    const error = translateSqsError(Object.assign(new Error(shape.message), shape), 'ReceiveMessage', url);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(error.queueUrl).toBe(url);
    expect(error.cause).toBeDefined();
  });
});

describe('opsClientConfig', () => {
  const dlq = 'https://sqs.eu-west-1.amazonaws.com/1/q';

  it('takes the region from --region, then the queue URL, then the environment', () => {
    expect(
      opsClientConfig({ region: 'us-west-2', queueUrl: dlq, env: { AWS_REGION: 'ap-south-1' } }).region,
    ).toBe('us-west-2');
    expect(opsClientConfig({ queueUrl: dlq, env: { AWS_REGION: 'ap-south-1' } }).region).toBe('eu-west-1');
    expect(
      opsClientConfig({ queueUrl: 'http://localhost:4566/0/q', env: { AWS_REGION: 'ap-south-1' } }).region,
    ).toBe('ap-south-1');
    expect(
      opsClientConfig({ queueUrl: 'http://localhost:4566/0/q', env: { AWS_DEFAULT_REGION: 'sa-east-1' } })
        .region,
    ).toBe('sa-east-1');
    // A queue URL on this machine is an emulator's: its endpoint, and the emulators' default region.
    expect(opsClientConfig({ queueUrl: 'http://localhost:4566/0/q', env: {} }).region).toBe('us-east-1');
    expect(opsClientConfig({ queueUrl: 'http://10.0.0.5:4566/0/q', env: {} }).region).toBeUndefined();
    expect(
      opsClientConfig({ queueUrl: 'http://localhost:4566/0/q', endpoint: 'http://localhost:4566', env: {} })
        .region,
    ).toBe('us-east-1');
  });

  it('takes the endpoint from a queue URL on this machine when none is set, and from nothing else', () => {
    const endpointOf = (queueUrl: string, env: Record<string, string> = {}) =>
      opsClientConfig({ queueUrl, env }).endpoint;
    expect(endpointOf('http://127.0.0.1:9324/000000000000/work')).toBe('http://127.0.0.1:9324');
    expect(endpointOf('http://localhost:4566/000000000000/work')).toBe('http://localhost:4566');
    expect(endpointOf('http://[::1]:9324/000000000000/work')).toBe('http://[::1]:9324');
    // fauxqs's own URLs: a *.localhost name does not resolve everywhere.
    expect(endpointOf('http://sqs.us-east-1.localhost:4566/000000000000/work')).toBe('http://localhost:4566');
    expect(endpointOf('https://sqs.eu-west-1.amazonaws.com/123456789012/work')).toBeUndefined();
    expect(endpointOf('http://10.0.0.5:9324/000000000000/work')).toBeUndefined();
    // A configured endpoint wins.
    expect(endpointOf('http://127.0.0.1:9324/0/q', { AWS_ENDPOINT_URL_SQS: 'http://sqs:1' })).toBe(
      'http://sqs:1',
    );
  });

  it("prints each of the SDK's warnings once per client, however many requests repeat it", () => {
    const logger = opsClientConfig({ queueUrl: 'http://10.0.0.5:9324/0/q', env: {} }).logger;
    const printed: unknown[][] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args) => void printed.push(args));
    try {
      for (let i = 0; i < 3; i++)
        logger?.warn('QueueUrl=http://10.0.0.5:9324/0/q differs from SQSClient resolved endpoint');
      logger?.warn('another');
      logger?.debug('quiet');
    } finally {
      warn.mockRestore();
    }
    expect(printed).toEqual([
      ['QueueUrl=http://10.0.0.5:9324/0/q differs from SQSClient resolved endpoint'],
      ['another'],
    ]);
  });

  it('passes --profile to the SDK client as its profile, and sets none without it', () => {
    expect(opsClientConfig({ profile: 'ops-admin', queueUrl: dlq, env: {} }).profile).toBe('ops-admin');
    expect(opsClientConfig({ queueUrl: dlq, env: { AWS_PROFILE: 'x' } })).not.toHaveProperty('profile');
  });

  it('sets the endpoint from --endpoint, then AWS_ENDPOINT_URL_SQS, then AWS_ENDPOINT_URL, unless told to ignore them', () => {
    const env = { AWS_ENDPOINT_URL: 'http://shared:4566', AWS_ENDPOINT_URL_SQS: 'http://sqs:4566' };
    expect(opsClientConfig({ endpoint: 'http://flag:1', env }).endpoint).toBe('http://flag:1');
    expect(opsClientConfig({ env }).endpoint).toBe('http://sqs:4566');
    expect(opsClientConfig({ env: { AWS_ENDPOINT_URL: 'http://shared:4566' } }).endpoint).toBe(
      'http://shared:4566',
    );
    expect(
      opsClientConfig({ env: { ...env, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' } }).endpoint,
    ).toBeUndefined();
    expect(opsClientConfig({ env: {} }).endpoint).toBeUndefined();
  });

  it('refuses an endpoint that is not an http(s) URL, naming where it came from', () => {
    expect(() => opsClientConfig({ endpoint: 'localhost:4566', env: {} })).toThrow(
      /^--endpoint: "localhost:4566"/,
    );
    expect(() => opsClientConfig({ env: { AWS_ENDPOINT_URL: 'nope' } })).toThrow(/^AWS_ENDPOINT_URL: "nope"/);
  });
});
