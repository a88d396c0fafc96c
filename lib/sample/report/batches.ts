/**
 * The batch invariants of a run (the nightly invoice run, lib/sample/nightly-invoices.ts): a
 * batch was started, every batch started completed (none hanging once the queues drained), and
 * each run's completion job did its side effect exactly once (the summary email, counted by the
 * fake mail API per business reference). With the soak's batches (`--batches N`,
 * lib/sample/soak-batches.ts), five more: each planned batch started once and completed, its
 * summary email sent once, the completion jobs an injected API 400 dead-lettered redriven (the
 * run's operator step, lib/sample/workload/soak-redrive.ts) and then run once, its children
 * counted exactly as planned, and the children counted dead-lettered are the ones in the DLQs. A
 * batch still open after the redrive fails the run: none is left waiting.
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
  /** The soak's batches (`--batches N`); undefined when the run sent none. */
  readonly soak?: SoakBatchFacts;
}

/** A batch item's counters, as the scan found them. */
export interface BatchCounters {
  readonly total: number;
  readonly succeeded: number;
  readonly deadLettered: number;
  readonly completed: boolean;
}

/** What a run planned and found of the soak's batches, by batch key (roots and nested ones). */
export interface SoakBatchFacts {
  /** Every batch the run meant to start, with its children and how many fail on purpose. */
  readonly planned: Readonly<Record<string, { readonly children: number; readonly failures: number }>>;
  /** The batch items found, by the batch key in their completion job's data (several: started twice). */
  readonly found: Readonly<Record<string, readonly BatchCounters[]>>;
  /** Summary emails the fake mail API sent for each batch key (the completion job's side effect). */
  readonly summaries: Readonly<Record<string, number>>;
  /** Distinct soak children in the DLQs (their envelope ids), read from the messages. */
  readonly childrenInDlqs: number;
  /**
   * Batch keys whose completion job is still in the DLQs at the end because the fake mail API
   * refused its email with an injected 400 (a permanent error): the run's redrive did not bring it
   * through (refused again in its last round, or not moved); its batch is open, and fails the run.
   */
  readonly completionsRefused?: readonly string[];
  /**
   * Batch keys of the completion jobs the run redrove after an injected API 400 dead-lettered
   * them (one entry per redrive: a key twice when its job was refused again and redriven again).
   */
  readonly redrivenCompletions?: readonly string[];
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
    ...(facts.soak === undefined ? [] : soakBatchInvariants(facts.soak, skipped)),
  ];
}

/** At most five examples then `… (N in all)`. */
function examples(list: readonly string[]): string {
  return list.length <= 5 ? list.join(', ') : `${list.slice(0, 5).join(', ')} … (${list.length} in all)`;
}

