/**
 * The DynamoDB idempotency store: fenced leases taken by conditional writes, stored results,
 * step-level `once`.
 *
 * DynamoDB rules this code relies on (developer guide / API reference pages):
 * - Conditional writes (WorkingWithItems.html#WorkingWithItems.ConditionalUpdate): the condition
 *   is evaluated atomically against the item as it is at write time; a false condition fails the
 *   write with `ConditionalCheckFailedException` and changes nothing.
 * - `ReturnValuesOnConditionCheckFailure: ALL_OLD` (API_PutItem.html, API_UpdateItem.html): the
 *   item that failed the condition comes back on the exception as `Item`, without a read. Some
 *   emulators (dynalite 4) leave it out: the store then reads the item with a strongly
 *   consistent `GetItem` (API_GetItem.html, `ConsistentRead: true`).
 * - Reserved words (ReservedWords.html): `status`, `result`, `value` ... are always aliased.
 * - Item size limit 400 KB, names and values (Constraints.html#limits-items).
 * - TTL deletes lazily; expired items still show in reads (ttl-expired-items.html).
 */
import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { JobError, type PermanentError, type TransientError } from '../errors.ts';
import type { LeaseExpiredPolicy } from '../job.ts';
import { CompletedKeyCache } from './cache.ts';
import { IdempotencyStoreError, PayloadMismatchError, StepValueNotStoredError } from './errors.ts';
import type { BeginOutcome, BeginRequest, IdempotencyGuard, Lease, LeaseWrite } from './guard.ts';
import { deriveIdempotencyKey, jobRecordKey, stepRecordKey } from './keys.ts';
import {
  BOOL,
  DYNAMODB_MAX_ITEM_BYTES,
  estimateItemBytes,
  isExpired,
  type JobRecord,
  type JobRecordStatus,
  jobRecordToItem,
  MAX_ERROR_BYTES,
  MAX_STORABLE_RESULT_BYTES,
  N,
  type OmittedReason,
  parseJobRecord,
  parseStepRecord,
  S,
  type StepRecord,
  serialize,
  stepRecordToItem,
  truncateUtf8,
} from './record.ts';

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
  /** Entries of the in-memory cache of completed keys (LRU, per warm worker); 0 turns it off. @default 1000 */
  readonly completedCacheSize?: number;
  /** Clock, epoch ms. @default `Date.now` */
  readonly now?: () => number;
}

/** Defaults of {@link DynamoIdempotencyStoreOptions}; defined here only. */
export const IDEMPOTENCY_DEFAULTS = Object.freeze({
  recordTtlSeconds: 7 * 24 * 60 * 60,
  maxResultBytes: 64 * 1024,
  busyRetryAfterMs: 30_000,
  leaseMarginMs: 1_000,
  completedCacheSize: 1_000,
});

/** Rounds of the acquire loop (each a conditional write) before a contended key answers `busy`. */
const MAX_ACQUIRE_ROUNDS = 4;
/** Shortest `retryAfterMs` of a `busy` outcome, in ms (SQS visibility has 1-second resolution). */
const MIN_BUSY_RETRY_MS = 1_000;
const POLICIES: ReadonlySet<string> = new Set<LeaseExpiredPolicy>(['rerun', 'dead-letter']);

/** How the next acquisition write is built: from nothing, or from the old record just read. */
type AcquirePlan =
  | { readonly kind: 'fresh' }
  | { readonly kind: 'rerun' | 'redrive' | 'dead-letter'; readonly old: JobRecord };

/** Result of a conditional write: `old` is the item that failed the condition, when known. */
type WriteResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly old: Record<string, AttributeValue> | undefined };

/**
 * Builds condition and update expressions with aliased names (`#attr`) and numbered values
 * (`:v0`...), so reserved words are safe and only used names and values are sent (DynamoDB
 * rejects unused ones).
 */
class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, AttributeValue> = {};
  #next = 0;
  /** Alias of an attribute name. */
  n(attribute: string): string {
    const token = `#${attribute}`;
    this.names[token] = attribute;
    return token;
  }
  /** Placeholder of a value. */
  v(value: AttributeValue): string {
    const token = `:v${this.#next++}`;
    this.values[token] = value;
    return token;
  }
  params(): {
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues?: Record<string, AttributeValue>;
  } {
    return Object.keys(this.values).length === 0
      ? { ExpressionAttributeNames: this.names }
      : { ExpressionAttributeNames: this.names, ExpressionAttributeValues: this.values };
  }
}

