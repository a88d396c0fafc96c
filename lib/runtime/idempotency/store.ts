/**
 * The DynamoDB idempotency store (`DynamoIdempotencyStore`): the core of lease-store.ts (fenced
 * leases, stored results, `once` steps) plus what the worker's optional features keep in the same
 * table: parked FIFO message groups (group-store.ts, group-record.ts; `onDeadLetter: 'park'`),
 * the state of jobs sent for later (scheduled-job-store.ts) and batches (lib/runtime/batches/
 * ledger.ts, and a lease's end written with a batch's items in one transaction). The parts of the store:
 * - options.ts: options, defaults, validation;
 * - begin-request.ts: checks of a begin request; acquire.ts: the acquisition write;
 *   decide.ts: what an existing record means for a begin;
 * - lease.ts: the lease handed to the worker; lease-end.ts: completion and failure writes;
 *   step-write.ts: `once` step records; storable.ts: results and step values under the size cap;
 * - read-back.ts: items read back after a failed condition (own earlier write, step winner);
 * - group-store.ts, group-record.ts: parked FIFO message groups (`onDeadLetter: 'park'`);
 * - table.ts, transactions.ts, expr.ts, sdk-errors.ts: DynamoDB calls, expressions, SDK error translation.
 */
import { createHash } from 'node:crypto';
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { BatchLedger } from '../batches/ledger.ts';
import { GroupParks } from './group-store.ts';
import type {
  GroupPark,
  GroupParkStore,
  ParkGroupOutcome,
  ParkGroupRequest,
  ScheduledJobStore,
  ScheduledStart,
  ScheduledStartRequest,
  TogetherWrite,
  UnparkOutcome,
} from './guard.ts';
import type { LeaseOps } from './lease.ts';
import { completionWrite, type FencedUpdate, failureWrite } from './lease-end.ts';
import { DynamoLeaseStore } from './lease-store.ts';
import type { DynamoIdempotencyStoreOptions } from './options.ts';
import type { JobRecord, JobRecordStatus } from './record.ts';
import { scheduledJobExists, startScheduledJob } from './scheduled-job-store.ts';
import { storable } from './storable.ts';
import { transact } from './transactions.ts';

/**
 * The idempotency guard on a DynamoDB table (lease-store.ts: its costs per job), with the
 * state of the worker's optional features.
 *
 * Parked groups ({@link GroupParkStore}, used only by workers with `onDeadLetter: 'park'`): the
 * worker reads a group's record once per FIFO message group per batch (one consistent GetItem);
 * parking costs one conditional PutItem (two when the same blocker parks again after a failed
 * redrive), unparking one conditional DeleteItem.
 *
 * @example
 * const store = new DynamoIdempotencyStore({ tableName: process.env.JOBS_IDEMPOTENCY_TABLE! });
 * const outcome = await store.begin({ jobType, key, payloadHash, leaseExpiresAtMs, onLeaseExpired: 'rerun', messageId });
 */
export class DynamoIdempotencyStore extends DynamoLeaseStore implements GroupParkStore, ScheduledJobStore {
  readonly #groups: GroupParks;
  #ledger: BatchLedger | undefined;

  /** @throws {JobError} listing every invalid option. */
  constructor(options: DynamoIdempotencyStoreOptions) {
    super(options);
    this.#groups = new GroupParks(this.recordTable, this.clock, this.storeLimits.groupParkTtlSeconds);
  }

  /**
   * Starts a job sent for later (its state item, lib/core/scheduled-job.ts): one conditional
   * UpdateItem, and one consistent GetItem when it is not started (to say why).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  startScheduledJob(request: ScheduledStartRequest): Promise<ScheduledStart> {
    return startScheduledJob(this.recordTable, request, this.clock());
  }

  /**
   * Whether the job sent for later `source`/`id` has a state item that has not expired. One
   * strongly consistent GetItem.
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  scheduledJobExists(source: string, id: string): Promise<boolean> {
    return scheduledJobExists(this.recordTable, source, id, this.clock());
  }

  /**
   * The park of a FIFO message group of a queue, or undefined when it is not parked (no group
   * record, or its TTL passed). One strongly consistent GetItem.
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   * @throws {IdempotencyRecordError} when the group key holds something else, or a malformed record.
   */
  readGroupPark(queueName: string, messageGroupId: string): Promise<GroupPark | undefined> {
    return this.#groups.read(queueName, messageGroupId);
  }

