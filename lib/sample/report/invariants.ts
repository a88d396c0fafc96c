/**
 * The invariants of a local run (the run fails when any does not hold), checked on what
 * build.ts found in the facts:
 * 1. no job lost: every job sent or enqueued ended completed or dead-lettered, once every queue
 *    is empty. When the deadline passes first, the jobs not final yet are `unfinished`, not lost:
 *    the run is incomplete (not a pass, not an invariant failure) and this invariant is skipped;
 * 2. one side effect per idempotency key, and exactly one per completed job that calls an
 *    external API (none missing, none duplicated);
 * 3. no per-user order violation on the FIFO queue;
 * 4. (when `requireDeadLetterEvidence`) every dead letter carries the worker's evidence
 *    (`ErrorName`, `ErrorReason`, `Attempts`): a message moved by the queue's redrive policy
 *    behind the worker's back has none;
 * 5. (when the idempotency tables were scanned at the end) no record is still `IN_PROGRESS` past
 *    its lease: nothing will ever take it over once the queues drained (skipped at the deadline);
 * 6. (when `requireDeadLetterEvidence` and the workers' metrics were collected) the workers'
 *    `JobDeadLettered` metric counts at least every dead-lettered job: a dead letter never goes
 *    uncounted, crashes included (a job dead-lettered twice, e.g. after a lost response, may
 *    count twice; skipped at the deadline).
 * 7. (when the run has jobs sent for later and schedule firings) the time invariants of
 *    schedules.ts: schedules fired, delayed jobs run and none early, cancelled jobs never ran,
 *    firings delivered twice absorbed, the nightly run's backlog invoiced (build.ts adds them).
 *
 * Warning (shown, does not fail the run): a dead letter that is neither a deliberate bad
 * message, an out-of-stock booking, nor a fault the fake service injected into that very job.
 * On an overloaded machine real timeouts can use up a job's attempts; the system then did the
 * right thing (retried, then dead-lettered with evidence), but the cause deserves a look.
 */
import type { IdempotencyRecordSummary } from '../workload/idempotency-records.ts';
import type { ReportFacts } from './facts.ts';
import type { OrderViolation } from './order.ts';

/** One checked invariant or warning. */
export interface InvariantResult {
  readonly name: string;
  /** `invariant`: the run fails when not ok; `warning`: shown only. */
  readonly severity: 'invariant' | 'warning';
  readonly ok: boolean;
  /** What was found, e.g. `0` or `2 (b-1, b-9)`. */
  readonly actual: string;
  readonly expected: string;
  /** Why it was not checked (e.g. the deadline was reached); `ok` is then false but it fails nothing. */
  readonly skipped?: string;
}

/** What build.ts found in the facts, that the invariants are checked on. */
export interface Findings {
  /** Keys of the lost jobs, all of them. */
  readonly lostKeys: readonly string[];
  /** Jobs not final when the deadline passed. */
  readonly unfinished: number;
  readonly deadLettered: number;
  /** Idempotency keys with a side effect. */
  readonly keys: number;
  /** Keys with more than one side effect (`key ×n`), all of them. */
  readonly keysOverOne: readonly string[];
  readonly maxPerKey: number;
  /** Completed jobs whose side effect happened more than once / never, all of them. */
  readonly duplicated: readonly string[];
  readonly missing: readonly string[];
  readonly violations: readonly OrderViolation[];
  /** Dead letters without the worker's evidence attributes. */
  readonly withoutEvidence: number;
  /** Dead letters without a deliberate or injected cause. */
  readonly unexplained: number;
}

/**
 * The invariants (and the warning) of the module's list, in that order; those that do not apply
 * to these facts are left out, and those that cannot be judged at a deadline are `skipped`.
 */