function isConditionFailure(err: unknown): err is { Item?: Record<string, AttributeValue> } {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'ConditionalCheckFailedException'
  );
}

/** `Name: message` of anything thrown. */
function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

function parseJson(json: string | undefined): unknown {
  return json === undefined ? undefined : JSON.parse(json);
}

/**
 * {@link IdempotencyGuard} on a DynamoDB table.
 *
 * Per job in the common case: first delivery = 1 PutItem (acquire) + 1 UpdateItem (complete);
 * a duplicate after completion = 1 failed conditional PutItem that returns the stored record
 * (`ALL_OLD`), or nothing at all when this warm worker cached the key; a retry after a
 * transient failure = 1 UpdateItem (release) on the failed run, then a failed PutItem + a
 * takeover PutItem + the completing UpdateItem. A failed conditional write still consumes
 * write units (sized by the larger of the old and new item). Each `once` step costs one
 * consistent GetItem, plus one PutItem when it runs.
 *
 * @example
 * const store = new DynamoIdempotencyStore({ tableName: process.env.JOBS_IDEMPOTENCY_TABLE! });
 * const outcome = await store.begin({ jobType, key, payloadHash, leaseExpiresAtMs, onLeaseExpired: 'rerun', messageId });
 */
export class DynamoIdempotencyStore implements IdempotencyGuard {
  /** The table written to. */
  readonly tableName: string;
  readonly #client: DynamoDBClient;
  readonly #ttlSeconds: number;
  readonly #maxResultBytes: number;
  readonly #busyRetryAfterMs: number;
  readonly #leaseMarginMs: number;
  readonly #now: () => number;
  readonly #cache: CompletedKeyCache;

  /** @throws {JobError} listing every invalid option. */
  constructor(options: DynamoIdempotencyStoreOptions) {
    const o = { ...IDEMPOTENCY_DEFAULTS, ...stripUndefined(options) };
    const problems: string[] = [];
    if (typeof o.tableName !== 'string' || o.tableName.length === 0) {
      problems.push('tableName must be a non-empty string');
    }
    if (!Number.isInteger(o.recordTtlSeconds) || o.recordTtlSeconds < 1) {
      problems.push(`recordTtlSeconds must be an integer >= 1, got ${o.recordTtlSeconds}`);
    }
    if (
      !Number.isInteger(o.maxResultBytes) ||
      o.maxResultBytes < 0 ||
      o.maxResultBytes > MAX_STORABLE_RESULT_BYTES
    ) {
      problems.push(
        `maxResultBytes must be an integer from 0 to ${MAX_STORABLE_RESULT_BYTES} (DynamoDB's 400 KB item limit less a reserve), got ${o.maxResultBytes}`,
      );
    }
    if (!Number.isFinite(o.busyRetryAfterMs) || o.busyRetryAfterMs < 0) {
      problems.push(`busyRetryAfterMs must be a number >= 0, got ${o.busyRetryAfterMs}`);
    }
    if (!Number.isFinite(o.leaseMarginMs) || o.leaseMarginMs < 0) {
      problems.push(`leaseMarginMs must be a number >= 0, got ${o.leaseMarginMs}`);
    }
    if (!Number.isInteger(o.completedCacheSize) || o.completedCacheSize < 0) {
      problems.push(`completedCacheSize must be an integer >= 0, got ${o.completedCacheSize}`);
    }
    if (problems.length > 0) {
      throw new JobError(`invalid idempotency store options: ${problems.join('; ')}`);
    }
    this.tableName = options.tableName;
    this.#client = options.client ?? new DynamoDBClient({});
    this.#ttlSeconds = o.recordTtlSeconds;
    this.#maxResultBytes = o.maxResultBytes;
    this.#busyRetryAfterMs = o.busyRetryAfterMs;
    this.#leaseMarginMs = o.leaseMarginMs;
    this.#now = options.now ?? Date.now;
    this.#cache = new CompletedKeyCache(o.completedCacheSize);
  }

