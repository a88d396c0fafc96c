/**
 * Job errors and their classification into transient (retry with backoff) and permanent
 * (straight to the dead-letter queue).
 *
 * Rules follow DESIGN.md "Transient failures ... Permanent failures" and
 * RFC 9110 §15 (status codes) / §10.2.3 (Retry-After).
 */
import { findInChain } from './error-chain.ts';
import { isTransientNetworkCode } from './network-errors.ts';

/** Base class of every error this library throws or classifies; `name` is set per subclass. */
export class JobError extends Error {
  /** Extra facts for logs and DLQ evidence (ids, keys, field names). */
  readonly context: Readonly<Record<string, unknown>>;

  constructor(message: string, options?: { cause?: unknown; context?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.context = options?.context ?? {};
  }
}

/**
 * A failure that will fail again on every retry (bad input, 4xx, record not found).
 * The record goes to the dead-letter queue at once with its evidence; it is never retried.
 */
export class PermanentError extends JobError {}

/**
 * A failure that may pass on a later attempt (timeout, throttling, 429/5xx, connection reset).
 * The record is retried after an exponential backoff with full jitter, bounded by `maxAttempts`.
 */
export class TransientError extends JobError {
  /** Minimum delay before the retry, in milliseconds (e.g. from a `Retry-After` header). */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options?: { cause?: unknown; context?: Record<string, unknown>; retryAfterMs?: number },
  ) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** Outcome of {@link classifyError}. */
export interface ErrorClassification {
  /** `transient`: retry with backoff; `permanent`: dead-letter now. */
  readonly kind: 'transient' | 'permanent';
  /** Short machine-readable reason, used to group dead-lettered jobs by cause. */
  readonly reason: string;
  /** Minimum delay before a retry in milliseconds, when the failure said so (Retry-After). */
  readonly minDelayMs?: number;
}

const TRANSIENT_HTTP = new Set([408, 425, 429]);

/**
 * AWS error names (SDK v3 `name` / `Code`) that a retry can outlive although the service calls
 * them client faults: the SDK's own throttling and transient lists (@smithy/core
 * service-error-classification), SQS `KmsThrottled`, and request timeouts that S3 answers with
 * HTTP 400.
 */
const AWS_TRANSIENT_NAMES = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'KmsThrottled',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'RequestTimeout',
  'RequestTimeoutException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

const ABORT_NAMES = new Set(['AbortError', 'TimeoutError']);

type Loose = Record<string, unknown>;

function asRecord(value: unknown): Loose | undefined {
  return typeof value === 'object' && value !== null ? (value as Loose) : undefined;
}

/**
 * Parses an HTTP `Retry-After` value (delta-seconds or HTTP-date, RFC 9110 §10.2.3)
 * into milliseconds from `nowMs`. Returns undefined when absent or unreadable.
 */
export function parseRetryAfterMs(value: unknown, nowMs: number = Date.now()): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value * 1000;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Reads a header from a Fetch `Headers`, a plain object or a Map-like. */
function readHeader(headers: unknown, name: string): unknown {
  const h = asRecord(headers);
  if (!h) return undefined;
  if (typeof h.get === 'function') return (h.get as (n: string) => unknown).call(headers, name);
  const key = Object.keys(h).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : h[key];
}

/** Finds an HTTP status on the error shapes of fetch wrappers, axios, got and the AWS SDK. */
function httpStatusOf(err: Loose): { status: number; headers: unknown } | undefined {
  const response = asRecord(err.response);
  const metadata = asRecord(err.$metadata);
  const candidates: Array<[unknown, unknown]> = [
    [err.status, err.headers],
    [err.statusCode, err.headers],
    [response?.status, response?.headers],
    [response?.statusCode, response?.headers],
    [metadata?.httpStatusCode, asRecord(err.$response)?.headers],
  ];
  for (const [status, headers] of candidates) {
    if (typeof status === 'number' && status >= 100 && status <= 599) return { status, headers };
  }
  return undefined;
}

/**
 * Decides whether a failure is worth retrying.
 *
 * Order of rules (the first that matches decides):
 * 1. {@link PermanentError} / {@link TransientError} thrown by a job decide directly.
 * 2. Aborts and timeouts (`AbortError`, `TimeoutError`) are transient.
 * 3. AWS SDK v3 errors: `$retryable`, throttling and timeout names (the SDK's lists plus SQS
 *    `KmsThrottled`), 408/425/429 and 5xx (`$fault: 'server'`) are transient, with a
 *    `Retry-After` of the raw response as `minDelayMs`; other client faults are permanent.
 * 4. HTTP responses: 408, 425, 429 and 5xx are transient (a `Retry-After` header sets
 *    `minDelayMs`); other 4xx are permanent.
 * 5. Node and undici network errors (`code` such as ECONNRESET, ETIMEDOUT, EAI_AGAIN; the list
 *    is network-errors.ts) are transient.
 * 6. Anything unknown is transient, bounded by the job's `maxAttempts`.
 *
 * Rules 1–5 apply to the error, then to its `cause`, down to 5 levels (error-chain.ts): fetch
 * wraps network failures as `TypeError('fetch failed', { cause })`.
 *
 * Never throws: an error whose inspection throws is `{ kind: 'transient', reason: 'unknown' }`.
 */
export function classifyError(error: unknown, nowMs: number = Date.now()): ErrorClassification {
  try {
    const known = findInChain(error, (node) => classifyKnown(node, nowMs), CAUSE_WALK);
    if (known) return known;
    const name = asRecord(error)?.name;
    return { kind: 'transient', reason: typeof name === 'string' ? name : 'unknown' };
  } catch {
    // A getter or proxy on the error threw while being inspected: nothing is known about it.
    return { kind: 'transient', reason: 'unknown' };
  }
}

/** A transient classification with the `Retry-After` of `headers` as `minDelayMs`, if any. */
function transientWithRetryAfter(reason: string, headers: unknown, nowMs: number): ErrorClassification {
  const minDelayMs = parseRetryAfterMs(readHeader(headers, 'retry-after'), nowMs);
  return minDelayMs === undefined ? { kind: 'transient', reason } : { kind: 'transient', reason, minDelayMs };
}

/** How deep {@link classifyError} looks into `cause` (no `AggregateError` branches). */
const CAUSE_WALK = { maxDepth: 5 } as const;

/** Applies rules 1–5 to one error of the chain; undefined when none matches. */
function classifyKnown(error: object, nowMs: number): ErrorClassification | undefined {
  if (error instanceof PermanentError) return { kind: 'permanent', reason: error.name };
  if (error instanceof TransientError) {
    return error.retryAfterMs === undefined
      ? { kind: 'transient', reason: error.name }
      : { kind: 'transient', reason: error.name, minDelayMs: error.retryAfterMs };
  }
  const err = error as Loose;
  const name = typeof err.name === 'string' ? err.name : 'Error';

  if (ABORT_NAMES.has(name)) return { kind: 'transient', reason: name };

  const isAws = '$fault' in err || '$metadata' in err;
  if (isAws) {
    const status = asRecord(err.$metadata)?.httpStatusCode;
    const headers = asRecord(err.$response)?.headers;
    if (
      err.$retryable ||
      AWS_TRANSIENT_NAMES.has(name) ||
      err.$fault === 'server' ||
      (typeof status === 'number' && (status >= 500 || TRANSIENT_HTTP.has(status)))
    ) {
      return transientWithRetryAfter(name, headers, nowMs);
    }
    if (err.$fault === 'client') return { kind: 'permanent', reason: name };
  }

  const http = httpStatusOf(err);
  if (http) {
    const reason = `HTTP ${http.status}`;
    if (http.status >= 500 || TRANSIENT_HTTP.has(http.status)) {
      return transientWithRetryAfter(reason, http.headers, nowMs);
    }
    if (http.status >= 400) return { kind: 'permanent', reason };
  }

  if (isTransientNetworkCode(err.code)) return { kind: 'transient', reason: err.code };
  return undefined;
}