  /**
   * Parks a group behind its blocking job, for `groupParkTtlSeconds` (conditional PutItem: no live
   * park, or a refresh of the same blocker's). `parked-by-other` when another job holds the park.
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   * @throws {JobError} when a field of the request is empty.
   */
  parkGroup(request: ParkGroupRequest): Promise<ParkGroupOutcome> {
    return this.#groups.park(request);
  }

  /**
   * Clears the park of a group held by `blockerPk` (conditional DeleteItem); `not-parked` when
   * there is none, `parked-by-other` when another job holds it (left as it is).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  unparkGroup(queueName: string, messageGroupId: string, blockerPk: string): Promise<UnparkOutcome> {
    return this.#groups.unpark(queueName, messageGroupId, blockerPk);
  }

  /** A lease's completion or failure with other items in one transaction (batches/count.ts). */
  protected override togetherOps(): Pick<LeaseOps, 'completeTogether' | 'failTogether'> {
    return {
      completeTogether: (record, result, children, items) =>
        this.#completeTogether(record, result, children, items),
      failTogether: (record, error, items, failedAtMs) =>
        this.#failTogether(record, error, items, failedAtMs),
    };
  }

  /** Completes a lease and writes `items`, in one transaction (batches). */
  async #completeTogether(
    record: JobRecord,
    result: unknown,
    children: readonly string[] | undefined,
    items: readonly TransactWriteItem[],
  ): Promise<TogetherWrite> {
    const stored = storable(result, record, this.storeLimits.maxResultBytes, {
      kind: 'result',
      jobType: record.jobType,
    });
    const write = completionWrite(record, stored, this.clock(), children);
    const outcome = await this.#together('complete', record, write, items, 'COMPLETED');
    if (outcome === 'ok') this.rememberCompleted(record, stored);
    return outcome;
  }

  /** Ends a lease as permanent (dead-lettered) and writes `items`, in one transaction (batches). */
  #failTogether(
    record: JobRecord,
    error: unknown,
    items: readonly TransactWriteItem[],
    failedAtMs: number | undefined,
  ): Promise<TogetherWrite> {
    const now = this.clock();
    const write = failureWrite(record, error, 'permanent', now, failedAtMs ?? now);
    return this.#together('fail', record, write, items, 'FAILED');
  }

  /**
   * The fenced lease write and `items` in one TransactWriteItems whose ClientRequestToken derives
   * from the lease token and the request: a retry of the same request within 10 minutes (the SDK's,
   * after a lost response) is answered without a second write.
   */
  async #together(
    operation: 'complete' | 'fail',
    record: JobRecord,
    write: FencedUpdate,
    items: readonly TransactWriteItem[],
    target: JobRecordStatus,
  ): Promise<TogetherWrite> {
    const lease: TransactWriteItem = {
      Update: {
        TableName: this.tableName,
        Key: { pk: { S: record.pk } },
        UpdateExpression: write.update,
        ConditionExpression: write.condition,
        ...write.expr.params(),
      },
    };
    const all = [lease, ...items];
    // Derived from the lease and the request: an SDK retry (same request) is answered without a
    // second write; another request of this lease gets a token of its own (never a mismatch).
    const token = createHash('sha256')
      .update(`${record.leaseToken}\n${operation}\n${JSON.stringify(all)}`)
      .digest('hex')
      .slice(0, 36);
    const written = await transact(this.recordTable, operation, record.pk, all, token);
    if (written.ok) return 'ok';
    if (written.reasons[0] === 'ConditionalCheckFailed') {
      // The record already holds this lease's own end (a transaction applied earlier), or another run's.
      return (await this.afterFencedWrite(record, { ok: false, old: undefined }, target)) === 'ok'
        ? 'ok'
        : 'fenced';
    }
    return { cancelled: written.reasons.slice(1) };
  }

  /**
   * The batches kept in this store's table (lib/runtime/batches/ledger.ts): batch items, child
   * outcomes, and their transactions.
   */
  batchLedger(): BatchLedger {
    this.#ledger ??= new BatchLedger(this.recordTable, this.clock);
    return this.#ledger;
  }
}

/** A {@link DynamoIdempotencyStore} on `tableName` with its defaults: the default guard of a worker with a feature that keeps state in it. */
export function createDynamoIdempotencyStore(tableName: string): DynamoIdempotencyStore {
  return new DynamoIdempotencyStore({ tableName });
}