  /**
   * Takes the lease for a key, or says why not (see {@link BeginOutcome}).
   *
   * 1. A completed key cached by this worker answers `completed` without a call.
   * 2. One conditional PutItem for an absent (or TTL-expired) key; success = `acquired`,
   *    attempt 1.
   * 3. On a failed condition the existing record (from `ALL_OLD`, else a consistent GetItem)
   *    decides: different `payloadHash` → throws; COMPLETED → `completed` with the stored
   *    result; live IN_PROGRESS → `busy`; IN_PROGRESS with an expired lease → policy `rerun`:
   *    taken over (attempt + 1), `dead-letter`: taken over without a run, `lease-expired`;
   *    RELEASED → taken over (attempt + 1), or `lease-expired` when its run was interrupted and
   *    the policy is `dead-letter`; FAILED → taken over by the redrive (a new cycle: attempt 1).
   *    A takeover is a PutItem conditioned on the record being unchanged since it was read.
   * 4. When takeovers keep losing races, answers `busy`.
   *
   * @throws {PayloadMismatchError} (a {@link PermanentError}) when the key holds a different payload hash.
   * @throws {IdempotencyStoreError} (a {@link TransientError}) when DynamoDB fails (throttling,
   *   network, 5xx, missing table or permissions) or a record is malformed; `cause` is the SDK error.
   * @throws {JobError} when the request is invalid (empty key, non-finite `leaseExpiresAtMs`...).
   */
  async begin(request: BeginRequest): Promise<BeginOutcome> {
    checkRequest(request);
    const pk = jobRecordKey(request.jobType, request.key);
    const cached = this.#cache.get(pk, this.#now());
    if (cached) {
      if (cached.payloadHash !== request.payloadHash) throw mismatch(request, pk, cached.payloadHash);
      return { status: 'completed', result: parseJson(cached.resultJson), resultStored: cached.resultStored };
    }

    let plan: AcquirePlan = { kind: 'fresh' };
    for (let round = 0; round < MAX_ACQUIRE_ROUNDS; round++) {
      const now = this.#now();
      const { record, expr, condition } = this.#acquisition(plan, request, pk, now);
      const written = await this.#put('acquire', pk, jobRecordToItem(record), expr, condition);
      if (written.ok) {
        const lease = new DynamoLease(record, request.key, this.#leaseOps);
        return plan.kind === 'dead-letter'
          ? { status: 'lease-expired', lease, previousAttempt: plan.old.attempt }
          : { status: 'acquired', lease };
      }
      const oldItem = written.old ?? (await this.#get('acquire', pk));
      if (!oldItem) {
        plan = { kind: 'fresh' }; // deleted (TTL) between the write and the read
        continue;
      }
      const old = parseJobRecord(oldItem);
      const decided = this.#decide(old, request, pk, this.#now());
      if ('status' in decided) return decided;
      plan = decided;
    }
    return { status: 'busy', retryAfterMs: this.#busyRetryAfterMs };
  }

  /**
   * Reads the job record of a key with a strongly consistent GetItem (for operators and tests).
   * Returns it even when its TTL has passed (check `expiresAt`).
   * @throws {IdempotencyStoreError} when DynamoDB fails or the record is malformed.
   */
  async readRecord(jobType: string, key: string): Promise<JobRecord | undefined> {
    const pk = jobRecordKey(jobType, key);
    const item = await this.#get('read', pk);
    return item ? parseJobRecord(item) : undefined;
  }

  /** Forgets every key cached by this worker (tests, or after an operator cleared records). */
  clearCache(): void {
    this.#cache.clear();
  }

  /** What an existing record means for this request: an outcome, or the next takeover to try. */
  #decide(old: JobRecord, request: BeginRequest, pk: string, now: number): BeginOutcome | AcquirePlan {
    if (isExpired(old, now)) return { kind: 'fresh' };
    if (old.payloadHash !== request.payloadHash) throw mismatch(request, pk, old.payloadHash);
    switch (old.status) {
      case 'COMPLETED': {
        const resultStored = old.resultStored === true;
        const resultJson = resultStored ? old.result : undefined;
        this.#cache.set(pk, {
          payloadHash: old.payloadHash,
          resultJson,
          resultStored,
          expiresAt: old.expiresAt,
        });
        return { status: 'completed', result: parseJson(resultJson), resultStored };
      }
      case 'IN_PROGRESS': {
        const leaseLeftMs = old.leaseExpiresAtMs + this.#leaseMarginMs - now;
        if (leaseLeftMs >= 0) {
          const floor = Math.min(MIN_BUSY_RETRY_MS, this.#busyRetryAfterMs);
          return {
            status: 'busy',
            retryAfterMs: Math.min(this.#busyRetryAfterMs, Math.max(floor, leaseLeftMs)),
          };
        }
        return { kind: request.onLeaseExpired === 'dead-letter' ? 'dead-letter' : 'rerun', old };
      }
      case 'RELEASED':
        return {
          kind:
            old.interruptedAtMs !== undefined && request.onLeaseExpired === 'dead-letter'
              ? 'dead-letter'
              : 'rerun',
          old,
        };
      case 'FAILED':
        // The same SQS message again (its acknowledgement was lost after the DLQ send) is not a
        // redrive: a redriven message gets a new messageId. Running it would dead-letter it twice.
        if (old.messageId === request.messageId) return { status: 'dead-lettered' };
        return { kind: 'redrive', old };
    }
  }

  /** The record and condition of an acquisition write. */
  #acquisition(
    plan: AcquirePlan,
    request: BeginRequest,
    pk: string,
    now: number,
  ): { record: JobRecord; expr: Expr; condition: string } {
    const nowS = Math.floor(now / 1000);
    const base = {
      pk,
      recordType: 'job' as const,
      status: 'IN_PROGRESS' as const,
      leaseToken: randomUUID(),
      leaseExpiresAtMs: request.leaseExpiresAtMs,
      expiresAt: nowS + this.#ttlSeconds,
      payloadHash: request.payloadHash,
      jobType: request.jobType,
      messageId: request.messageId,
      acquiredAtMs: now,
      updatedAtMs: now,
      endedAtMs: undefined,
      completedAtMs: undefined,
      resultStored: undefined,
      result: undefined,
      resultBytes: undefined,
      resultOmittedReason: undefined,
    };
    const expr = new Expr();

    if (plan.kind === 'fresh') {
      // Race prevented: two first deliveries of a key (concurrent duplicates, or a producer that
      // sent twice) both find no record; DynamoDB evaluates this condition atomically, so only
      // one put succeeds and the other reads the winner's record. A record whose TTL has passed
      // but that DynamoDB has not deleted yet counts as absent (`expiresAt <= now`, seconds).
      const condition = `attribute_not_exists(${expr.n('pk')}) OR ${expr.n('expiresAt')} <= ${expr.v(N(nowS))}`;
      const record: JobRecord = {
        ...base,
        attempt: 1,
        generation: randomUUID(),
        redriveCount: 0,
        createdAtMs: now,
        lastError: undefined,
        lastErrorKind: undefined,
        firstFailureAtMs: undefined,
        lastFailureAtMs: undefined,
        interruptedAtMs: undefined,
      };
      return { record, expr, condition };
    }

    const { old } = plan;
    // An IN_PROGRESS record reached here because its lease expired without completion: the
    // interrupted run counts as a failure in the evidence.
    const interrupted = old.status === 'IN_PROGRESS';
    const failure = interrupted
      ? {
          lastError: `LeaseExpired: attempt ${old.attempt} neither completed nor released before its lease expired at ${new Date(old.leaseExpiresAtMs).toISOString()}`,
          lastErrorKind: 'lease-expired',
          firstFailureAtMs: old.firstFailureAtMs ?? old.leaseExpiresAtMs,
          lastFailureAtMs: old.leaseExpiresAtMs,
        }
      : {
          lastError: old.lastError,
          lastErrorKind: old.lastErrorKind,
          firstFailureAtMs: old.firstFailureAtMs,
          lastFailureAtMs: old.lastFailureAtMs,
        };
    const carried = {
      generation: old.generation,
      createdAtMs: old.createdAtMs,
      redriveCount: old.redriveCount,
    };
    let record: JobRecord;
    if (plan.kind === 'rerun') {
      record = { ...base, ...carried, ...failure, attempt: old.attempt + 1, interruptedAtMs: undefined };
    } else if (plan.kind === 'dead-letter') {
      // No run happens: the attempt count stays; the mark survives a transient release, so the
      // next delivery is dead-lettered too until a permanent failure clears it.
      record = {
        ...base,
        ...carried,
        ...failure,
        attempt: old.attempt,
        interruptedAtMs: old.interruptedAtMs ?? old.leaseExpiresAtMs,
      };
    } else {
      // Redrive of a FAILED record: a new cycle of attempts, the last error kept as evidence.
      record = {
        ...base,
        ...carried,
        ...failure,
        redriveCount: old.redriveCount + 1,
        attempt: 1,
        firstFailureAtMs: undefined,
        interruptedAtMs: undefined,
      };
    }
    // Race prevented: the new item is computed from the old one (attempt count, generation,
    // failure evidence), a read-modify-write. Requiring the token, status and attempt that were
    // read means the record is unchanged since: of two workers taking over the same expired or
    // released lease, only the first put passes; a completion or release that landed in
    // between is never overwritten; and a lease that was renewed by another acquisition (new
    // token) is not stolen.
    let condition = `${expr.n('leaseToken')} = ${expr.v(S(old.leaseToken))} AND ${expr.n('status')} = ${expr.v(S(old.status))} AND ${expr.n('attempt')} = ${expr.v(N(old.attempt))}`;
    if (interrupted) {
      // Race prevented: a live lease is never taken over, even if the clock of this worker runs
      // ahead: the lease must have ended `leaseMarginMs` before now.
      condition += ` AND ${expr.n('leaseExpiresAtMs')} < ${expr.v(N(now - this.#leaseMarginMs))}`;
    }
    return { record, expr, condition };
  }

  /** What a lease calls back into; private methods bound once. */
  readonly #leaseOps: LeaseOps = {
    complete: (record, result) => this.#completeLease(record, result),
    fail: (record, error, kind) => this.#failLease(record, error, kind),
    once: (record, stepName, fn) => this.#runOnce(record, stepName, fn),
  };

