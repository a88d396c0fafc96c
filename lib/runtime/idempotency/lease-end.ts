/**
 * The writes that end a lease: completion (COMPLETED with the result) and failure (RELEASED
 * after a transient failure, FAILED after a permanent one). Both are UpdateItems fenced by the
 * lease token.
 */
import { Expr } from './expr.ts';
import { BOOL, type JobRecord, type JobRecordStatus, MAX_ERROR_BYTES, N, S, truncateUtf8 } from './record.ts';
import type { Storable } from './storable.ts';

/** A fenced UpdateItem: its update and condition expressions. */
export interface FencedUpdate {
  readonly update: string;
  readonly expr: Expr;
  readonly condition: string;
}

/** Completion of the lease of `record` at `now` (epoch ms): COMPLETED with the result as `stored`. */
export function completionWrite(record: JobRecord, stored: Storable, now: number): FencedUpdate {
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
  if (stored.detail !== undefined)
    sets.push(
      `${expr.n('resultOmittedDetail')} = ${expr.v(S(truncateUtf8(stored.detail, MAX_ERROR_BYTES)))}`,
    );
  const condition = fencingCondition(expr, record.leaseToken);
  return { update: `SET ${sets.join(', ')}`, expr, condition };
}

/** The status a failure of each kind leaves the record in. */
export function failureStatus(kind: 'transient' | 'permanent'): JobRecordStatus {
  return kind === 'transient' ? 'RELEASED' : 'FAILED';
}

/**
 * Failure of the lease of `record` at `now` (epoch ms): {@link failureStatus} with the error as
 * evidence (`lastError` cut to {@link MAX_ERROR_BYTES}, failure times).
 */
export function failureWrite(
  record: JobRecord,
  error: unknown,
  kind: 'transient' | 'permanent',
  now: number,
): FencedUpdate {
  const expr = new Expr();
  const nowV = expr.v(N(now));
  const sets = [
    `${expr.n('status')} = ${expr.v(S(failureStatus(kind)))}`,
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
  return { update, expr, condition };
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
