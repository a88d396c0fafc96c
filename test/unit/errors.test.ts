import { QueueDoesNotExist, RequestThrottled } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import {
  classifyError,
  type ErrorClassification,
  JobError,
  PermanentError,
  parseRetryAfterMs,
  TransientError,
} from '../../lib/core/errors.ts';

const NOW = Date.parse('2026-11-29T07:00:00.000Z');
const IN_90_SECONDS = new Date(NOW + 90_000).toUTCString(); // IMF-fixdate, e.g. "Sun, 29 Nov 2026 07:01:30 GMT"

/** An error shaped like an AWS SDK v3 service exception (`ServiceException` of @smithy). */
function awsError(
  name: string,
  fault: 'client' | 'server' | undefined,
  httpStatusCode: number | undefined,
  extra: Record<string, unknown> = {},
): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    $fault: fault,
    $metadata: { httpStatusCode, requestId: 'req-1', attempts: 3 },
    ...extra,
  });
}

function httpError(status: number, headers?: unknown): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status, headers });
}

function networkError(code: string): Error {
  return Object.assign(new Error(`${code} while talking`), { code });
}

class NotFoundError extends PermanentError {}
class RateLimitedError extends TransientError {}

type Row = readonly [string, unknown, ErrorClassification];

const transient = (reason: string, minDelayMs?: number): ErrorClassification =>
  minDelayMs === undefined ? { kind: 'transient', reason } : { kind: 'transient', reason, minDelayMs };
const permanent = (reason: string): ErrorClassification => ({ kind: 'permanent', reason });

