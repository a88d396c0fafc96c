/**
 * The DynamoDB idempotency store's core: fenced leases taken by conditional writes, stored
 * results, step-level `once` (`DynamoLeaseStore`; store.ts's `DynamoIdempotencyStore` adds parked
 * groups, jobs sent for later and batches, which a worker of `sqs-jobs/worker` without those
 * features does not bundle). This module wires the parts together and holds the per-instance
 * state (table, limits, clock, cache of completed keys):
 * - options.ts: options, defaults, validation;
 * - begin-request.ts: checks of a begin request; acquire.ts: the acquisition write;
 *   decide.ts: what an existing record means for a begin;
 * - lease.ts: the lease handed to the worker; lease-end.ts: completion and failure writes;
 *   step-write.ts: `once` step records; storable.ts: results and step values under the size cap;
 * - read-back.ts: items read back after a failed condition (own earlier write, step winner);
 * - table.ts, expr.ts, sdk-errors.ts: DynamoDB calls, expressions, SDK error translation.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { JobError, type PermanentError, type TransientError } from '../../core/errors.ts';
import { type AcquirePlan, acquisitionWrite } from './acquire.ts';
import { checkRequest, mismatch } from './begin-request.ts';
import { CompletedKeyCache } from './cache.ts';
import { decide } from './decide.ts';
import type { BeginOutcome, BeginRequest, IdempotencyGuard, LeaseWrite } from './guard.ts';
import { jobRecordKey, stepRecordKey } from './keys.ts';
import { DynamoLease, type LeaseOps } from './lease.ts';
import { completionWrite, failureStatus, failureWrite, handBackWrite } from './lease-end.ts';
import {
  type DynamoIdempotencyStoreOptions,
  type ResolvedStoreLimits,
  resolveStoreLimits,
} from './options.ts';
import { holdsOwnWrite, isOwnWrite, parseJson, stepValue, winningStepValue } from './read-back.ts';
import {
  isExpiredItem,
  type JobRecord,
  type JobRecordStatus,
  jobRecordToItem,
  parseJobRecord,
  parseStepRecord,
  stepRecordToItem,
} from './record.ts';
import { stepWrite } from './step-write.ts';
import { type Storable, storable } from './storable.ts';
import { RecordTable, type WriteResult } from './table.ts';

/** Rounds of the acquire loop (each a conditional write) before a contended key answers `busy`. */
const MAX_ACQUIRE_ROUNDS = 4;

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
 * const store = new DynamoLeaseStore({ tableName: process.env.JOBS_IDEMPOTENCY_TABLE! });
 * const outcome = await store.begin({ jobType, key, payloadHash, leaseExpiresAtMs, onLeaseExpired: 'rerun', messageId });
 */
export class DynamoLeaseStore implements IdempotencyGuard {
  /** The table written to. */
  readonly tableName: string;
  readonly #table: RecordTable;
  readonly #limits: ResolvedStoreLimits;
  readonly #now: () => number;
  readonly #cache: CompletedKeyCache;

  /** @throws {JobError} listing every invalid option. */
  constructor(options: DynamoIdempotencyStoreOptions) {
    this.#limits = resolveStoreLimits(options);
    this.tableName = options.tableName;
    this.#table = new RecordTable(options.client ?? new DynamoDBClient({}), options.tableName);
    this.#now = options.now ?? Date.now;
    this.#cache = new CompletedKeyCache(this.#limits.completedCacheSize);
  }

