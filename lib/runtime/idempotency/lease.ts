/**
 * The lease one run holds on a key: what the worker calls to complete, fail or run a `once` step
 * under it. Every call goes back to the store that granted it.
 */

import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { IdempotencyStoreError, StepValueNotStoredError } from './errors.ts';
import type { Lease, LeaseWrite, TogetherWrite } from './guard.ts';
import { deriveIdempotencyKey } from './keys.ts';
import type { JobRecord } from './record.ts';

/** The store's side of a lease. */
export interface LeaseOps {
  complete(record: JobRecord, result: unknown, children?: readonly string[]): Promise<LeaseWrite>;
  fail(
    record: JobRecord,
    error: unknown,
    kind: 'transient' | 'permanent',
    failedAtMs?: number,
  ): Promise<LeaseWrite>;
  /** Absent on a store without transactions (DynamoLeaseStore): its leases then have none. */
  completeTogether?(
    record: JobRecord,
    result: unknown,
    children: readonly string[] | undefined,
    items: readonly TransactWriteItem[],
  ): Promise<TogetherWrite>;
  failTogether?(
    record: JobRecord,
    error: unknown,
    items: readonly TransactWriteItem[],
    failedAtMs?: number,
  ): Promise<TogetherWrite>;
  once<T>(record: JobRecord, stepName: string, fn: () => Promise<T>): Promise<T>;
  handBack(record: JobRecord): Promise<LeaseWrite>;
}

/** The lease of one run on a {@link DynamoIdempotencyStore}. */
export class DynamoLease implements Lease {
  readonly attempt: number;
  readonly firstFailureAtMs: number | undefined;
  readonly #record: JobRecord;
  readonly #key: string;
  readonly #ops: LeaseOps;
  /**
   * {@link complete} and `items` in one TransactWriteItems (2 write units per item), its
   * `ClientRequestToken` derived from this lease: a retry after a lost response writes nothing twice.
   * Undefined when the store has no transactions (`LeaseOps.completeTogether` absent).
   * @returns `ok`, `fenced` (another run took the lease over), or `cancelled` with the codes of
   *   `items` when one failed its condition; nothing is written unless `ok`.
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  readonly completeTogether?: (
    result: unknown,
    children: readonly string[] | undefined,
    items: readonly TransactWriteItem[],
  ) => Promise<TogetherWrite>;
  /**
   * {@link fail} as `permanent` and `items` in one TransactWriteItems, as {@link completeTogether}
   * (and undefined when it is).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  readonly failTogether?: (
    error: unknown,
    items: readonly TransactWriteItem[],
    failedAtMs?: number,
  ) => Promise<TogetherWrite>;

  constructor(record: JobRecord, key: string, ops: LeaseOps) {
    this.#record = record;
    this.#key = key;
    this.#ops = ops;
    this.attempt = record.attempt;
    this.firstFailureAtMs = record.firstFailureAtMs;
    const { completeTogether, failTogether } = ops;
    if (completeTogether) {
      this.completeTogether = (result, children, items) => completeTogether(record, result, children, items);
    }
    if (failTogether) {
      this.failTogether = (error, items, failedAtMs) => failTogether(record, error, items, failedAtMs);
    }
  }

  /**
   * Marks the key COMPLETED (conditional UpdateItem on this lease's token). The result is
   * stored as JSON text when it is at most `maxResultBytes` and reads back the same from it;
   * otherwise (over the cap: `over-size-cap`; a `Date`, `Map`, `NaN`... or no JSON form at all:
   * `not-json`, with `resultOmittedDetail` naming the kind and the path) the record keeps
   * `resultStored: false`, `resultBytes` and `resultOmittedReason` instead, and duplicates get
   * `resultStored: false` with `result: undefined`, never a changed value.
   * @returns `ok`, or `fenced` when another run took the lease over (nothing was written).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  complete(result: unknown, children?: readonly string[]): Promise<LeaseWrite> {
    return this.#ops.complete(this.#record, result, children);
  }

  /**
   * Ends the run after a failure (conditional UpdateItem on this lease's token), writing
   * `lastError` (`Name: message`, at most 2,048 bytes), `lastFailureAtMs`, and
   * `firstFailureAtMs` if unset. `transient` → RELEASED: the next delivery runs with attempt + 1.
   * `permanent` → FAILED: the next delivery (a redrive) runs as a new cycle, attempt 1; a copy of
   * the job sent before `failedAtMs` is absorbed instead (decide.ts, `isCopyOfDeadLetter`).
   * @param failedAtMs when the failure happened, epoch ms (`lastFailureAtMs`). @default now
   * @returns `ok`, or `fenced` when another run took the lease over (nothing was written).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  fail(error: unknown, kind: 'transient' | 'permanent', failedAtMs?: number): Promise<LeaseWrite> {
    return this.#ops.fail(this.#record, error, kind, failedAtMs);
  }

  /**
   * Runs `fn` unless an earlier run of this key (same record generation) recorded the step:
   * then returns the recorded value without running `fn`. Cost: one consistent GetItem, plus
   * one conditional PutItem of the step record (`<jobPk>#step#<stepName>`) when `fn` runs.
   *
   * - The first run gets `fn`'s own value; a retry gets `JSON.parse` of the stored text. So only
   *   a value that reads back the same is stored (JSON values: plain objects, arrays, strings,
   *   finite numbers, booleans, null; faithful-json.ts). Any other (a `Date`, a `Map`, `NaN`,
   *   `undefined` in an array, a class instance...) is recorded as done but not stored (marker
   *   `not-json`, `valueOmittedDetail` naming the kind and the path): the retry then throws
   *   {@link StepValueNotStoredError} rather than return a changed value or run the step again.
   * - A crash between `fn`'s side effect and the step record re-runs the step on the retry:
   *   pass {@link idempotencyKey} to the external API to close that gap where it can.
   * - When two runs record the same step (a fenced run still going), the first record wins and
   *   the later run gets its value.
   * - A value over `maxResultBytes` is recorded as done but not stored (`over-size-cap`): the
   *   retry then throws {@link StepValueNotStoredError} (permanent) rather than run the step again.
   * @throws whatever `fn` throws (nothing is recorded), {@link StepValueNotStoredError},
   *   {@link IdempotencyStoreError}.
   */
  once<T>(stepName: string, fn: () => Promise<T>): Promise<T> {
    return this.#ops.once(this.#record, stepName, fn);
  }

  /**
   * Ends the run without counting it (conditional UpdateItem on this lease's token): RELEASED with
   * `attempt` set back by one, so the takeover by the next delivery (attempt + 1) runs with this
   * run's attempt number again. For a run that stopped to wait on a flow-control limit.
   * @returns `ok`, or `fenced` when another run took the lease over (nothing was written).
   * @throws {IdempotencyStoreError} when DynamoDB fails.
   */
  handBack(): Promise<LeaseWrite> {
    return this.#ops.handBack(this.#record);
  }

  /** SHA-256 hex of job type, key and step: see {@link deriveIdempotencyKey}. */
  idempotencyKey(stepName: string): string {
    return deriveIdempotencyKey(this.#record.jobType, this.#key, stepName);
  }
}