const table: readonly Row[] = [
  // 1. the job decides
  ['PermanentError', new PermanentError('bad input'), permanent('PermanentError')],
  ['subclass of PermanentError', new NotFoundError('no booking b-1'), permanent('NotFoundError')],
  ['TransientError', new TransientError('try later'), transient('TransientError')],
  [
    'TransientError with retryAfterMs',
    new TransientError('later', { retryAfterMs: 5_000 }),
    transient('TransientError', 5_000),
  ],
  ['subclass of TransientError', new RateLimitedError('slow down'), transient('RateLimitedError')],
  [
    'PermanentError wins over an HTTP 503 it carries',
    Object.assign(new PermanentError('gave up'), { status: 503 }),
    permanent('PermanentError'),
  ],
  [
    'PermanentError as cause',
    new Error('wrapped', { cause: new PermanentError('bad') }),
    permanent('PermanentError'),
  ],
  ['plain JobError (no decision)', new JobError('hm'), transient('JobError')],
  // 2. aborts and timeouts
  ['AbortSignal.abort() reason', AbortSignal.abort().reason, transient('AbortError')],
  ['DOMException TimeoutError', new DOMException('timed out', 'TimeoutError'), transient('TimeoutError')],
  [
    'AbortError-named Error',
    Object.assign(new Error('aborted'), { name: 'AbortError' }),
    transient('AbortError'),
  ],
  // 3. AWS SDK v3
  [
    'AWS ThrottlingException (client fault)',
    awsError('ThrottlingException', 'client', 400),
    transient('ThrottlingException'),
  ],
  [
    'AWS TooManyRequestsException',
    awsError('TooManyRequestsException', 'client', 429),
    transient('TooManyRequestsException'),
  ],
  [
    'AWS ProvisionedThroughputExceededException',
    awsError('ProvisionedThroughputExceededException', 'client', 400),
    transient('ProvisionedThroughputExceededException'),
  ],
  ['AWS SQS RequestThrottled', awsError('RequestThrottled', 'client', 403), transient('RequestThrottled')],
  ['AWS SQS KmsThrottled', awsError('KmsThrottled', 'client', 400), transient('KmsThrottled')],
  [
    'AWS PriorRequestNotComplete',
    awsError('PriorRequestNotComplete', 'client', 400),
    transient('PriorRequestNotComplete'),
  ],
  [
    'AWS S3 RequestTimeout (HTTP 400)',
    awsError('RequestTimeout', 'client', 400),
    transient('RequestTimeout'),
  ],
  [
    'AWS $retryable client fault',
    awsError('SomethingOdd', 'client', 400, { $retryable: { throttling: false } }),
    transient('SomethingOdd'),
  ],
  ['AWS server fault 500', awsError('InternalError', 'server', 500), transient('InternalError')],
  ['AWS 503 without $fault', awsError('ServiceUnavailable', undefined, 503), transient('ServiceUnavailable')],
  ['AWS 429 without $fault', awsError('SlowDownPlease', undefined, 429), transient('SlowDownPlease')],
  [
    'AWS 503 with Retry-After on $response',
    awsError('ServiceUnavailable', 'server', 503, {
      $response: { statusCode: 503, headers: { 'retry-after': '7' } },
    }),
    transient('ServiceUnavailable', 7_000),
  ],
  [
    'AWS ValidationException',
    awsError('ValidationException', 'client', 400),
    permanent('ValidationException'),
  ],
  [
    'AWS ConditionalCheckFailedException',
    awsError('ConditionalCheckFailedException', 'client', 400),
    permanent('ConditionalCheckFailedException'),
  ],
  [
    'AWS AccessDeniedException',
    awsError('AccessDeniedException', 'client', 403),
    permanent('AccessDeniedException'),
  ],
  ['AWS 404 without $fault', awsError('NotFound', undefined, 404), permanent('HTTP 404')],
  [
    'real SDK exception RequestThrottled',
    new RequestThrottled({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } }),
    transient('RequestThrottled'),
  ],
  [
    'real SDK exception QueueDoesNotExist',
    new QueueDoesNotExist({ message: 'no such queue', $metadata: { httpStatusCode: 400 } }),
    permanent('QueueDoesNotExist'),
  ],
  // 4. HTTP responses
  ['HTTP 408', httpError(408), transient('HTTP 408')],
  ['HTTP 425', httpError(425), transient('HTTP 425')],
  ['HTTP 429', httpError(429), transient('HTTP 429')],
  ['HTTP 429 Retry-After seconds', httpError(429, { 'Retry-After': '120' }), transient('HTTP 429', 120_000)],
  [
    'HTTP 503 Retry-After HTTP-date',
    httpError(503, new Headers({ 'Retry-After': IN_90_SECONDS })),
    transient('HTTP 503', 90_000),
  ],
  [
    'HTTP 503 Retry-After date in the past',
    httpError(503, { 'retry-after': new Date(NOW - 60_000).toUTCString() }),
    transient('HTTP 503', 0),
  ],
  ['HTTP 503 unreadable Retry-After', httpError(503, { 'retry-after': 'soon' }), transient('HTTP 503')],
  ['HTTP 500', httpError(500), transient('HTTP 500')],
  [
    'HTTP 502 as statusCode',
    Object.assign(new Error('bad gateway'), { statusCode: 502 }),
    transient('HTTP 502'),
  ],
  ['HTTP 599', httpError(599), transient('HTTP 599')],
  [
    'axios-style response.status 429 with headers',
    Object.assign(new Error('Request failed'), {
      response: { status: 429, headers: { 'retry-after': '3' } },
    }),
    transient('HTTP 429', 3_000),
  ],
  [
    'got-style response.statusCode 503',
    Object.assign(new Error('Response code 503'), { response: { statusCode: 503 } }),
    transient('HTTP 503'),
  ],
  ['HTTP 400', httpError(400), permanent('HTTP 400')],
  ['HTTP 401', httpError(401), permanent('HTTP 401')],
  ['HTTP 403', httpError(403), permanent('HTTP 403')],
  ['HTTP 404', httpError(404), permanent('HTTP 404')],
  ['HTTP 409', httpError(409), permanent('HTTP 409')],
  ['HTTP 422', httpError(422), permanent('HTTP 422')],
  ['HTTP 400 ignores Retry-After', httpError(400, { 'retry-after': '10' }), permanent('HTTP 400')],
  // 5. Node and undici network errors
  ['ECONNRESET', networkError('ECONNRESET'), transient('ECONNRESET')],
  ['ECONNREFUSED', networkError('ECONNREFUSED'), transient('ECONNREFUSED')],
  ['ETIMEDOUT', networkError('ETIMEDOUT'), transient('ETIMEDOUT')],
  ['EPIPE', networkError('EPIPE'), transient('EPIPE')],
  ['EAI_AGAIN (DNS)', networkError('EAI_AGAIN'), transient('EAI_AGAIN')],
  ['ENOTFOUND (DNS)', networkError('ENOTFOUND'), transient('ENOTFOUND')],
  ['EHOSTUNREACH', networkError('EHOSTUNREACH'), transient('EHOSTUNREACH')],
  ['UND_ERR_CONNECT_TIMEOUT', networkError('UND_ERR_CONNECT_TIMEOUT'), transient('UND_ERR_CONNECT_TIMEOUT')],
  ['UND_ERR_HEADERS_TIMEOUT', networkError('UND_ERR_HEADERS_TIMEOUT'), transient('UND_ERR_HEADERS_TIMEOUT')],
  ['UND_ERR_SOCKET', networkError('UND_ERR_SOCKET'), transient('UND_ERR_SOCKET')],
  [
    "fetch's TypeError with a network cause",
    new TypeError('fetch failed', { cause: networkError('ECONNREFUSED') }),
    transient('ECONNREFUSED'),
  ],
  [
    'cause two levels deep',
    new Error('outer', { cause: new TypeError('fetch failed', { cause: networkError('UND_ERR_SOCKET') }) }),
    transient('UND_ERR_SOCKET'),
  ],
  ['HTTP 404 as cause', new Error('client call failed', { cause: httpError(404) }), permanent('HTTP 404')],
  // 6. unknown
  ["fetch's TypeError without a cause", new TypeError('fetch failed'), transient('TypeError')],
  ['plain Error', new Error('boom'), transient('Error')],
  ['RangeError', new RangeError('out of range'), transient('RangeError')],
  ['unknown Node code ENOENT', networkError('ENOENT'), transient('Error')],
  ['HTTP 302 (not an error status)', httpError(302), transient('Error')],
  ['a thrown string', 'boom', transient('unknown')],
  ['null', null, transient('unknown')],
  ['undefined', undefined, transient('unknown')],
  ['a number', 42, transient('unknown')],
  ['an object without name', { message: 'hm' }, transient('unknown')],
];