  /**
   * Takes the lease for a key, or says why not (see {@link BeginOutcome}).
   *
   * 1. A completed key cached by this worker answers `completed` without a call.
   * 2. One conditional PutItem for an absent (or TTL-expired) key; success = `acquired`,
   *    attempt 1.
   * 3. On a failed condition the existing record (from `ALL_OLD`, else a consistent GetItem)
   *    decides: this put's own record (same lease token: the SDK retried a put whose response
   *    was lost) → as if the put succeeded; an expired record → absent; a step record or a
   *    malformed one → throws; different `payloadHash` → throws; COMPLETED → `completed` with
   *    the stored result; live IN_PROGRESS → `busy`; IN_PROGRESS with an expired lease →
   *    policy `rerun`: taken over (attempt + 1), `dead-letter`: taken over without a run,
   *    `lease-expired`; RELEASED → taken over (attempt + 1), or `lease-expired` when its run was
   *    interrupted and the policy is `dead-letter`; FAILED → taken over by the redrive (a new
   *    cycle: attempt 1).
   *    A takeover is a PutItem conditioned on the record being unchanged since it was read.
   * 4. When takeovers keep losing races, answers `busy`.
   *
   * @throws {PayloadMismatchError} (a {@link PermanentError}) when the key holds a different payload hash.
   * @throws {IdempotencyStoreError} (a {@link TransientError}) when DynamoDB fails (throttling,
   *   network, 5xx, missing table or permissions); `cause` is the SDK error.
   * @throws {IdempotencyRecordError} (a {@link PermanentError}) when the key holds a step record
   *   or a malformed record.
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
      const { record, expr, condition } = acquisitionWrite(plan, request, pk, now, this.#limits);
      const written = await this.#table.put('acquire', pk, jobRecordToItem(record), expr, condition);
      if (written.ok) return this.#taken(plan, record, request);
      const oldItem = written.old ?? (await this.#table.get('acquire', pk));
      if (!oldItem || isExpiredItem(oldItem, this.#now())) {
        // Deleted (TTL) between the write and the read, or expired: absent, whatever it holds.
        plan = { kind: 'fresh' };
        continue;
      }
      const old = parseJobRecord(oldItem);
      // This very put landed before (its response was lost and the SDK sent it again): the
      // lease is ours. The token is random per acquisition, so no other run wrote it.
      if (isOwnWrite(old, record, 'IN_PROGRESS')) return this.#taken(plan, record, request);
      const decided = decide(old, request, pk, this.#now(), this.#limits, this.#cache);
      if ('status' in decided) return decided;
      plan = decided;
    }
    return { status: 'busy', retryAfterMs: this.#limits.busyRetryAfterMs };
  }

  /** The outcome of an acquisition write of `plan` that landed. */
  #taken(plan: AcquirePlan, record: JobRecord, request: BeginRequest): BeginOutcome {
    const lease = new DynamoLease(record, request.key, this.#leaseOps);
    return plan.kind === 'dead-letter'
      ? { status: 'lease-expired', lease, previousAttempt: plan.old.attempt }
      : { status: 'acquired', lease };
  }

  /**
   * Reads the job record of a key with a strongly consistent GetItem (for operators and tests).
   * Returns it even when its TTL has passed (check `expiresAt`).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   * @throws {IdempotencyRecordError} when the key holds a step record or a malformed record.
   */
  async readRecord(jobType: string, key: string): Promise<JobRecord | undefined> {
    const pk = jobRecordKey(jobType, key);
    const item = await this.#table.get('read', pk);
    return item ? parseJobRecord(item) : undefined;
  }

  /** The table, for the parts store.ts adds (parked groups, jobs sent for later, batches). */
  protected get recordTable(): RecordTable {
    return this.#table;
  }

  /** The clock, epoch milliseconds. */
  protected get clock(): () => number {
    return this.#now;
  }

  /** The store's resolved limits (TTLs, sizes). */
  protected get storeLimits(): ResolvedStoreLimits {
    return this.#limits;
  }

  /** Forgets every key cached by this worker (tests, or after an operator cleared records). */
  clearCache(): void {
    this.#cache.clear();
  }

