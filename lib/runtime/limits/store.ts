/**
 * The flow-control store a worker uses: concurrency slots and rate buckets on one DynamoDB table.
 *
 * Why the idempotency table and not one of its own: the limits' records are small items keyed by
 * `pk` with a TTL, exactly the table's shape; every JobQueue with limits already has that table
 * and its role already holds the item actions the limits send (GetItem, PutItem, UpdateItem), so
 * no new resource, grant or variable is needed, and a rate limit named on several queues is shared
 * as long as they share the table (the sample and the recommended setup use one table per app).
 * The records carry their own prefix (`%limit#...`), never equal to a job, step or group key.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { JobError } from '../../core/errors.ts';
import { IDEMPOTENCY_DEFAULTS } from '../idempotency/options.ts';
import { RateBuckets } from './buckets.ts';
import { ConcurrencySlots } from './slots.ts';
import { LimitTable } from './table.ts';

/**
 * What a worker uses of a limit store (`createWorker({ limits })`): a {@link LimitStore} on
 * DynamoDB, or the test kit's `MemoryLimitStore` (sqs-jobs/testing), built on the same rules.
 */
export interface LimitStorePort {
  readonly slots: Pick<ConcurrencySlots, 'acquire'>;
  readonly buckets: Pick<RateBuckets, 'take' | 'throttled'>;
}

/**
 * What is wrong with `createWorker`'s `limits` option; empty when it is absent, `false`, or has
 * the methods a worker calls. Checked when the worker is made: a store without them would fail
 * every limited record with a TypeError, retried until the DLQ.
 */
export function limitStoreProblems(limits: unknown): string[] {
  if (limits === undefined || limits === false) return [];
  const store = limits as {
    slots?: { acquire?: unknown };
    buckets?: { take?: unknown; throttled?: unknown };
  };
  const missing = [
    typeof store?.slots?.acquire === 'function' ? undefined : 'slots.acquire',
    typeof store?.buckets?.take === 'function' ? undefined : 'buckets.take',
    typeof store?.buckets?.throttled === 'function' ? undefined : 'buckets.throttled',
  ].filter((name) => name !== undefined);
  if (typeof limits === 'object' && limits !== null && missing.length === 0) return [];
  const got =
    typeof limits !== 'object' || limits === null
      ? `got ${String(limits)}`
      : `it has no ${missing.join(', ')}`;
  return [
    `limits must be a limit store: new LimitStore({ tableName }) (sqs-jobs), MemoryLimitStore (sqs-jobs/testing) in a unit test, or false for none; ${got}. Leave it out to use a LimitStore on JOBS_IDEMPOTENCY_TABLE`,
  ];
}

/** Options of {@link LimitStore}. */
export interface LimitStoreOptions {
  /** The table (the idempotency table: partition key `pk` String, TTL on `expiresAt`). Required. */
  readonly tableName: string;
  /** DynamoDB client. @default `new DynamoDBClient({})` */
  readonly client?: DynamoDBClient;
  /** Clock, epoch ms. @default `Date.now` */
  readonly now?: () => number;
  /** Clock-skew allowance before a slot holder counts as expired, ms. @default the idempotency store's `leaseMarginMs` (1000) */
  readonly leaseMarginMs?: number;
}

/**
 * Concurrency slots and rate buckets on one table.
 *
 * @example
 * ```ts
 * import { LimitStore, defineRateLimit } from 'sqs-jobs';
 *
 * const partnerApi = defineRateLimit({ name: 'partner-api', perSecond: 20 });
 * const limits = new LimitStore({ tableName: 'jobs-idempotency' });
 * const taken = await limits.buckets.take(partnerApi, 'tenant-7'); // { granted: true } or { granted: false, waitMs }
 * ```
 */
export class LimitStore implements LimitStorePort {
  readonly tableName: string;
  readonly slots: ConcurrencySlots;
  readonly buckets: RateBuckets;

  /** @throws {JobError} when `tableName` is not a non-empty string. */
  constructor(options: LimitStoreOptions) {
    if (typeof options?.tableName !== 'string' || options.tableName === '') {
      throw new JobError('LimitStore needs { tableName }: the idempotency table (JOBS_IDEMPOTENCY_TABLE)');
    }
    const table = new LimitTable(options.client ?? new DynamoDBClient({}), options.tableName);
    const now = options.now ?? Date.now;
    this.tableName = options.tableName;
    this.slots = new ConcurrencySlots(
      table,
      now,
      options.leaseMarginMs ?? IDEMPOTENCY_DEFAULTS.leaseMarginMs,
    );
    this.buckets = new RateBuckets(table, now);
  }
}