/** The soak batches' invariants (pure): see the file's docstring. */
export function soakBatchInvariants(soak: SoakBatchFacts, skipped: string | undefined): InvariantResult[] {
  const keys = Object.keys(soak.planned);
  // Still in the DLQs after the redrive: named in the open list, so the operator sees why.
  const refused = new Set(soak.completionsRefused ?? []);
  const redriven = soak.redrivenCompletions ?? [];
  const redrivenKeys = [...new Set(redriven)];
  const notStartedOnce: string[] = [];
  const open: string[] = [];
  const notSummarisedOnce: string[] = [];
  const miscounted: string[] = [];
  let deadLettered = 0;
  for (const key of keys) {
    const plan = soak.planned[key] as { children: number; failures: number };
    const found = soak.found[key] ?? [];
    const summaries = soak.summaries[key] ?? 0;
    if (found.length !== 1) notStartedOnce.push(`${key} ×${found.length}`);
    if (found.length === 0 || found.some((b) => !b.completed))
      open.push(refused.has(key) ? `${key} (its completion job still in the DLQ: injected API 400)` : key);
    if (summaries !== 1) notSummarisedOnce.push(`${key} ×${summaries}`);
    for (const b of found) {
      deadLettered += b.deadLettered;
      if (
        b.total !== plan.children ||
        b.deadLettered !== plan.failures ||
        b.succeeded + b.deadLettered !== b.total
      )
        miscounted.push(
          `${key} (${b.succeeded}+${b.deadLettered} of ${b.total}; planned ${plan.children - plan.failures}+${plan.failures})`,
        );
    }
  }
  const unplanned = Object.keys(soak.found).filter((key) => soak.planned[key] === undefined);
  // A redriven completion job ran once: its batch completed and its email sent exactly once.
  const redrivenNotOnce = redrivenKeys.filter(
    (key) =>
      soak.planned[key] === undefined ||
      (soak.summaries[key] ?? 0) !== 1 ||
      (soak.found[key] ?? []).length !== 1 ||
      (soak.found[key] ?? []).some((b) => !b.completed),
  );
  const children = keys.reduce((acc, key) => acc + (soak.planned[key]?.children ?? 0), 0);
  const failures = keys.reduce((acc, key) => acc + (soak.planned[key]?.failures ?? 0), 0);
  const skip = skipped === undefined ? {} : { skipped };
  const afterRedrive =
    redrivenKeys.length === 0 ? '' : ` (${redrivenKeys.length} after their completion job's redrive)`;
  return [
    {
      name: 'soak batches started once each and completed (none hanging)',
      severity: 'invariant',
      ok: skipped === undefined && notStartedOnce.length === 0 && open.length === 0 && unplanned.length === 0,
      actual:
        notStartedOnce.length === 0 && open.length === 0 && unplanned.length === 0
          ? `${keys.length} started, ${keys.length} completed${afterRedrive}`
          : [
              notStartedOnce.length > 0 ? `not started once: ${examples(notStartedOnce)}` : '',
              open.length > 0 ? `open: ${examples(open)}` : '',
              unplanned.length > 0 ? `unplanned: ${examples(unplanned)}` : '',
            ]
              .filter((part) => part !== '')
              .join('; '),
      expected: `${keys.length} started, ${keys.length} completed`,
      ...skip,
    },
    {
      name: 'soak completion jobs run exactly once (one summary email per batch at the mail API)',
      severity: 'invariant',
      ok: skipped === undefined && notSummarisedOnce.length === 0,
      actual:
        notSummarisedOnce.length === 0
          ? `${keys.length} batches, each once${afterRedrive}`
          : examples(notSummarisedOnce),
      expected: 'each batch exactly once',
      ...skip,
    },
    {
      name: 'soak completion jobs redriven after an injected API 400, then run once',
      severity: 'invariant',
      ok: skipped === undefined && redrivenNotOnce.length === 0,
      actual:
        redrivenNotOnce.length > 0
          ? `not completed once after the redrive: ${examples(redrivenNotOnce.map((key) => `${key} ×${soak.summaries[key] ?? 0}`))}`
          : redriven.length === 0
            ? '0 redriven (none refused)'
            : `${redriven.length} redriven${redriven.length === redrivenKeys.length ? '' : ` (${redrivenKeys.length} job${redrivenKeys.length === 1 ? '' : 's'}, refused again and redriven again)`}, each then ran once`,
      expected: 'each redriven job then ran once (its batch completed, one summary email)',
      ...skip,
    },
    {
      name: 'soak batch children counted exactly (succeeded + dead-lettered = total, as planned)',
      severity: 'invariant',
      ok: skipped === undefined && miscounted.length === 0,
      actual:
        miscounted.length === 0
          ? `${children - failures}+${failures} of ${children} children`
          : examples(miscounted),
      expected: `${children - failures}+${failures} of ${children} children`,
      ...skip,
    },
    {
      name: 'soak children counted dead-lettered = soak children in the DLQs',
      severity: 'invariant',
      ok: skipped === undefined && deadLettered === soak.childrenInDlqs,
      actual: `${deadLettered} counted, ${soak.childrenInDlqs} in the DLQs`,
      expected: 'equal',
      ...skip,
    },
  ];
}