  /** Completes a lease: conditional UpdateItem, fenced by the lease token. */
  async #completeLease(record: JobRecord, result: unknown): Promise<LeaseWrite> {
    const now = this.#now();
    const stored = this.#storable(result, record);
    const expr = new Expr();
    const sets = [
      `${expr.n('status')} = ${expr.v(S('COMPLETED'))}`,
      `${expr.n('resultStored')} = ${expr.v(BOOL(stored.stored))}`,
      `${expr.n('resultBytes')} = ${expr.v(N(stored.bytes))}`,
      `${expr.n('completedAtMs')} = ${expr.v(N(now))}`,
      `${expr.n('endedAtMs')} = ${expr.v(N(now))}`,
      `${expr.n('updatedAtMs')} = ${expr.v(N(now))}`,
    ];
    if (stored.json !== undefined) sets.push(`${expr.n('result')} = ${expr.v(S(stored.json))}`);
    if (stored.reason !== undefined)
      sets.push(`${expr.n('resultOmittedReason')} = ${expr.v(S(stored.reason))}`);
    const condition = fencingCondition(expr, record.leaseToken);
    const written = await this.#update('complete', record.pk, `SET ${sets.join(', ')}`, expr, condition);
    if (written.ok) {
      this.#cache.set(record.pk, {
        payloadHash: record.payloadHash,
        resultJson: stored.json,
        resultStored: stored.stored,
        expiresAt: record.expiresAt,
      });
      return 'ok';
    }
    return this.#afterFencedWrite(record, written, 'COMPLETED');
  }

  /** Ends a lease after a failure: conditional UpdateItem, fenced by the lease token. */
  async #failLease(record: JobRecord, error: unknown, kind: 'transient' | 'permanent'): Promise<LeaseWrite> {
    if (kind !== 'transient' && kind !== 'permanent') {
      throw new JobError(`idempotency: fail kind must be 'transient' or 'permanent', got ${String(kind)}`);
    }
    const now = this.#now();
    const target: JobRecordStatus = kind === 'transient' ? 'RELEASED' : 'FAILED';
    const expr = new Expr();
    const nowV = expr.v(N(now));
    const sets = [
      `${expr.n('status')} = ${expr.v(S(target))}`,
      `${expr.n('lastError')} = ${expr.v(S(truncateUtf8(describeError(error), MAX_ERROR_BYTES)))}`,
      `${expr.n('lastErrorKind')} = ${expr.v(S(kind))}`,
      `${expr.n('lastFailureAtMs')} = ${nowV}`,
      `${expr.n('firstFailureAtMs')} = if_not_exists(${expr.n('firstFailureAtMs')}, ${nowV})`,
      `${expr.n('endedAtMs')} = ${nowV}`,
      `${expr.n('updatedAtMs')} = ${nowV}`,
    ];
    // A permanent failure means the worker dead-lettered the job: a redrive of it must run.
    const update = `SET ${sets.join(', ')}${kind === 'permanent' ? ` REMOVE ${expr.n('interruptedAtMs')}` : ''}`;
    const condition = fencingCondition(expr, record.leaseToken);
    const written = await this.#update(
      kind === 'transient' ? 'release' : 'fail',
      record.pk,
      update,
      expr,
      condition,
    );
    return written.ok ? 'ok' : this.#afterFencedWrite(record, written, target);
  }

  /** Runs a step at most once per key and generation (see {@link Lease.once}). */
  async #runOnce<T>(record: JobRecord, stepName: string, fn: () => Promise<T>): Promise<T> {
    const pk = stepRecordKey(record.pk, stepName);
    const existingItem = await this.#get('once', pk);
    if (existingItem) {
      const existing = parseStepRecord(existingItem);
      if (!isExpired(existing, this.#now()) && existing.generation === record.generation) {
        return this.#stepValue(existing) as T;
      }
    }
    const value = await fn();
    const now = this.#now();
    const nowS = Math.floor(now / 1000);
    const stored = this.#storable(value, undefined);
    const step: StepRecord = {
      pk,
      recordType: 'step',
      status: 'COMPLETED',
      generation: record.generation,
      stepName,
      valueStored: stored.stored,
      value: stored.json,
      valueBytes: stored.bytes,
      valueOmittedReason: stored.reason,
      expiresAt: nowS + this.#ttlSeconds,
      completedAtMs: now,
      attempt: record.attempt,
      leaseToken: record.leaseToken,
    };
    const expr = new Expr();
    // Race prevented: two runs of the same step in one generation (a fenced run still going
    // while its successor runs, or a repeated step name) both record it; the first record wins
    // and every later run, this one included, returns that one value. A record of an older
    // generation (the job key started over after its record expired) or past its TTL is a
    // leftover and is replaced.
    const condition = `attribute_not_exists(${expr.n('pk')}) OR ${expr.n('expiresAt')} <= ${expr.v(N(nowS))} OR ${expr.n('generation')} <> ${expr.v(S(record.generation))}`;
    const written = await this.#put('once', pk, stepRecordToItem(step), expr, condition);
    if (written.ok) return value;
    const winnerItem = written.old ?? (await this.#get('once', pk));
    if (!winnerItem) return value;
    const winner = parseStepRecord(winnerItem);
    return winner.valueStored ? (parseJson(winner.value) as T) : value;
  }

  /** The stored value of a completed step. @throws {StepValueNotStoredError} when it was over the cap. */
  #stepValue(step: StepRecord): unknown {
    if (step.valueStored) return parseJson(step.value);
    throw new StepValueNotStoredError(
      `step ${JSON.stringify(step.stepName)} of ${step.pk} completed on an earlier run but its value (${step.valueBytes} bytes, ${step.valueOmittedReason ?? 'not stored'}) was not stored, so this retry cannot return it; keep step values small`,
      {
        context: {
          pk: step.pk,
          stepName: step.stepName,
          valueBytes: step.valueBytes,
          maxResultBytes: this.#maxResultBytes,
        },
      },
    );
  }

  /** How a result or step value is written: whole, or as a marker. */
  #storable(
    value: unknown,
    record: JobRecord | undefined,
  ): { stored: boolean; json: string | undefined; bytes: number; reason: OmittedReason | undefined } {
    const serialized = serialize(value);
    if (!serialized.ok) return { stored: false, json: undefined, bytes: 0, reason: 'not-json' };
    if (serialized.bytes > this.#maxResultBytes) {
      return { stored: false, json: undefined, bytes: serialized.bytes, reason: 'over-size-cap' };
    }
    // Belt and braces: the cap leaves a reserve for the other attributes; check the whole item.
    if (record && serialized.json !== undefined) {
      const size = estimateItemBytes(
        jobRecordToItem({
          ...record,
          result: serialized.json,
          resultStored: true,
          resultBytes: serialized.bytes,
        }),
      );
      if (size > DYNAMODB_MAX_ITEM_BYTES) {
        return { stored: false, json: undefined, bytes: serialized.bytes, reason: 'over-size-cap' };
      }
    }
    return { stored: true, json: serialized.json, bytes: serialized.bytes, reason: undefined };
  }

  /**
   * After a fenced write failed its condition: `ok` when the record already holds this lease's
   * own write (an SDK retry of a write whose response was lost), else `fenced`.
   */
  async #afterFencedWrite(
    record: JobRecord,
    written: Extract<WriteResult, { ok: false }>,
    target: JobRecordStatus,
  ): Promise<LeaseWrite> {
    const item = written.old ?? (await this.#get('fence-check', record.pk));
    if (!item) return 'fenced';
    const current = parseJobRecord(item);
    return current.leaseToken === record.leaseToken && current.status === target ? 'ok' : 'fenced';
  }

  async #put(
    operation: string,
    pk: string,
    item: Record<string, AttributeValue>,
    expr: Expr,
    condition: string,
  ): Promise<WriteResult> {
    return this.#conditional(operation, pk, () =>
      this.#client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: condition,
          ...expr.params(),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
  }

  async #update(
    operation: string,
    pk: string,
    update: string,
    expr: Expr,
    condition: string,
  ): Promise<WriteResult> {
    return this.#conditional(operation, pk, () =>
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(pk) },
          UpdateExpression: update,
          ConditionExpression: condition,
          ...expr.params(),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
  }

  /** Runs a conditional write; a failed condition is a result, any other failure is translated. */
  async #conditional(operation: string, pk: string, write: () => Promise<unknown>): Promise<WriteResult> {
    try {
      await write();
      return { ok: true };
    } catch (err) {
      if (isConditionFailure(err)) return { ok: false, old: err.Item };
      throw this.#translate(operation, pk, err);
    }
  }

  /** Strongly consistent GetItem: sees every write acknowledged before it (API_GetItem.html). */
  async #get(operation: string, pk: string): Promise<Record<string, AttributeValue> | undefined> {
    try {
      const out = await this.#client.send(
        new GetItemCommand({ TableName: this.tableName, Key: { pk: S(pk) }, ConsistentRead: true }),
      );
      return out.Item;
    } catch (err) {
      throw this.#translate(`${operation} (GetItem)`, pk, err);
    }
  }

  #translate(operation: string, pk: string, err: unknown): IdempotencyStoreError {
    const name = (err as { name?: unknown } | null)?.name;
    const message = err instanceof Error ? err.message : String(err);
    return new IdempotencyStoreError(
      `idempotency ${operation} of ${pk} on table ${this.tableName} failed: ${typeof name === 'string' ? name : 'Error'}: ${message}`,
      { cause: err, context: { operation, pk, tableName: this.tableName } },
    );
  }
}

