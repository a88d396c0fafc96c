/**
 * What `begin` makes of the record a key already has: the outcome to answer (completed,
 * dead-lettered, busy), or the takeover to try next.
 */
import type { AcquirePlan } from './acquire.ts';
import { mismatch } from './begin-request.ts';
import type { CompletedKeyCache } from './cache.ts';
import type { BeginOutcome, BeginRequest } from './guard.ts';
import type { ResolvedStoreLimits } from './options.ts';
import { parseStoredJson } from './read-back.ts';
import { isExpired, type JobRecord } from './record.ts';

/** Shortest `retryAfterMs` of a `busy` outcome, in ms (SQS visibility has 1-second resolution). */
const MIN_BUSY_RETRY_MS = 1_000;

/**
 * What the record a key already has (returned by a failed acquisition, or re-read) means for a
 * request at `now` (epoch ms): an outcome, or the next takeover to try. A COMPLETED record is
 * remembered in `cache`.
 * @throws {PayloadMismatchError} when the record holds a different payload hash.
 * @throws {IdempotencyRecordError} when its stored result is not JSON text.
 */
export function decide(
  old: JobRecord,
  request: BeginRequest,
  pk: string,
  now: number,
  limits: Pick<ResolvedStoreLimits, 'busyRetryAfterMs' | 'leaseMarginMs'>,
  cache: CompletedKeyCache,
): BeginOutcome | AcquirePlan {
  if (isExpired(old, now)) return { kind: 'fresh' };
  if (old.payloadHash !== request.payloadHash) throw mismatch(request, pk, old.payloadHash);
  switch (old.status) {
    case 'COMPLETED': {
      const resultStored = old.resultStored === true;
      const resultJson = resultStored ? old.result : undefined;
      // Parsed before caching: text that does not parse is never cached.
      const result = parseStoredJson(resultJson, pk, 'result');
      cache.set(pk, {
        payloadHash: old.payloadHash,
        resultJson,
        resultStored,
        expiresAt: old.expiresAt,
      });
      return { status: 'completed', result, resultStored };
    }
    case 'IN_PROGRESS': {
      const leaseLeftMs = old.leaseExpiresAtMs + limits.leaseMarginMs - now;
      if (leaseLeftMs >= 0) {
        const floor = Math.min(MIN_BUSY_RETRY_MS, limits.busyRetryAfterMs);
        return {
          status: 'busy',
          retryAfterMs: Math.min(limits.busyRetryAfterMs, Math.max(floor, leaseLeftMs)),
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