  /** What a lease calls back into; private methods bound once. */
  readonly #leaseOps: LeaseOps = {
    complete: (record, result, children) => this.#completeLease(record, result, children),
    fail: (record, error, kind, failedAtMs) => this.#failLease(record, error, kind, failedAtMs),
    once: (record, stepName, fn) => this.#runOnce(record, stepName, fn),
    handBack: (record) => this.#handBackLease(record),
    ...this.togetherOps(),
  };

  /**
   * The lease writes made together with other items in one transaction (batches): none here;
   * DynamoIdempotencyStore (store.ts) has them, so that a worker without the features that need
   * them does not carry them (issue 21: bundle bytes). Called once, while the store is built.
   */
  protected togetherOps(): Pick<LeaseOps, 'completeTogether' | 'failTogether'> {
    return {};
  }

  /** Hands a lease back without counting the run (a flow-control wait): fenced UpdateItem. */
  async #handBackLease(record: JobRecord): Promise<LeaseWrite> {
    const { update, expr, condition } = handBackWrite(record, this.#now());
    const written = await this.#table.update('hand-back', record.pk, update, expr, condition);
    return written.ok ? 'ok' : this.afterFencedWrite(record, written, 'RELEASED');
  }

  /** Completes a lease: conditional UpdateItem, fenced by the lease token. */
  async #completeLease(
    record: JobRecord,
    result: unknown,
    children?: readonly string[],
  ): Promise<LeaseWrite> {
    const now = this.#now();
    const stored = storable(result, record, this.#limits.maxResultBytes, {
      kind: 'result',
      jobType: record.jobType,
    });
    const { update, expr, condition } = completionWrite(record, stored, now, children);
    const written = await this.#table.update('complete', record.pk, update, expr, condition);
    const outcome = written.ok ? 'ok' : await this.afterFencedWrite(record, written, 'COMPLETED');
    if (outcome === 'ok') this.rememberCompleted(record, stored);
    return outcome;
  }

  /** Keeps a key this store completed, so its duplicates are answered without a call. */
  protected rememberCompleted(record: JobRecord, stored: Storable): void {
    this.#cache.set(record.pk, {
      payloadHash: record.payloadHash,
      resultJson: stored.json,
      resultStored: stored.stored,
      expiresAt: record.expiresAt,
    });
  }

  /** Ends a lease after a failure: conditional UpdateItem, fenced by the lease token. */
  async #failLease(
    record: JobRecord,
    error: unknown,
    kind: 'transient' | 'permanent',
    failedAtMs: number | undefined,
  ): Promise<LeaseWrite> {
    if (kind !== 'transient' && kind !== 'permanent') {
      throw new JobError(`idempotency: fail kind must be 'transient' or 'permanent', got ${String(kind)}`);
    }
    const now = this.#now();
    const { update, expr, condition } = failureWrite(record, error, kind, now, failedAtMs ?? now);
    const written = await this.#table.update(
      kind === 'transient' ? 'release' : 'fail',
      record.pk,
      update,
      expr,
      condition,
    );
    return written.ok ? 'ok' : this.afterFencedWrite(record, written, failureStatus(kind));
  }

  /** Runs a step at most once per key and generation (see {@link Lease.once}). */
  async #runOnce<T>(record: JobRecord, stepName: string, fn: () => Promise<T>): Promise<T> {
    const pk = stepRecordKey(record.pk, stepName);
    const existingItem = await this.#table.get('once', pk);
    if (existingItem && !isExpiredItem(existingItem, this.#now())) {
      const existing = parseStepRecord(existingItem);
      if (existing.generation === record.generation) {
        return stepValue(existing, this.#limits.maxResultBytes) as T;
      }
    }
    const value = await fn();
    const now = this.#now();
    const stored = storable(value, undefined, this.#limits.maxResultBytes, { kind: 'step', stepName });
    const { step, expr, condition } = stepWrite(
      record,
      stepName,
      pk,
      stored,
      now,
      this.#limits.recordTtlSeconds,
    );
    const written = await this.#table.put('once', pk, stepRecordToItem(step), expr, condition);
    if (written.ok) return value;
    const winnerItem = written.old ?? (await this.#table.get('once', pk));
    if (!winnerItem) return value;
    // The winner may be this very put, sent again by the SDK after a lost response.
    return winningStepValue(winnerItem, step, value);
  }

  /**
   * After a fenced write failed its condition: `ok` when the record already holds this lease's
   * own write (an SDK retry of a write whose response was lost), else `fenced`.
   */
  protected async afterFencedWrite(
    record: JobRecord,
    written: Extract<WriteResult, { ok: false }>,
    target: JobRecordStatus,
  ): Promise<LeaseWrite> {
    const item = written.old ?? (await this.#table.get('fence-check', record.pk));
    if (!item) return 'fenced';
    return holdsOwnWrite(item, record, target) ? 'ok' : 'fenced';
  }
}
