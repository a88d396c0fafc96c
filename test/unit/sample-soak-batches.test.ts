/**
 * The soak's batches (`npm run soak -- --batches N`): their plan, how a run reads them back
 * (lib/sample/workload/soak-batches.ts) and their invariants (lib/sample/report/batches.ts). A run
 * fails when a planned batch was not started exactly once or is still open, when its summary email
 * (the completion job's side effect, counted by the mail API) was not sent exactly once, when its
 * children were not counted as planned, or when the children counted dead-lettered are not the
 * ones in the DLQs.
 */
import { describe, expect, it } from 'vitest';
import {
  batchInvariants,
  type SoakBatchFacts,
  soakBatchInvariants,
} from '../../lib/sample/report/batches.ts';
import { resolveWorkloadOptions } from '../../lib/sample/workload/options.ts';
import {
  explainSoakDeadLetter,
  foundSoakBatches,
  plannedSoakBatches,
  planSoakBatches,
  soakBatchJobCount,
  soakChildrenInDlqs,
  soakCompletionsRefused,
} from '../../lib/sample/workload/soak-batches.ts';

describe('the soak batch plan', () => {
  it('has two children per batch, a deliberate failure in every tenth, a nested batch in every tenth', () => {
    const plans = planSoakBatches(20, 'run-1');
    expect(plans).toHaveLength(20);
    expect(plans[0]).toEqual({
      batchKey: 'run-1-b0',
      children: [
        { fail: false, nest: 0 },
        { fail: false, nest: 0 },
      ],
    });
    expect(plans.filter((p) => p.children.some((c) => c.fail)).map((p) => p.batchKey)).toEqual([
      'run-1-b3',
      'run-1-b13',
    ]);
    expect(plans.filter((p) => p.children.some((c) => c.nest > 0)).map((p) => p.batchKey)).toEqual([
      'run-1-b7',
      'run-1-b17',
    ]);
    const planned = plannedSoakBatches(plans);
    expect(Object.keys(planned)).toHaveLength(22);
    expect(planned['run-1-b3']).toEqual({ children: 2, failures: 1 });
    expect(planned['run-1-b7.0']).toEqual({ children: 2, failures: 0 });
    // 20 starters, 22 batches of 2 children and a completion job each.
    expect(soakBatchJobCount(plans)).toBe(20 + 22 * 3);
  });

  it('is empty by default; a negative count is refused', () => {
    expect(resolveWorkloadOptions().batches).toBe(0);
    expect(() => resolveWorkloadOptions({ batches: -1 })).toThrow(/batches must be an integer >= 0/);
  });
});

const envelope = (type: string, id: string, data: object) => JSON.stringify({ type, id, data });

describe('reading soak batches back', () => {
  it('explains and counts dead-lettered children that fail on purpose, and no others', () => {
    const failing = {
      body: envelope('soak.batch-child', 'c-1', { batchKey: 'k', index: 1, fail: true }),
      attributes: {},
    };
    const other = {
      body: envelope('soak.batch-child', 'c-2', { batchKey: 'k', index: 0, fail: false }),
      attributes: {},
    };
    expect(explainSoakDeadLetter(failing)).toMatch(/deliberate batch child failure/);
    expect(explainSoakDeadLetter(other)).toBeUndefined();
    expect(explainSoakDeadLetter({ body: 'not json', attributes: {} })).toBeUndefined();
    // The same child dead-lettered twice (a duplicate delivery) is one child.
    expect(soakChildrenInDlqs([failing, failing, other, { body: '{' }])).toBe(2);
  });

  it('explains a completion job dead-lettered by an injected API 400 on its email, and only that', () => {
    const completion = {
      body: envelope('soak.batch-summary', 's-1', { batchKey: 'k' }),
      attributes: { ErrorName: 'ExternalApiError', ErrorReason: 'HTTP 400' },
    };
    const injected = { 'email:batch-k:soak-batch-summary': ['badRequest'] };
    expect(explainSoakDeadLetter(completion, injected)).toMatch(/injected 400 on a batch completion job/);
    expect(explainSoakDeadLetter(completion, {})).toBeUndefined();
    expect(soakCompletionsRefused([completion, completion], injected)).toEqual(['k']);
    expect(soakCompletionsRefused([completion], { 'email:batch-k:soak-batch-summary': ['timeout'] })).toEqual(
      [],
    );
  });

  it('finds soak batch items by their completion job, with their counters', () => {
    const item = (batchKey: string, type: string, state: string) => ({
      recordType: { S: 'batch' },
      completionEnvelope: { S: envelope(type, 'x', { batchKey }) },
      state: { S: state },
      total: { N: '2' },
      succeeded: { N: '1' },
      deadLettered: { N: '1' },
    });
    expect(
      foundSoakBatches([
        item('k1', 'soak.batch-summary', 'completed'),
        item('k2', 'soak.batch-summary', 'open'),
        item('run', 'billing.nightly-summary', 'completed'),
        { recordType: { S: 'job' } },
      ]),
    ).toEqual({
      k1: [{ total: 2, succeeded: 1, deadLettered: 1, completed: true }],
      k2: [{ total: 2, succeeded: 1, deadLettered: 1, completed: false }],
    });
  });
});

