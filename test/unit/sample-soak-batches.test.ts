/**
 * The soak's batches (`npm run soak -- --batches N`): their plan, how a run reads them back
 * (lib/sample/workload/soak-batches.ts) and their invariants (lib/sample/report/batches.ts). A run
 * fails when a planned batch was not started exactly once or is still open (also after the run
 * redrove the completion jobs an injected API 400 dead-lettered: lib/sample/workload/soak-redrive.ts),
 * when its summary email (the completion job's side effect, counted by the mail API) was not sent
 * exactly once, when a redriven completion job did not then run once, when its children were not
 * counted as planned, or when the children counted dead-lettered are not the ones in the DLQs.
 */
import { describe, expect, it } from 'vitest';
import {
  batchInvariants,
  type SoakBatchFacts,
  soakBatchInvariants,
} from '../../lib/sample/report/batches.ts';
import { resolveWorkloadOptions } from '../../lib/sample/workload/options.ts';
import {
  anySoakCompletionRefused,
  explainSoakDeadLetter,
  foundSoakBatches,
  plannedSoakBatches,
  planSoakBatches,
  refusedSoakCompletionKey,
  soakBatchJobCount,
  soakChildrenInDlqs,
  soakCompletionsRefused,
} from '../../lib/sample/workload/soak-batches.ts';
import { redriveRefusedSoakCompletions } from '../../lib/sample/workload/soak-redrive.ts';

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

  it('redrives only the completion jobs whose 400 the mail API confirms it injected', () => {
    // As the redrive reads a DLQ message: `reason` is its ErrorReason evidence.
    const message = (type: string, batchKey: string, reason: string) => ({
      body: envelope(type, `${type}-${batchKey}`, { batchKey }),
      reason,
    });
    const injected = { 'email:batch-k:soak-batch-summary': ['timeout', 'badRequest'] };
    expect(refusedSoakCompletionKey(message('soak.batch-summary', 'k', 'HTTP 400'), injected)).toBe('k');
    // A 400 the service did not inject, another reason, another batch, another job type: left in the DLQ.
    expect(
      refusedSoakCompletionKey(message('soak.batch-summary', 'k', 'HTTP 400'), {
        'email:batch-k:soak-batch-summary': ['timeout'],
      }),
    ).toBeUndefined();
    expect(
      refusedSoakCompletionKey(message('soak.batch-summary', 'k', 'attempts-used-up'), injected),
    ).toBeUndefined();
    expect(
      refusedSoakCompletionKey(message('soak.batch-summary', 'j', 'HTTP 400'), injected),
    ).toBeUndefined();
    expect(refusedSoakCompletionKey(message('soak.batch-child', 'k', 'HTTP 400'), injected)).toBeUndefined();
    expect(refusedSoakCompletionKey({ body: 'not json', reason: 'HTTP 400' }, injected)).toBeUndefined();
  });

  it('reads no DLQ when no soak summary email was refused by an injected 400', async () => {
    expect(anySoakCompletionRefused({ 'email:batch-k:soak-batch-summary': ['badRequest'] })).toBe(true);
    // A 400 on another email (a booking's, the nightly summary's) or another fault: nothing to redrive.
    expect(
      anySoakCompletionRefused({
        'email:b-1:confirmation': ['badRequest'],
        'email:nightly-r1:nightly-invoice-summary': ['badRequest'],
        'email:batch-k:soak-batch-summary': ['timeout', 'throttle'],
      }),
    ).toBe(false);
    const sent: unknown[] = [];
    const target = {
      sqs: { send: async (command: unknown) => sent.push(command) } as never,
      queueUrls: { notifications: 'http://q/notifications' },
      dlqUrls: { notifications: 'http://q/notifications-dlq' },
    };
    expect(
      await redriveRefusedSoakCompletions(target, { 'email:batch-k:soak-batch-summary': ['timeout'] }),
    ).toEqual({ moved: [], problems: [] });
    expect(sent).toEqual([]);
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
      '0 redriven (none refused)',
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

  it('hold when a completion job an injected API 400 dead-lettered was redriven and then ran once', () => {
    const redriven = facts({ redrivenCompletions: ['b'] });
    expect(failing(redriven)).toEqual([]);
    expect(
      soakBatchInvariants(redriven, undefined)
        .map((i) => i.actual)
        .slice(0, 3),
    ).toEqual([
      "2 started, 2 completed (1 after their completion job's redrive)",
      "2 batches, each once (1 after their completion job's redrive)",
      '1 redriven, each then ran once',
    ]);
    // Refused again after its first redrive, redriven again: two redrives of one job.
    expect(soakBatchInvariants(facts({ redrivenCompletions: ['b', 'b'] }), undefined)[2]?.actual).toBe(
      '2 redriven (1 job, refused again and redriven again), each then ran once',
    );
  });

  it('fail on a batch still open after the redrive: none is left waiting for it', () => {
    const open = { ...done(1, 1), completed: false };
    // Its completion job still in the DLQ (refused again in the last round): open, no email.
    const stillRefused = facts({
      found: { a: [done(2, 0)], b: [open] },
      summaries: { a: 1 },
      completionsRefused: ['b'],
      redrivenCompletions: ['b'],
    });
    expect(failing(stillRefused)).toEqual([
      'open: b (its completion job still in the DLQ: injected API 400)',
      'b ×0',
      'not completed once after the redrive: b ×0',
    ]);
    // Not redriven at all (no redrive phase ran): the same batch hangs.
    expect(failing(facts({ found: { a: [done(2, 0)], b: [open] }, summaries: { a: 1 } }))).toEqual([
      'open: b',
      'b ×0',
    ]);
    // The run's batch invariant fails on any open batch.
    const run = batchInvariants(
      { started: 3, completed: 2, open: ['id-b'], summariesByRun: { r: 1 }, soak: stillRefused },
      undefined,
    );
    expect(run.filter((i) => !i.ok).map((i) => i.name)).toContain(
      'batches still open once the queues drained (none hanging)',
    );
  });

  it('fail on a redriven completion job whose email was then sent twice', () => {
    expect(failing(facts({ summaries: { a: 1, b: 2 }, redrivenCompletions: ['b'] }))).toEqual([
      'b ×2',
      'not completed once after the redrive: b ×2',
    ]);
  });

  it('are skipped, failing nothing, when the deadline passed first', () => {
    const results = soakBatchInvariants(facts({ summaries: {} }), 'the deadline passed');
    expect(results.every((i) => i.skipped === 'the deadline passed')).toBe(true);
  });
});
