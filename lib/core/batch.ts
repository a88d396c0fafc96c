/**
 * Batches (fan-out and fan-in): what the producer that starts a batch and the workers that count
 * it share. The ids (all derived, so a re-run starts the same batch and sends no second child),
 * the keys of the batch's items in the idempotency table, the batch policy, the checks of a
 * batch spec, and the batch item's format (docs/contracts.md, "Batches").
 *
 * A batch is one item `batch#<batchId>` (counts, policy, the completion job's envelope) and one
 * item per counted child `batch#<batchId>#child#<childId>` (its outcome), in the idempotency table.
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { shownValue } from './shown-value.ts';

/**
 * What a dead-lettered child does to its batch. `complete-with-failures`: it counts (as
 * dead-lettered) and the completion job lists it. `wait-for-redrive`: it does not count; the batch
 * waits until the child is redriven and completes (or a person decides), its watchdog reporting it
 * as overdue meanwhile.
 */
export type BatchDeadLetterPolicy = 'wait-for-redrive' | 'complete-with-failures';

/** The values of {@link BatchDeadLetterPolicy}. */
export const BATCH_DEAD_LETTER_POLICIES: readonly BatchDeadLetterPolicy[] = [
  'wait-for-redrive',
  'complete-with-failures',
];

/** Default `openLimitSeconds` of a batch: 1 hour. */
export const DEFAULT_BATCH_OPEN_LIMIT_SECONDS = 3600;
/**
 * Longest `openLimitSeconds`: 12 hours. The watchdog is sent with an SQS delay (at most 900 s)
 * and comes back with a visibility timeout (at most 12 h, ChangeMessageVisibility API) until due.
 */
export const MAX_BATCH_OPEN_LIMIT_SECONDS = 43_200;
/** Most children of one batch: the batch's counters and the completion job's reads stay cheap below it. */
export const MAX_BATCH_CHILDREN = 100_000;
/** Longest batch id given by a producer (`JobClient.startBatch({ id })`). */
export const MAX_BATCH_ID_CHARS = 128;
/** Largest completion job envelope kept on the batch item (JSON, UTF-8 bytes): completion data carries ids. */
export const MAX_COMPLETION_ENVELOPE_BYTES = 64 * 1024;
/** How long batch items are kept after the batch's open limit, in seconds (TTL `expiresAt`): 14 days. */
export const BATCH_RECORD_TTL_SECONDS = 14 * 24 * 60 * 60;

/** A UUID-shaped id from a SHA-256 of the parts (JSON-encoded, so parts never run together). */
function derivedId(parts: readonly unknown[]): string {
  const hash = createHash('sha256').update(JSON.stringify(parts)).digest('hex');
  return `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20, 32)}`;
}

/**
 * Id of the `n`-th batch (0-based) a job's run starts: derived from the job's identity, so a
 * re-run of the job starts the same batch (its item and children are found, not made again).
 */
export function batchIdOf(parent: { readonly source: string; readonly id: string }, n: number): string {
  return derivedId(['batch', parent.source, parent.id, n]);
}

/** Envelope id of the child at `index` (0-based) of a batch: the same on every send of the batch. */
export function batchChildId(batchId: string, index: number): string {
  return derivedId(['batch-child', batchId, index]);
}

/** Envelope id of a batch's completion job. */
export function batchCompletionId(batchId: string): string {
  return derivedId(['batch-completion', batchId]);
}

/** Envelope id of a batch's watchdog message. */
export function batchWatchdogId(batchId: string): string {
  return derivedId(['batch-watchdog', batchId]);
}

/** Partition key of a batch's item: `batch#<batchId>`. */
export function batchKey(batchId: string): string {
  return `batch#${batchId}`;
}

/** Partition key of a counted child's outcome item: `batch#<batchId>#child#<childId>`. */
export function batchChildKey(batchId: string, childId: string): string {
  return `batch#${batchId}#child#${childId}`;
}

/** What is wrong with a producer-given batch id; undefined when fine. */
export function batchIdProblem(id: unknown): string | undefined {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_BATCH_ID_CHARS || !/^[!-~]+$/.test(id)) {
    return `id must be 1-${MAX_BATCH_ID_CHARS} printable ASCII characters without space, got ${shownValue(id)}`;
  }
  return undefined;
}