describe('classifyError', () => {
  it.each(table)('%s', (_name, error, expected) => {
    expect(classifyError(error, NOW)).toEqual(expected);
  });

  it('terminates on a cause cycle', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(classifyError(a, NOW)).toEqual(transient('Error'));
  });

  it('never throws, even on hostile objects', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('no');
        },
        has() {
          throw new Error('no');
        },
      },
    );
    expect(() => classifyError(hostile, NOW)).not.toThrow();
  });
});

describe('parseRetryAfterMs', () => {
  it.each([
    ['delta-seconds', '120', 120_000],
    ['zero', '0', 0],
    ['padded', ' 5 ', 5_000],
    ['a number', 2, 2_000],
    ['HTTP-date 90 s ahead', IN_90_SECONDS, 90_000],
    ['HTTP-date in the past', new Date(NOW - 5_000).toUTCString(), 0],
    ['empty', '', undefined],
    ['not a date', 'soon', undefined],
    ['negative number', -1, undefined],
    ['absent', undefined, undefined],
    ['NaN', Number.NaN, undefined],
  ] as const)('%s', (_name, value, expected) => {
    expect(parseRetryAfterMs(value, NOW)).toBe(expected);
  });
});

describe('JobError family', () => {
  it('sets name per subclass, keeps cause and context', () => {
    const cause = new Error('root');
    const error = new NotFoundError('no booking', { cause, context: { bookingId: 'b-1' } });
    expect(error).toBeInstanceOf(PermanentError);
    expect(error).toBeInstanceOf(JobError);
    expect(error.name).toBe('NotFoundError');
    expect(error.cause).toBe(cause);
    expect(error.context).toEqual({ bookingId: 'b-1' });
  });

  it('has no cause property when none was given and an empty context', () => {
    const error = new TransientError('x');
    expect('cause' in error).toBe(false);
    expect(error.context).toEqual({});
    expect(error.retryAfterMs).toBeUndefined();
  });
});
