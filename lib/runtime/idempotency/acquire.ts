/**
 * The acquisition write of `begin`: the new IN_PROGRESS record that takes the lease, and the
 * condition under which it may be put (no live record, or the very record that was read).
 */
import { Expr } from './expr.ts';
import type { BeginRequest } from './guard.ts';
import type { ResolvedStoreLimits } from './options.ts';
import { type JobRecord, N, randomToken, S } from './record.ts';

/** How the next acquisition write is built: from nothing, or from the old record just read. */
export type AcquirePlan =
  | { readonly kind: 'fresh' }
  | { readonly kind: 'rerun' | 'redrive' | 'dead-letter'; readonly old: JobRecord };

/** An acquisition write: the record to put (conditional PutItem) and its condition. */
export interface AcquisitionWrite {
  readonly record: JobRecord;
  readonly expr: Expr;
  readonly condition: string;
}

/**
 * The acquisition write of a plan at `now` (epoch ms): a fresh record (attempt 1, a new
 * generation), or a takeover of `plan.old`: `rerun` (attempt + 1), `dead-letter` (no run: the
 * attempt stays, marked interrupted), `redrive` (a new cycle of attempts).
 */
export function acquisitionWrite(
  plan: AcquirePlan,
  request: BeginRequest,
  pk: string,
  now: number,
  limits: Pick<ResolvedStoreLimits, 'recordTtlSeconds' | 'leaseMarginMs'>,
): AcquisitionWrite {
  const nowS = Math.floor(now / 1000);
  const base = {
    pk,
    recordType: 'job' as const,
    status: 'IN_PROGRESS' as const,
    leaseToken: randomToken(),
    leaseExpiresAtMs: request.leaseExpiresAtMs,
    expiresAt: nowS + limits.recordTtlSeconds,
    payloadHash: request.payloadHash,
    jobType: request.jobType,
    messageId: request.messageId,
    parentJob: request.parentJob,
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
    const condition = `attribute_not_exists(pk) OR expiresAt <= ${expr.v(N(nowS))}`;
    const record: JobRecord = {
      ...base,
      attempt: 1,
      generation: randomToken(),
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
  // failure evidence), a read-modify-write. Requiring the token and status that were read means
  // the record is unchanged since: every acquisition writes a new random token, and the writes
  // that end a lease change the status, so a (token, status) pair never comes back. Of two
  // workers taking over the same expired or released lease, only the first put passes; a
  // completion or release that landed in between is never overwritten; and a lease that was
  // renewed by another acquisition (new token) is not stolen.
  let condition = `leaseToken = ${expr.v(S(old.leaseToken))} AND ${expr.n('status')} = ${expr.v(S(old.status))}`;
  if (interrupted) {
    // Race prevented: a live lease is never taken over, even if the clock of this worker runs
    // ahead: the lease must have ended `leaseMarginMs` before now.
    condition += ` AND leaseExpiresAtMs < ${expr.v(N(now - limits.leaseMarginMs))}`;
  }
  return { record, expr, condition };
}