/** What is wrong with the settings of a batch (policy, open limit, children count); empty when fine. */
export function batchSettingsProblems(settings: {
  readonly children: unknown;
  readonly onChildDeadLettered?: unknown;
  readonly openLimitSeconds?: unknown;
}): string[] {
  const problems: string[] = [];
  if (!Array.isArray(settings.children)) {
    problems.push('children must be an array of { job, data, options? }');
  } else if (settings.children.length > MAX_BATCH_CHILDREN) {
    problems.push(`children must be at most ${MAX_BATCH_CHILDREN}, got ${settings.children.length}`);
  }
  const policy = settings.onChildDeadLettered;
  if (policy !== undefined && !BATCH_DEAD_LETTER_POLICIES.includes(policy as BatchDeadLetterPolicy)) {
    problems.push(
      `onChildDeadLettered must be 'wait-for-redrive' or 'complete-with-failures', got ${shownValue(policy)}`,
    );
  }
  const limit = settings.openLimitSeconds;
  if (
    limit !== undefined &&
    (typeof limit !== 'number' ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > MAX_BATCH_OPEN_LIMIT_SECONDS)
  ) {
    problems.push(
      `openLimitSeconds must be an integer 1-${MAX_BATCH_OPEN_LIMIT_SECONDS} (12 h), got ${shownValue(limit)}`,
    );
  }
  return problems;
}

/** State of a batch: `open` until its completion job completed. */
export type BatchState = 'open' | 'completed';

/** The batch item (`batch#<batchId>`). */
export interface BatchRecord {
  readonly pk: string;
  readonly recordType: 'batch';
  readonly batchId: string;
  /** Children in the batch. */
  readonly total: number;
  /** Children completed (counted once each). */
  readonly succeeded: number;
  /** Children dead-lettered and counted (`complete-with-failures`). */
  readonly deadLettered: number;
  /** Children dead-lettered and waiting for their redrive (`wait-for-redrive`): not counted. */
  readonly waiting: number;
  readonly policy: BatchDeadLetterPolicy;
  /** The completion job's envelope, as the SQS body every sender sends (same id: one job). */
  readonly completionEnvelope: string;
  /** Logical queue of the completion job (resolved by the sender's queue URLs). */
  readonly completionQueue: string;
  /** The job reference (`<type>#<key>`) of the job that started the batch, when a job did. */
  readonly parentJob?: string;
  readonly createdAtMs: number;
  readonly openLimitSeconds: number;
  readonly state: BatchState;
  readonly completedAtMs?: number;
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
  /**
   * SHA-256 of the batch's children and completion job (client/batch-start.ts, `batchSpecDigest`):
   * a start under the same id must match it. Absent on items written before it was kept.
   */
  readonly specDigest?: string;
}

/** Children counted so far: completed plus dead-lettered under `complete-with-failures`. */
export function countedChildren(record: Pick<BatchRecord, 'succeeded' | 'deadLettered'>): number {
  return record.succeeded + record.deadLettered;
}

/** Whether every child of the batch is counted (its completion job is due, or ran). */
export function isBatchDone(record: Pick<BatchRecord, 'succeeded' | 'deadLettered' | 'total'>): boolean {
  return countedChildren(record) >= record.total;
}

/** A counted child's outcome (`batch#<batchId>#child#<childId>`). */
export type BatchChildStatus = 'succeeded' | 'dead-lettered' | 'waiting-for-redrive';

/**
 * The outcome item of one child. Its `status` is kept in the attribute `childStatus`, apart from
 * the job records' lease `status`, which tools reading the table count.
 */
export interface BatchChildRecord {
  readonly pk: string;
  readonly recordType: 'batch-child';
  readonly batchId: string;
  readonly childId: string;
  readonly jobType: string;
  readonly status: BatchChildStatus;
  /** The child's result as JSON text, when it was stored (under the store's size cap). */
  readonly resultJson?: string;
  /** Why a dead-lettered child was dead-lettered (`ErrorReason` of its dead letter). */
  readonly reason?: string;
  /** The dead-lettered child's error, `Name: message`. */
  readonly error?: string;
  readonly atMs: number;
  readonly expiresAt: number;
}

const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number): AttributeValue => ({ N: String(Math.trunc(value)) });

/** The batch item's attributes. */
export function batchRecordToItem(record: BatchRecord): Record<string, AttributeValue> {
  return {
    pk: S(record.pk),
    recordType: S('batch'),
    batchId: S(record.batchId),
    total: N(record.total),
    succeeded: N(record.succeeded),
    deadLettered: N(record.deadLettered),
    waiting: N(record.waiting),
    policy: S(record.policy),
    completionEnvelope: S(record.completionEnvelope),
    completionQueue: S(record.completionQueue),
    ...(record.parentJob === undefined ? {} : { parentJob: S(record.parentJob) }),
    createdAtMs: N(record.createdAtMs),
    openLimitSeconds: N(record.openLimitSeconds),
    state: S(record.state),
    ...(record.completedAtMs === undefined ? {} : { completedAtMs: N(record.completedAtMs) }),
    expiresAt: N(record.expiresAt),
    ...(record.specDigest === undefined ? {} : { specDigest: S(record.specDigest) }),
  };
}