describe('soak batch invariants', () => {
  const done = (succeeded: number, deadLettered: number) => ({
    total: succeeded + deadLettered,
    succeeded,
    deadLettered,
    completed: true,
  });
  const facts = (over: Partial<SoakBatchFacts> = {}): SoakBatchFacts => ({
    planned: { a: { children: 2, failures: 0 }, b: { children: 2, failures: 1 } },
    found: { a: [done(2, 0)], b: [done(1, 1)] },
    summaries: { a: 1, b: 1 },
    childrenInDlqs: 1,
    ...over,
  });
  const failing = (f: SoakBatchFacts) =>
    soakBatchInvariants(f, undefined)
      .filter((i) => !i.ok)
      .map((i) => i.actual);

  it('hold when every batch completed once, summarised once and counted as planned', () => {
    expect(failing(facts())).toEqual([]);
    expect(soakBatchInvariants(facts(), undefined).map((i) => i.actual)).toEqual([
      '2 started, 2 completed',
      '2 batches, each once',
      '3+1 of 4 children',
      '1 counted, 1 in the DLQs',
    ]);
  });

  it('fail on a batch missing, started twice, open or unplanned', () => {
    expect(failing(facts({ found: { a: [done(2, 0)] }, childrenInDlqs: 0 }))).toEqual([
      'not started once: b ×0; open: b',
    ]);
    expect(failing(facts({ found: { a: [done(2, 0), done(2, 0)], b: [done(1, 1)] } }))).toEqual([
      'not started once: a ×2',
    ]);
    expect(
      failing(facts({ found: { a: [{ ...done(1, 0), total: 2, completed: false }], b: [done(1, 1)] } })),
    ).toEqual(['open: a', 'a (1+0 of 2; planned 2+0)']);
    expect(failing(facts({ found: { ...facts().found, z: [done(2, 0)] } }))).toEqual(['unplanned: z']);
  });

  it('fail on a summary email sent twice or never (the completion job not run exactly once)', () => {
    expect(failing(facts({ summaries: { a: 2 } }))).toEqual(['a ×2, b ×0']);
  });

  it('fail on children miscounted, or dead-lettered children not those in the DLQs', () => {
    expect(failing(facts({ found: { a: [done(2, 0)], b: [done(2, 0)] }, childrenInDlqs: 0 }))).toEqual([
      'b (2+0 of 2; planned 1+1)',
    ]);
    expect(failing(facts({ childrenInDlqs: 2 }))).toEqual(['1 counted, 2 in the DLQs']);
  });

  it('accept a batch left open because an injected API 400 dead-lettered its completion job, and only that', () => {
    const open = { ...done(1, 1), completed: false };
    const refused = facts({
      found: { a: [done(2, 0)], b: [open] },
      summaries: { a: 1 },
      completionsRefused: ['b'],
    });
    expect(failing(refused)).toEqual([]);
    expect(soakBatchInvariants(refused, undefined)[0]?.actual).toBe(
      '2 started, 1 completed; 1 waiting for the redrive of their completion job (refused by an injected API 400)',
    );
    // Not refused: the same batch hangs.
    expect(failing({ ...refused, completionsRefused: [] })).toEqual(['open: b', 'b ×0']);
    // The run's batch invariant leaves it open too.
    const run = batchInvariants(
      { started: 3, completed: 2, open: ['id-b'], summariesByRun: { r: 1 }, soak: refused },
      undefined,
    );
    expect(run.filter((i) => !i.ok)).toEqual([]);
  });

  it('are skipped, failing nothing, when the deadline passed first', () => {
    const results = soakBatchInvariants(facts({ summaries: {} }), 'the deadline passed');
    expect(results.every((i) => i.skipped === 'the deadline passed')).toBe(true);
  });
});