export function checkInvariants(facts: ReportFacts, found: Findings): InvariantResult[] {
  const {
    lostKeys,
    unfinished,
    deadLettered,
    keys,
    keysOverOne,
    maxPerKey,
    duplicated,
    missing,
    violations,
    withoutEvidence,
    unexplained,
  } = found;
  return [
    facts.timedOut
      ? {
          name: 'jobs lost (sent or enqueued, neither completed nor dead-lettered)',
          severity: 'invariant',
          ok: false,
          actual: 'not checked',
          expected: '0',
          skipped: `${facts.interrupted ? 'interrupted (Ctrl-C)' : 'deadline reached'}, ${unfinished} jobs not finished`,
        }
      : {
          name: 'jobs lost (sent or enqueued, neither completed nor dead-lettered)',
          severity: 'invariant',
          ok: lostKeys.length === 0,
          actual: lostKeys.length === 0 ? '0' : `${lostKeys.length} (${lostKeys.slice(0, 3).join(', ')})`,
          expected: '0',
        },
    {
      name: 'side effects per idempotency key',
      severity: 'invariant',
      ok: maxPerKey <= 1,
      actual: keysOverOne.length === 0 ? `all 1 (${keys} keys)` : `${keysOverOne.length} keys > 1`,
      expected: 'all 1',
    },
    {
      name: 'completed jobs with a duplicated or missing side effect',
      severity: 'invariant',
      ok: duplicated.length === 0 && missing.length === 0,
      actual: `${duplicated.length} duplicated, ${missing.length} missing`,
      expected: '0',
    },
    {
      name: 'per-user order violations on the FIFO queue',
      severity: 'invariant',
      ok: violations.length === 0,
      actual: String(violations.length),
      expected: '0',
    },
    ...(facts.requireDeadLetterEvidence
      ? [
          {
            name: 'dead letters without evidence (ErrorName, ErrorReason, Attempts)',
            severity: 'invariant',
            ok: withoutEvidence === 0,
            actual: String(withoutEvidence),
            expected: '0',
          } satisfies InvariantResult,
        ]
      : []),
    ...(facts.idempotency
      ? [stuckRecordsInvariant(facts.idempotency, facts.timedOut, facts.interrupted === true)]
      : []),
    ...(facts.requireDeadLetterEvidence && facts.workerMetrics !== undefined && !facts.timedOut
      ? [deadLetterMetricInvariant(facts.workerMetrics.JobDeadLettered ?? 0, deadLettered)]
      : []),
    {
      name: 'dead letters without an injected or deliberate cause',
      severity: 'warning',
      ok: unexplained === 0,
      actual: String(unexplained),
      expected: '0',
    },
  ];
}

/** Invariant 6: the workers' `JobDeadLettered` sum against the dead-lettered jobs. */
function deadLetterMetricInvariant(metric: number, deadLettered: number): InvariantResult {
  return {
    name: "dead-lettered jobs the workers' JobDeadLettered metric did not count",
    severity: 'invariant',
    ok: metric >= deadLettered,
    actual: metric >= deadLettered ? '0' : String(deadLettered - metric),
    expected: '0',
  };
}

/** The stuck-record invariant from the end-of-run scan; skipped when the deadline came first. */
function stuckRecordsInvariant(
  scan: IdempotencyRecordSummary,
  timedOut: boolean,
  interrupted: boolean,
): InvariantResult {
  const name = 'idempotency records IN_PROGRESS past their lease (table scan at the end)';
  if (timedOut) {
    return {
      name,
      severity: 'invariant',
      ok: false,
      actual: 'not checked',
      expected: '0',
      skipped: `${interrupted ? 'interrupted (Ctrl-C)' : 'deadline reached'}: jobs still in flight may hold leases`,
    };
  }
  return {
    name,
    severity: 'invariant',
    ok: scan.stuckInProgress === 0,
    actual:
      scan.stuckInProgress === 0
        ? `0 of ${scan.records} records`
        : `${scan.stuckInProgress} (${scan.stuckExamples.slice(0, 3).join(', ')})`,
    expected: '0',
  };
}
