/**
 * The batch invariants of a run (the nightly invoice run, lib/sample/nightly-invoices.ts): a
 * batch was started, every batch started completed (none hanging once the queues drained), and
 * each run's completion job did its side effect exactly once (the summary email, counted by the
 * fake mail API per business reference).
 */
import type { InvariantResult } from './invariants.ts';

/** What a run found of its batches. */
export interface BatchRunFacts {
  /** Batch items in the idempotency tables. */
  readonly started: number;
  /** Of those, completed (their completion job completed). */
  readonly completed: number;
  /** The batches still open, described (`<id> (<counted> of <total> counted)`). */
  readonly open: readonly string[];
  /** Nightly runs (the recurring schedule's firings), by run id, with the summary emails the fake mail API sent for each. */
  readonly summariesByRun: Readonly<Record<string, number>>;
}

/**
 * The invariants; `skipped` (the deadline passed before the queues drained) skips the ones that
 * need the run to be over.
 */
export function batchInvariants(facts: BatchRunFacts, skipped: string | undefined): InvariantResult[] {
  const runs = Object.entries(facts.summariesByRun);
  const notOnce = runs.filter(([, n]) => n !== 1).map(([run, n]) => `${run} ×${n}`);
  return [
    {
      name: 'batches started (the nightly invoice run)',
      severity: 'invariant',
      ok: skipped === undefined && facts.started >= runs.length && facts.started > 0,
      actual: String(facts.started),
      expected: `>= ${Math.max(1, runs.length)}`,
      ...(skipped === undefined ? {} : { skipped }),
    },
    {
      name: 'batches still open once the queues drained (none hanging)',
      severity: 'invariant',
      ok: skipped === undefined && facts.open.length === 0 && facts.completed === facts.started,
      actual:
        facts.open.length === 0
          ? `0 (${facts.completed} of ${facts.started} completed)`
          : `${facts.open.length} (${facts.open.slice(0, 5).join(', ')})`,
      expected: '0',
      ...(skipped === undefined ? {} : { skipped }),
    },
    {
      name: 'completion jobs run exactly once (one summary email per nightly run)',
      severity: 'invariant',
      ok: skipped === undefined && runs.length > 0 && notOnce.length === 0,
      actual:
        runs.length === 0
          ? 'no nightly run'
          : notOnce.length === 0
            ? `${runs.length} run${runs.length === 1 ? '' : 's'}, each once`
            : notOnce.join(', '),
      expected: 'each run exactly once',
      ...(skipped === undefined ? {} : { skipped }),
    },
  ];
}
