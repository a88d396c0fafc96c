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
      if (isCopyOfDeadLetter(old, request)) return { status: 'dead-lettered', copyOf: old.messageId };
      return { kind: 'redrive', old };
  }
}

/**
 * Whether a message of a job whose record is FAILED (dead-lettered), under another `messageId`
 * than the one dead-lettered, is a copy of the job rather than a redrive of its dead letter.
 *
 * Rule: a copy is a message SQS accepted (`SentTimestamp`) before the worker began dead-lettering
 * the job (the record's `lastFailureAtMs`, written by `lease.fail(error, 'permanent', failedAtMs)`
 * with the time taken before the DLQ send: the DLQ evidence's `LastFailureAt`). A redrive is sent
 * after its dead letter exists, so after that time, whichever way it is made:
 * - SQS's own redrive (`StartMessageMoveTask`, the console's "Start DLQ redrive"): "All redriven
 *   messages are considered new messages with a new messageID and enqueueTime" (Amazon SQS
 *   Developer Guide, "Learn how to configure a dead-letter queue redrive",
 *   sqs-configure-dead-letter-queue-redrive.html); `SentTimestamp` is that enqueue time (the
 *   retention of a message, counted from its enqueue time, is reset by the move);
 * - our redrive (lib/ops/redrive/) and any other tool: a SendMessage of the body, whose
 *   `SentTimestamp` is "the time the message was sent to the queue" (ReceiveMessage API
 *   reference, `MessageSystemAttributeName`).
 * Message attributes are not used: our redrive does not keep the evidence, and a tool may keep
 * none. When in doubt the message runs (never swallow an operator's redrive): no `SentTimestamp`
 * (a hand-made event), no `lastFailureAtMs`, or the same millisecond. A copy sent after the
 * dead-lettering began (a producer sending the job again later) runs as a redrive would.
 *
 * The two times come from two clocks (SQS's and the worker's, both NTP-synchronised in AWS): a
 * redrive would be taken for a copy only if it came within the skew of the dead-lettering, and
 * it cannot come before the DLQ send that follows that time.
 */
export function isCopyOfDeadLetter(
  old: Pick<JobRecord, 'lastFailureAtMs'>,
  request: Pick<BeginRequest, 'sentAtMs'>,
): boolean {
  const { sentAtMs } = request;
  const deadLetteringAtMs = old.lastFailureAtMs;
  if (sentAtMs === undefined || deadLetteringAtMs === undefined) return false;
  return sentAtMs < deadLetteringAtMs;
}
