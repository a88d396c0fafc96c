/**
 * Options of the DynamoDB idempotency store: their shapes, their defaults (defined here only)
 * and their validation.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { JobError } from '../../core/errors.ts';
import { shownValue } from '../../core/shown-value.ts';
import { MAX_STORABLE_RESULT_BYTES } from './record.ts';

/** Options of {@link DynamoIdempotencyStore}. Every default is in {@link IDEMPOTENCY_DEFAULTS}. */
export interface DynamoIdempotencyStoreOptions {
  /** The idempotency table (partition key `pk` String, TTL on `expiresAt`); env `JOBS_IDEMPOTENCY_TABLE`. Required. */
  readonly tableName: string;
  /** DynamoDB client. @default `new DynamoDBClient({})` (region and endpoint from the environment, `AWS_ENDPOINT_URL` honoured) */
  readonly client?: DynamoDBClient;
  /**
   * How long a record lives after its latest acquisition, in seconds: written as the TTL
   * attribute `expiresAt`. A redelivery later than this runs as a new job. Integer >= 1.
   * @default 604800 (7 days)
   */
  readonly recordTtlSeconds?: number;
  /**
   * Largest result (and `once` step value) stored whole, in UTF-8 bytes of its JSON text.
   * A larger one is not stored: the job still completes and duplicates get a marker
   * (`resultStored: false`). Integer 0 – 393,216 ({@link MAX_STORABLE_RESULT_BYTES}: DynamoDB's
   * 400 KB item limit less 16 KiB for the record's other attributes).
   * @default 65536 (64 KiB: a completion costs at most 64 write units)
   */
  readonly maxResultBytes?: number;
  /**
   * Upper bound of `retryAfterMs` of a `busy` outcome, in ms. A busy duplicate is told to come
   * back when the holder's lease ends (plus `leaseMarginMs`), at least 1 s and at most this.
   * Each retry is an SQS receive (not a job attempt): for jobs that run much longer than this,
   * raise it, or a concurrent duplicate may use up the queue's `maxReceiveCount`.
   * @default 30000 (the default job time limit)
   */
  readonly busyRetryAfterMs?: number;
  /**
   * Clock-skew allowance between workers, in ms: a lease counts as expired (and may be taken
   * over) only once `leaseExpiresAtMs + leaseMarginMs` has passed. @default 1000
   */
  readonly leaseMarginMs?: number;
  /**
   * How long the park of a FIFO message group (`onDeadLetter: 'park'`) lasts after its blocking
   * job was last dead-lettered, in seconds: written as `expiresAt` of the group record. Keep it at
   * least the DLQ's retention: a park that expires while its blocker is still in the DLQ lets the
   * group's later messages run before it. Integer >= 1.
   * @default 1209600 (14 days: the SQS maximum retention, the JobQueue DLQ's retention)
   */
  readonly groupParkTtlSeconds?: number;
  /** Entries of the in-memory cache of completed keys (LRU, per warm worker); 0 turns it off. @default 1000 */
  readonly completedCacheSize?: number;
  /** Clock, epoch ms. @default `Date.now` */
  readonly now?: () => number;
}

/** Defaults of {@link DynamoIdempotencyStoreOptions}; defined here only. */
export const IDEMPOTENCY_DEFAULTS = Object.freeze({
  recordTtlSeconds: 7 * 24 * 60 * 60,
  groupParkTtlSeconds: 14 * 24 * 60 * 60,
  maxResultBytes: 64 * 1024,
  busyRetryAfterMs: 30_000,
  leaseMarginMs: 1_000,
  completedCacheSize: 1_000,
});

/** The numeric options with every default filled in. */
export type ResolvedStoreLimits = { readonly [K in keyof typeof IDEMPOTENCY_DEFAULTS]: number };

/**
 * Fills the defaults of the numeric options and checks every option.
 * @throws {JobError} listing every invalid option.
 */
export function resolveStoreLimits(options: DynamoIdempotencyStoreOptions): ResolvedStoreLimits {
  const o = { ...IDEMPOTENCY_DEFAULTS, ...stripUndefined(options) };
  const problems: string[] = [];
  if (typeof o.tableName !== 'string' || o.tableName.length === 0) {
    problems.push('tableName must be a non-empty string');
  }
  if (!Number.isInteger(o.recordTtlSeconds) || o.recordTtlSeconds < 1) {
    problems.push(`recordTtlSeconds must be an integer >= 1, got ${shownValue(o.recordTtlSeconds)}`);
  }
  if (!Number.isInteger(o.groupParkTtlSeconds) || o.groupParkTtlSeconds < 1) {
    problems.push(`groupParkTtlSeconds must be an integer >= 1, got ${shownValue(o.groupParkTtlSeconds)}`);
  }
  if (
    !Number.isInteger(o.maxResultBytes) ||
    o.maxResultBytes < 0 ||
    o.maxResultBytes > MAX_STORABLE_RESULT_BYTES
  ) {
    problems.push(
      `maxResultBytes must be an integer from 0 to ${MAX_STORABLE_RESULT_BYTES} (DynamoDB's 400 KB item limit less a reserve), got ${shownValue(o.maxResultBytes)}`,
    );
  }
  if (!Number.isFinite(o.busyRetryAfterMs) || o.busyRetryAfterMs < 0) {
    problems.push(`busyRetryAfterMs must be a number >= 0, got ${shownValue(o.busyRetryAfterMs)}`);
  }
  if (!Number.isFinite(o.leaseMarginMs) || o.leaseMarginMs < 0) {
    problems.push(`leaseMarginMs must be a number >= 0, got ${shownValue(o.leaseMarginMs)}`);
  }
  if (!Number.isInteger(o.completedCacheSize) || o.completedCacheSize < 0) {
    problems.push(`completedCacheSize must be an integer >= 0, got ${shownValue(o.completedCacheSize)}`);
  }
  if (problems.length > 0) {
    throw new JobError(`invalid idempotency store options: ${problems.join('; ')}`);
  }
  return {
    recordTtlSeconds: o.recordTtlSeconds,
    groupParkTtlSeconds: o.groupParkTtlSeconds,
    maxResultBytes: o.maxResultBytes,
    busyRetryAfterMs: o.busyRetryAfterMs,
    leaseMarginMs: o.leaseMarginMs,
    completedCacheSize: o.completedCacheSize,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
