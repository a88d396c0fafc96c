/**
 * An idempotency store in memory, for running a real worker (`createWorker`) in a unit test with
 * duplicates absorbed, without DynamoDB. It keeps the DynamoDB store's records and decides with
 * the DynamoDB store's own rules (lib/runtime/idempotency/: `decide` for what an existing record
 * means, `acquisitionWrite` for the record a lease writes, `storable` / `stepValue` for results and
 * `once` steps, `failureStatus` for a failed run), so a test sees what production does: a
 * duplicate of a completed job answers its stored result, the same key with different data is a
 * permanent `PayloadMismatchError`, a transient failure runs again with attempt + 1, a
 * dead-lettered message redriven runs as a new cycle, `ctx.once` steps are skipped on a retry.
 * What it does not model: DynamoDB's failures (throttling, lost responses) and sharing between
 * processes (each instance is one table, in this process).
 */

import { type AcquirePlan, acquisitionWrite } from '../runtime/idempotency/acquire.ts';
import { checkRequest } from '../runtime/idempotency/begin-request.ts';
import { CompletedKeyCache } from '../runtime/idempotency/cache.ts';
import { decide } from '../runtime/idempotency/decide.ts';
import type {
  BeginOutcome,
  BeginRequest,
  GroupPark,
  GroupParkStore,
  IdempotencyGuard,
  LeaseWrite,
  ParkGroupOutcome,
  ParkGroupRequest,
  UnparkOutcome,
} from '../runtime/idempotency/guard.ts';
import { groupRecordKey, jobRecordKey, stepRecordKey } from '../runtime/idempotency/keys.ts';
import { DynamoLease, type LeaseOps } from '../runtime/idempotency/lease.ts';
import { describeError, failureStatus } from '../runtime/idempotency/lease-end.ts';
import { IDEMPOTENCY_DEFAULTS } from '../runtime/idempotency/options.ts';
import { parseStoredJson, stepValue } from '../runtime/idempotency/read-back.ts';
import {
  isExpired,
  type JobRecord,
  MAX_ERROR_BYTES,
  type StepRecord,
  truncateUtf8,
} from '../runtime/idempotency/record.ts';
import { stepWrite } from '../runtime/idempotency/step-write.ts';
import { storable } from '../runtime/idempotency/storable.ts';

/** Options of {@link MemoryIdempotencyStore}; defaults are the DynamoDB store's. */
export interface MemoryIdempotencyStoreOptions {
  /** Clock, epoch milliseconds (leases, TTLs, failure times). @default Date.now */
  readonly now?: () => number;
  /** How long a record lives, in seconds. @default 604800 (7 days) */
  readonly recordTtlSeconds?: number;
  /** Largest result or step value stored whole, in UTF-8 bytes of its JSON. @default 65536 */
  readonly maxResultBytes?: number;
}

/** What a test reads of a job's record ({@link MemoryIdempotencyStore.record}). */
export interface MemoryJobRecord {
  /** `IN_PROGRESS` (a run holds the lease), `COMPLETED`, `RELEASED` (failed, will run again), `FAILED` (dead-lettered). */
  readonly status: 'IN_PROGRESS' | 'COMPLETED' | 'RELEASED' | 'FAILED';
  /** Runs of the key in this cycle, 1-based (a redrive starts a new cycle). */
  readonly attempt: number;
  /** The stored result (COMPLETED), as a duplicate gets it; undefined when not stored. */
  readonly result: unknown;
  /** `Name: message` of the last failure. */
  readonly lastError: string | undefined;
  /** Number of redrives of the key after it was dead-lettered. */
  readonly redriveCount: number;
  /** The SQS messageId of the delivery that last took the lease. */
  readonly messageId: string;
}

/**
 * {@link IdempotencyGuard} (and {@link GroupParkStore}, so `onDeadLetter: 'park'` works) in
 * memory: pass it as `createWorker({ idempotency: new MemoryIdempotencyStore() })`.
 *
 * @example
 * ```ts
 * import { createWorker, defineJob } from 'sqs-jobs';
 * import { jobRecord, lambdaContext, MemoryIdempotencyStore, sqsEvent } from 'sqs-jobs/testing';
 * import { z } from 'zod';
 *
 * let sent = 0;
 * const sendEmail = defineJob({
 *   type: 'emails.send',
 *   queue: 'emails',
 *   schema: z.object({ to: z.string() }),
 *   async run() {
 *     sent += 1;
 *   },
 * });
 * const store = new MemoryIdempotencyStore();
 * const handler = createWorker({
 *   jobs: [sendEmail],
 *   idempotency: store,
 *   queueName: 'emails',
 *   queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/emails',
 *   dlqUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/emails-dlq',
 * });
 * const delivery = jobRecord(sendEmail, { to: 'a@example.com' }, { id: 'welcome-1' });
 * await handler(sqsEvent([delivery]), lambdaContext());
 * await handler(sqsEvent([{ ...delivery, messageId: 'redelivered' }]), lambdaContext());
 * // sent === 1; store.record('emails.send', '/tests\nwelcome-1')?.status === 'COMPLETED'
 * ```
 */
