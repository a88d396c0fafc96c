/** Checks of a {@link BeginRequest} against itself and against the record its key already has. */
import { JobError } from '../../core/errors.ts';
import type { LeaseExpiredPolicy } from '../job.ts';
import { PayloadMismatchError } from './errors.ts';
import type { BeginRequest } from './guard.ts';

const POLICIES: ReadonlySet<string> = new Set<LeaseExpiredPolicy>(['rerun', 'dead-letter']);

/** @throws {JobError} naming every invalid field (empty payload hash, non-finite `leaseExpiresAtMs`...). */
export function checkRequest(request: BeginRequest): void {
  const problems: string[] = [];
  if (
    typeof request.payloadHash !== 'string' ||
    request.payloadHash.length === 0 ||
    request.payloadHash.length > 256
  ) {
    problems.push('payloadHash must be a string of 1-256 characters');
  }
  if (typeof request.leaseExpiresAtMs !== 'number' || !Number.isFinite(request.leaseExpiresAtMs)) {
    problems.push(
      `leaseExpiresAtMs must be a finite number (epoch ms), got ${String(request.leaseExpiresAtMs)}`,
    );
  }
  if (!POLICIES.has(request.onLeaseExpired)) {
    problems.push(`onLeaseExpired must be 'rerun' or 'dead-letter', got ${String(request.onLeaseExpired)}`);
  }
  if (typeof request.messageId !== 'string') problems.push('messageId must be a string');
  if (
    request.sentAtMs !== undefined &&
    (typeof request.sentAtMs !== 'number' || !Number.isFinite(request.sentAtMs))
  ) {
    problems.push(`sentAtMs must be a finite number (epoch ms) or absent, got ${String(request.sentAtMs)}`);
  }
  if (problems.length > 0) {
    throw new JobError(
      `invalid idempotency request for ${request.jobType} ${request.key}: ${problems.join('; ')}`,
    );
  }
}

/** The error of a key already used with a different payload hash (stored or cached). */
export function mismatch(request: BeginRequest, pk: string, storedPayloadHash: string): PayloadMismatchError {
  return new PayloadMismatchError(
    `idempotency key ${JSON.stringify(request.key)} of ${request.jobType} was already used with a different payload (stored hash ${storedPayloadHash}, this one ${request.payloadHash})`,
    {
      context: {
        jobType: request.jobType,
        key: request.key,
        pk,
        storedPayloadHash,
        payloadHash: request.payloadHash,
      },
    },
  );
}