/** Thrown when an item of a batch key is not the batch item it should be. */
export class BatchRecordError extends Error {
  constructor(pk: string, problem: string) {
    super(`batch item ${pk} is malformed: ${problem}`);
    this.name = 'BatchRecordError';
  }
}

function str(item: Record<string, AttributeValue>, name: string, pk: string): string {
  const value = item[name]?.S;
  if (value === undefined) throw new BatchRecordError(pk, `${name} is missing or not a string`);
  return value;
}

function num(item: Record<string, AttributeValue>, name: string, pk: string): number {
  const value = Number(item[name]?.N);
  if (!Number.isFinite(value)) throw new BatchRecordError(pk, `${name} is missing or not a number`);
  return value;
}

/** Reads a batch item. @throws {BatchRecordError} when it is not one. */
export function parseBatchRecord(item: Record<string, AttributeValue>): BatchRecord {
  const pk = item.pk?.S ?? '(no pk)';
  if (item.recordType?.S !== 'batch') throw new BatchRecordError(pk, `recordType is ${item.recordType?.S}`);
  const policy = str(item, 'policy', pk) as BatchDeadLetterPolicy;
  const state = str(item, 'state', pk) as BatchState;
  const parentJob = item.parentJob?.S;
  const completedAtMs = item.completedAtMs?.N;
  const specDigest = item.specDigest?.S;
  return {
    pk,
    recordType: 'batch',
    batchId: str(item, 'batchId', pk),
    total: num(item, 'total', pk),
    succeeded: num(item, 'succeeded', pk),
    deadLettered: num(item, 'deadLettered', pk),
    waiting: num(item, 'waiting', pk),
    policy,
    completionEnvelope: str(item, 'completionEnvelope', pk),
    completionQueue: str(item, 'completionQueue', pk),
    ...(parentJob === undefined ? {} : { parentJob }),
    createdAtMs: num(item, 'createdAtMs', pk),
    openLimitSeconds: num(item, 'openLimitSeconds', pk),
    state,
    ...(completedAtMs === undefined ? {} : { completedAtMs: Number(completedAtMs) }),
    expiresAt: num(item, 'expiresAt', pk),
    ...(specDigest === undefined ? {} : { specDigest }),
  };
}

/** The outcome item's attributes. */
export function batchChildRecordToItem(record: BatchChildRecord): Record<string, AttributeValue> {
  return {
    pk: S(record.pk),
    recordType: S('batch-child'),
    batchId: S(record.batchId),
    childId: S(record.childId),
    jobType: S(record.jobType),
    childStatus: S(record.status),
    ...(record.resultJson === undefined ? {} : { resultJson: S(record.resultJson) }),
    ...(record.reason === undefined ? {} : { reason: S(record.reason) }),
    ...(record.error === undefined ? {} : { error: S(record.error) }),
    atMs: N(record.atMs),
    expiresAt: N(record.expiresAt),
  };
}

/** Reads a child's outcome item. @throws {BatchRecordError} when it is not one. */
export function parseBatchChildRecord(item: Record<string, AttributeValue>): BatchChildRecord {
  const pk = item.pk?.S ?? '(no pk)';
  if (item.recordType?.S !== 'batch-child') {
    throw new BatchRecordError(pk, `recordType is ${item.recordType?.S}`);
  }
  const resultJson = item.resultJson?.S;
  const reason = item.reason?.S;
  const error = item.error?.S;
  return {
    pk,
    recordType: 'batch-child',
    batchId: str(item, 'batchId', pk),
    childId: str(item, 'childId', pk),
    jobType: str(item, 'jobType', pk),
    status: str(item, 'childStatus', pk) as BatchChildStatus,
    ...(resultJson === undefined ? {} : { resultJson }),
    ...(reason === undefined ? {} : { reason }),
    ...(error === undefined ? {} : { error }),
    atMs: num(item, 'atMs', pk),
    expiresAt: num(item, 'expiresAt', pk),
  };
}

/** TTL (epoch seconds) of a batch's items created at `createdAtMs`. */
export function batchExpiresAt(createdAtMs: number, openLimitSeconds: number): number {
  return Math.floor(createdAtMs / 1000) + openLimitSeconds + BATCH_RECORD_TTL_SECONDS;
}