/**
 * The fencing condition of complete and release. Race prevented: a slow run whose lease expired
 * and was taken over (new token) must not complete or release the newer run's record; and a
 * record this lease already ended (status no longer IN_PROGRESS) is not written twice.
 * Deliberately no lease-expiry test: a run that finishes late but was not taken over may still
 * record its completion, which saves a needless rerun.
 */
function fencingCondition(expr: Expr, leaseToken: string): string {
  return `${expr.n('leaseToken')} = ${expr.v(S(leaseToken))} AND ${expr.n('status')} = ${expr.v(S('IN_PROGRESS'))}`;
}

function mismatch(request: BeginRequest, pk: string, storedPayloadHash: string): PayloadMismatchError {
  return new PayloadMismatchError(
    `idempotency key ${JSON.stringify(request.key)} of ${request.jobType} was already used with a different payload (stored hash ${storedPayloadHash}, this one ${request.payloadHash})`,
    {
      context: {
        jobType: request.jobType,
        key: request.key,
        pk,
        storedPayloadHash,
        payloadHash: request.payloadHash,
      },
    },
  );
}

function checkRequest(request: BeginRequest): void {
  const problems: string[] = [];
  if (
    typeof request.payloadHash !== 'string' ||
    request.payloadHash.length === 0 ||
    request.payloadHash.length > 256
  ) {
    problems.push('payloadHash must be a string of 1-256 characters');
  }
  if (typeof request.leaseExpiresAtMs !== 'number' || !Number.isFinite(request.leaseExpiresAtMs)) {
    problems.push(
      `leaseExpiresAtMs must be a finite number (epoch ms), got ${String(request.leaseExpiresAtMs)}`,
    );
  }
  if (!POLICIES.has(request.onLeaseExpired)) {
    problems.push(`onLeaseExpired must be 'rerun' or 'dead-letter', got ${String(request.onLeaseExpired)}`);
  }
  if (typeof request.messageId !== 'string') problems.push('messageId must be a string');
  if (problems.length > 0) {
    throw new JobError(
      `invalid idempotency request for ${request.jobType} ${request.key}: ${problems.join('; ')}`,
    );
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The store's side of a lease. */
interface LeaseOps {
  complete(record: JobRecord, result: unknown): Promise<LeaseWrite>;
  fail(record: JobRecord, error: unknown, kind: 'transient' | 'permanent'): Promise<LeaseWrite>;
  once<T>(record: JobRecord, stepName: string, fn: () => Promise<T>): Promise<T>;
}

/** The lease of one run on a {@link DynamoIdempotencyStore}. */
class DynamoLease implements Lease {
  readonly attempt: number;
  readonly firstFailureAtMs: number | undefined;
  readonly #record: JobRecord;
  readonly #key: string;
  readonly #ops: LeaseOps;

  constructor(record: JobRecord, key: string, ops: LeaseOps) {
    this.#record = record;
    this.#key = key;
    this.#ops = ops;
    this.attempt = record.attempt;
    this.firstFailureAtMs = record.firstFailureAtMs;
  }

  /**
   * Marks the key COMPLETED (conditional UpdateItem on this lease's token). The result is
   * stored as JSON text when it is at most `maxResultBytes`; otherwise (or when it has no JSON
   * form) the record keeps `resultStored: false`, `resultBytes` and `resultOmittedReason`
   * instead, and duplicates get `resultStored: false` with `result: undefined`.
   * @returns `ok`, or `fenced` when another run took the lease over (nothing was written).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  complete(result: unknown): Promise<LeaseWrite> {
    return this.#ops.complete(this.#record, result);
  }

  /**
   * Ends the run after a failure (conditional UpdateItem on this lease's token), writing
   * `lastError` (`Name: message`, at most 2,048 bytes), `lastFailureAtMs`, and
   * `firstFailureAtMs` if unset. `transient` → RELEASED: the next delivery runs with attempt + 1.
   * `permanent` → FAILED: the next delivery (a redrive) runs as a new cycle, attempt 1.
   * @returns `ok`, or `fenced` when another run took the lease over (nothing was written).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  fail(error: unknown, kind: 'transient' | 'permanent'): Promise<LeaseWrite> {
    return this.#ops.fail(this.#record, error, kind);
  }

  /**
   * Runs `fn` unless an earlier run of this key (same record generation) recorded the step:
   * then returns the recorded value without running `fn`. Cost: one consistent GetItem, plus
   * one conditional PutItem of the step record (`<jobPk>#step#<stepName>`) when `fn` runs.
   *
   * - Values pass through JSON on retries (a `Date` comes back as a string); the first run
   *   gets `fn`'s own value.
   * - A crash between `fn`'s side effect and the step record re-runs the step on the retry:
   *   pass {@link idempotencyKey} to the external API to close that gap where it can.
   * - When two runs record the same step (a fenced run still going), the first record wins and
   *   the later run gets its value.
   * - A value over `maxResultBytes` is recorded as done but not stored: the retry then throws
   *   {@link StepValueNotStoredError} (permanent) rather than run the step again.
   * @throws whatever `fn` throws (nothing is recorded), {@link StepValueNotStoredError},
   *   {@link IdempotencyStoreError}.
   */
  once<T>(stepName: string, fn: () => Promise<T>): Promise<T> {
    return this.#ops.once(this.#record, stepName, fn);
  }

  /** SHA-256 hex of job type, key and step: see {@link deriveIdempotencyKey}. */
  idempotencyKey(stepName: string): string {
    return deriveIdempotencyKey(this.#record.jobType, this.#key, stepName);
  }
}