export class MemoryIdempotencyStore implements IdempotencyGuard, GroupParkStore {
  readonly #records = new Map<string, JobRecord>();
  readonly #steps = new Map<string, StepRecord>();
  readonly #parks = new Map<string, GroupPark>();
  readonly #now: () => number;
  readonly #limits: typeof IDEMPOTENCY_DEFAULTS;
  /** `decide` remembers completed keys in a cache; this store reads its map instead. */
  readonly #cache = new CompletedKeyCache(0);

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#limits = {
      ...IDEMPOTENCY_DEFAULTS,
      ...(options.recordTtlSeconds === undefined ? {} : { recordTtlSeconds: options.recordTtlSeconds }),
      ...(options.maxResultBytes === undefined ? {} : { maxResultBytes: options.maxResultBytes }),
    };
  }

  /**
   * Takes the lease for a key, or says why not, with the DynamoDB store's rules.
   * @throws {PayloadMismatchError} (permanent) when the key holds a different payload hash.
   * @throws {JobError} when the request is invalid (empty key...).
   */
  async begin(request: BeginRequest): Promise<BeginOutcome> {
    checkRequest(request);
    const pk = jobRecordKey(request.jobType, request.key);
    const now = this.#now();
    const old = this.#records.get(pk);
    let plan: AcquirePlan = { kind: 'fresh' };
    if (old !== undefined && !isExpired(old, now)) {
      const decided = decide(old, request, pk, now, this.#limits, this.#cache);
      if ('status' in decided) return decided;
      plan = decided;
    }
    const { record } = acquisitionWrite(plan, request, pk, now, this.#limits);
    this.#records.set(pk, record);
    const lease = new DynamoLease(record, request.key, this.#leaseOps);
    return plan.kind === 'dead-letter'
      ? { status: 'lease-expired', lease, previousAttempt: plan.old.attempt }
      : { status: 'acquired', lease };
  }

  /** A job's record, by type and idempotency key (default key: `<source>\n<id>`); undefined when absent or expired. */
  record(jobType: string, key: string): MemoryJobRecord | undefined {
    const found = this.#records.get(jobRecordKey(jobType, key));
    if (found === undefined || isExpired(found, this.#now())) return undefined;
    return {
      status: found.status,
      attempt: found.attempt,
      result: found.resultStored === true ? parseStoredJson(found.result, found.pk, 'result') : undefined,
      lastError: found.lastError,
      redriveCount: found.redriveCount,
      messageId: found.messageId,
    };
  }

  /** Forgets every record, step and park. */
  clear(): void {
    this.#records.clear();
    this.#steps.clear();
    this.#parks.clear();
  }

  async readGroupPark(queueName: string, messageGroupId: string): Promise<GroupPark | undefined> {
    const park = this.#parks.get(groupRecordKey(queueName, messageGroupId));
    return park === undefined || isExpired(park, this.#now()) ? undefined : park;
  }

  async parkGroup(request: ParkGroupRequest): Promise<ParkGroupOutcome> {
    const pk = groupRecordKey(request.queueName, request.messageGroupId);
    const now = this.#now();
    const current = await this.readGroupPark(request.queueName, request.messageGroupId);
    if (current !== undefined && current.blockerPk !== request.blockerPk) {
      return { status: 'parked-by-other', park: current };
    }
    const park: GroupPark = {
      pk,
      queueName: request.queueName,
      messageGroupId: request.messageGroupId,
      blockerPk: request.blockerPk,
      blockerJobType: request.blockerJobType,
      blockerJobId: request.blockerJobId,
      blockerMessageId: request.blockerMessageId,
      blockerReason: request.blockerReason,
      parkedAtMs: current?.parkedAtMs ?? now,
      updatedAtMs: now,
      parkCount: (current?.parkCount ?? 0) + 1,
      expiresAt: Math.floor(now / 1000) + this.#limits.groupParkTtlSeconds,
    };
    this.#parks.set(pk, park);
    return { status: 'parked', park };
  }

  async unparkGroup(queueName: string, messageGroupId: string, blockerPk: string): Promise<UnparkOutcome> {
    const current = await this.readGroupPark(queueName, messageGroupId);
    if (current === undefined) return 'not-parked';
    if (current.blockerPk !== blockerPk) return 'parked-by-other';
    this.#parks.delete(current.pk);
    return 'cleared';
  }

  /** The record still holds this lease (same token, still running): the fencing rule of every lease write. */
  #holds(record: JobRecord): boolean {
    const current = this.#records.get(record.pk);
    return current?.leaseToken === record.leaseToken && current.status === 'IN_PROGRESS';
  }

  readonly #leaseOps: LeaseOps = {
    complete: async (record, result, children): Promise<LeaseWrite> => {
      if (!this.#holds(record)) return 'fenced';
      const now = this.#now();
      const stored = storable(result, record, this.#limits.maxResultBytes, {
        kind: 'result',
        jobType: record.jobType,
      });
      this.#records.set(record.pk, {
        ...record,
        status: 'COMPLETED',
        endedAtMs: now,
        completedAtMs: now,
        updatedAtMs: now,
        resultStored: stored.stored,
        result: stored.json,
        resultBytes: stored.bytes,
        resultOmittedReason: stored.reason,
        resultOmittedDetail: stored.detail,
        ...(children === undefined || children.length === 0 ? {} : { childJobs: [...new Set(children)] }),
      });
      return 'ok';
    },
    fail: async (record, error, kind, failedAtMs): Promise<LeaseWrite> => {
      if (!this.#holds(record)) return 'fenced';
      const now = this.#now();
      this.#records.set(record.pk, {
        ...record,
        status: failureStatus(kind),
        lastError: truncateUtf8(describeError(error), MAX_ERROR_BYTES),
        lastErrorKind: kind,
        lastFailureAtMs: failedAtMs ?? now,
        firstFailureAtMs: record.firstFailureAtMs ?? failedAtMs ?? now,
        endedAtMs: now,
        updatedAtMs: now,
        // A permanent failure means the worker dead-lettered the job: a redrive of it must run.
        ...(kind === 'permanent' ? { interruptedAtMs: undefined } : {}),
      });
      return 'ok';
    },
    // Batches are counted in DynamoDB transactions: the memory store keeps none (the worker then
    // refuses ctx.startBatch, as with any guard without a batch ledger), so these never run.
    completeTogether: async () => {
      throw new Error('MemoryIdempotencyStore keeps no batches: test a job that starts one with runJob');
    },
    failTogether: async () => {
      throw new Error('MemoryIdempotencyStore keeps no batches: test a job that starts one with runJob');
    },
    // A run that waited on a flow-control limit gives its attempt back (lease-end.ts, handBackWrite).
    handBack: async (record): Promise<LeaseWrite> => {
      if (!this.#holds(record)) return 'fenced';
      const now = this.#now();
      this.#records.set(record.pk, {
        ...record,
        status: 'RELEASED',
        attempt: Math.max(0, record.attempt - 1),
        endedAtMs: now,
        updatedAtMs: now,
      });
      return 'ok';
    },
    once: async <T>(record: JobRecord, stepName: string, fn: () => Promise<T>): Promise<T> => {
      const pk = stepRecordKey(record.pk, stepName);
      const done = this.#doneStep(pk, record);
      if (done !== undefined) return stepValue(done, this.#limits.maxResultBytes) as T;
      const value = await fn();
      // The first record of a step wins (a fenced run still going may have recorded it meanwhile).
      const winner = this.#doneStep(pk, record);
      if (winner !== undefined) return stepValue(winner, this.#limits.maxResultBytes) as T;
      const now = this.#now();
      const stored = storable(value, undefined, this.#limits.maxResultBytes, { kind: 'step', stepName });
      const { step } = stepWrite(record, stepName, pk, stored, now, this.#limits.recordTtlSeconds);
      this.#steps.set(pk, step);
      return value;
    },
  };

  /** The live step record of this record's generation, if the step is done. */
  #doneStep(pk: string, record: JobRecord): StepRecord | undefined {
    const step = this.#steps.get(pk);
    if (step === undefined || isExpired(step, this.#now()) || step.generation !== record.generation) {
      return undefined;
    }
    return step;
  }
}
