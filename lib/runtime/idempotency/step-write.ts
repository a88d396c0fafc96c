/** The write of a `once` step record: the step done, with its value as stored, once per generation. */
import { Expr } from './expr.ts';
import { type JobRecord, N, randomToken, S, type StepRecord } from './record.ts';
import type { Storable } from './storable.ts';

/** A step write: the record to put (conditional PutItem) and its condition. */
export interface StepWrite {
  readonly step: StepRecord;
  readonly expr: Expr;
  readonly condition: string;
}

/**
 * The step record `pk` of step `stepName`, run under the lease of `record` and completed at `now`
 * (epoch ms), living `ttlSeconds`.
 */
export function stepWrite(
  record: JobRecord,
  stepName: string,
  pk: string,
  stored: Storable,
  now: number,
  ttlSeconds: number,
): StepWrite {
  const nowS = Math.floor(now / 1000);
  const step: StepRecord = {
    pk,
    recordType: 'step',
    status: 'COMPLETED',
    generation: record.generation,
    stepName,
    valueStored: stored.stored,
    value: stored.json,
    valueBytes: stored.bytes,
    valueOmittedReason: stored.reason,
    valueOmittedDetail: stored.detail,
    expiresAt: nowS + ttlSeconds,
    completedAtMs: now,
    attempt: record.attempt,
    leaseToken: record.leaseToken,
    // Lets an SDK retry of this very put (after a lost response) recognise its own record.
    writeId: randomToken(),
  };
  const expr = new Expr();
  // Race prevented: two runs of the same step in one generation (a fenced run still going
  // while its successor runs, or a repeated step name) both record it; the first record wins
  // and every later run, this one included, returns that one value. A record of an older
  // generation (the job key started over after its record expired) or past its TTL is a
  // leftover and is replaced.
  const condition = `attribute_not_exists(pk) OR expiresAt <= ${expr.v(N(nowS))} OR generation <> ${expr.v(S(record.generation))}`;
  return { step, expr, condition };
}
