/**
 * The batch invariants of a sample run (lib/sample/report/batches.ts) and the summary of the batch
 * items they are checked on (lib/sample/workload/batches.ts): a run fails when no batch was
 * started, when one is still open once the queues drained, or when a nightly run's summary email
 * (its completion job's side effect) did not happen exactly once.
 */
import { describe, expect, it } from 'vitest';
import { type BatchRunFacts, batchInvariants } from '../../lib/sample/report/batches.ts';
import { summariseBatches } from '../../lib/sample/workload/batches.ts';

const facts = (over: Partial<BatchRunFacts> = {}): BatchRunFacts => ({
  started: 1,
  completed: 1,
  open: [],
  summariesByRun: { 'run-1': 1 },
  ...over,
});

const failing = (f: BatchRunFacts) =>
  batchInvariants(f, undefined)
    .filter((i) => !i.ok)
    .map((i) => i.name);

describe('batch invariants of a sample run', () => {
  it('hold when the batch completed and its summary was sent once', () => {
    expect(failing(facts())).toEqual([]);
  });

  it('fail on no batch started, a batch still open, a summary sent twice or never', () => {
    expect(failing(facts({ started: 0, completed: 0 }))).toEqual([
      'batches started (the nightly invoice run)',
    ]);
    expect(failing(facts({ started: 1, completed: 0, open: ['b-1 (3+0 of 5 counted)'] }))).toEqual([
      'batches still open once the queues drained (none hanging)',
    ]);
    expect(failing(facts({ summariesByRun: { 'run-1': 2 } }))).toEqual([
      'completion jobs run exactly once (one summary email per nightly run)',
    ]);
    const never = batchInvariants(facts({ summariesByRun: { 'run-1': 0 } }), undefined).find((i) => !i.ok);
    expect(never?.actual).toBe('run-1 ×0');
  });

  it('are skipped, failing nothing, when the deadline passed first', () => {
    const results = batchInvariants(facts({ open: ['b-1'] }), 'the deadline passed');
    expect(results.every((i) => i.skipped === 'the deadline passed')).toBe(true);
  });
});

describe('summariseBatches', () => {
  it('counts batch items only, completed or open (with their progress)', () => {
    const item = (batchId: string, state: string) => ({
      pk: { S: `batch#${batchId}` },
      recordType: { S: 'batch' },
      batchId: { S: batchId },
      state: { S: state },
      total: { N: '5' },
      succeeded: { N: '3' },
      deadLettered: { N: '1' },
    });
    expect(
      summariseBatches([
        item('a', 'completed'),
        item('b', 'open'),
        { pk: { S: 'x#y' }, recordType: { S: 'job' } },
      ]),
    ).toEqual({ started: 2, completed: 1, open: ['b (3+1 of 5 counted)'] });
  });
});
