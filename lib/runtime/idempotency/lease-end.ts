/**
 * The writes that end a lease: completion (COMPLETED with the result) and failure (RELEASED
 * after a transient failure, FAILED after a permanent one). Both are UpdateItems fenced by the
 * lease token.
 */
import { Expr } from './expr.ts';
import {
  type JobRecord,
  type JobRecordStatus,
  MAX_ERROR_BYTES,
  N,
  resultAttributes,
  S,
  truncateUtf8,
} from './record.ts';
import type { Storable } from './storable.ts';

/** A fenced UpdateItem: its update and condition expressions. */
export interface FencedUpdate {
  readonly update: string;
  readonly expr: Expr;
  readonly condition: string;
}

/** Most UTF-8 bytes of child links (`childJobs`) a record keeps; more are counted in `childJobsNotLinked`. */
export const MAX_CHILD_LINK_BYTES = 2048;

/**
 * Completion of the lease of `record` at `now` (epoch ms): COMPLETED with the result as `stored`,
 * and the children's record keys as `childJobs` (a String Set, up to {@link MAX_CHILD_LINK_BYTES}).
 */
export function completionWrite(
  record: JobRecord,
  stored: Storable,
  now: number,
  children?: readonly string[],
): FencedUpdate {
  const expr = new Expr();
  // `completedAtMs` and `updatedAtMs` are read as `endedAtMs`; a stored result needs neither
  // `resultStored` nor `resultBytes` (record.ts, resultAttributes).
  const sets = [`${expr.n('status')} = ${expr.v(S('COMPLETED'))}`, `endedAtMs = ${expr.v(N(now))}`];
  const attributes = resultAttributes({
    stored: stored.stored,
    json: stored.json,
    bytes: stored.bytes,
    reason: stored.reason,
    detail: stored.detail,
  });
  for (const [name, value] of Object.entries(attributes)) sets.push(`${expr.n(name)} = ${expr.v(value)}`);
  if (children !== undefined && children.length > 0) {
    const linked: string[] = [];
    let bytes = 0;
    for (const pk of new Set(children)) {
      bytes += Buffer.byteLength(pk, 'utf8');
      if (bytes > MAX_CHILD_LINK_BYTES) break;
      linked.push(pk);
    }
    const notLinked = new Set(children).size - linked.length;
    if (linked.length > 0) sets.push(`childJobs = ${expr.v({ SS: linked })}`);
    if (notLinked > 0) sets.push(`childJobsNotLinked = ${expr.v(N(notLinked))}`);
  }
  const condition = fencingCondition(expr, record.leaseToken);
  return { update: `SET ${sets.join(', ')}`, expr, condition };
}

/** The status a failure of each kind leaves the record in. */
export function failureStatus(kind: 'transient' | 'permanent'): JobRecordStatus {
  return kind === 'transient' ? 'RELEASED' : 'FAILED';
}

/**
 * Failure of the lease of `record` at `now` (epoch ms): {@link failureStatus} with the error as
 * evidence (`lastError` cut to {@link MAX_ERROR_BYTES}, failure times: `lastFailureAtMs` and, if
 * unset, `firstFailureAtMs` are `failedAtMs`; `endedAtMs` is `now`).
 * @param failedAtMs when the failure happened, epoch ms: for a dead-lettered job, the time taken
 *   before its DLQ send (decide.ts, `isCopyOfDeadLetter`). @default now
 */
export function failureWrite(
  record: JobRecord,
  error: unknown,
  kind: 'transient' | 'permanent',
  now: number,
  failedAtMs: number = now,
): FencedUpdate {
  const expr = new Expr();
  const nowV = expr.v(N(now));
  const failedV = failedAtMs === now ? nowV : expr.v(N(failedAtMs));
  const sets = [
    `${expr.n('status')} = ${expr.v(S(failureStatus(kind)))}`,
    `lastError = ${expr.v(S(truncateUtf8(describeError(error), MAX_ERROR_BYTES)))}`,
    `lastErrorKind = ${expr.v(S(kind))}`,
    `lastFailureAtMs = ${failedV}`,
    `firstFailureAtMs = if_not_exists(firstFailureAtMs, ${failedV})`,
    `endedAtMs = ${nowV}`,
  ];
  // A permanent failure means the worker dead-lettered the job: a redrive of it must run.
  const update = `SET ${sets.join(', ')}${kind === 'permanent' ? ' REMOVE interruptedAtMs' : ''}`;
  const condition = fencingCondition(expr, record.leaseToken);
  return { update, expr, condition };
}

/**
 * The hand-back of the lease of `record` at `now` (epoch ms): RELEASED with the attempt set back
 * by one (`attempt - 1`, 0 after a first run), no failure evidence written: the run waited on a
 * flow-control limit, it did not fail. The takeover of a RELEASED record adds one again.
 */
export function handBackWrite(record: JobRecord, now: number): FencedUpdate {
  const expr = new Expr();
  const sets = [
    `${expr.n('status')} = ${expr.v(S('RELEASED'))}`,
    `attempt = ${expr.v(N(Math.max(0, record.attempt - 1)))}`,
    `endedAtMs = ${expr.v(N(now))}`,
  ];
  const condition = fencingCondition(expr, record.leaseToken);
  return { update: `SET ${sets.join(', ')}`, expr, condition };
}

/**
 * The fencing condition of complete and release. Race prevented: a slow run whose lease expired
 * and was taken over (new token) must not complete or release the newer run's record; and a
 * record this lease already ended (status no longer IN_PROGRESS) is not written twice.
 * Deliberately no lease-expiry test: a run that finishes late but was not taken over may still
 * record its completion, which saves a needless rerun.
 */
function fencingCondition(expr: Expr, leaseToken: string): string {
  return `leaseToken = ${expr.v(S(leaseToken))} AND ${expr.n('status')} = ${expr.v(S('IN_PROGRESS'))}`;
}

/** `Name: message` of anything thrown. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
