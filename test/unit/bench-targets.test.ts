/**
 * bench/targets.ts: issue 21's targets on the bench's rows, from hand-made rows (no bench runs).
 */
import { describe, expect, it } from 'vitest';
import { coldStartMeasure } from '../../bench/cold-start.ts';
import { cpuMeasure } from '../../bench/cpu.ts';
import {
  allTargetsMet,
  ISSUE_21_TARGETS,
  missingTargets,
  withTarget,
  withTargets,
} from '../../bench/targets.ts';
import type { ComparisonRow } from '../../bench/vs-powertools.ts';

const row = (measure: string, fields: Partial<ComparisonRow> = {}): ComparisonRow => ({
  measure,
  unit: 'x',
  ours: 1,
  powertools: 1,
  ratio: 1,
  ...fields,
});
const batch10 = cpuMeasure({ mode: 'standard', batchSize: 10 });
const batch1 = cpuMeasure({ mode: 'standard', batchSize: 1 });
const bundle =
  'bundle of a minimal worker from sqs-jobs/worker (no optional feature), minified, AWS SDK external, no schema library';
const heap =
  'heap, sqs-jobs/worker (no optional feature): after 2,000 warm invocations (batches of 10, no store), after full GC';
const importCpu = 'cold start, sqs-jobs/worker (no optional feature): import of the bundle, CPU time';
const initCpu = 'cold start, sqs-jobs/worker (no optional feature): init to first response, CPU time';

/** A row for every target, each holding it. */
const allMet = (): ComparisonRow[] =>
  ISSUE_21_TARGETS.map((t) => row(t.measure, { ratio: 0.9, ratioSameOutputs: 0.6 }));

describe('issue 21 targets', () => {
  it('a CPU row at batch 10 is met only when both ratios hold (2× bare, 1.2× same outputs)', () => {
    expect(withTarget(row(batch10, { ratio: 1.43, ratioSameOutputs: 0.63 }))).toMatchObject({
      target: 'ratio <= 2 and ratioSameOutputs <= 1.2',
      met: true,
    });
    expect(withTarget(row(batch10, { ratio: 1.43, ratioSameOutputs: 1.21 })).met).toBe(false);
    expect(withTarget(row(batch10, { ratio: 2.01, ratioSameOutputs: 0.6 })).met).toBe(false);
    // A limit on a field the row lacks is not met.
    expect(withTarget(row(batch10, { ratio: 1.1 })).met).toBe(false);
  });

  it('FIFO rows at batch 10 carry the same target; batch 1 only the bare one; batch 1,000 none', () => {
    for (const mode of ['fifo10', 'fifo1'] as const) {
      expect(withTarget(row(cpuMeasure({ mode, batchSize: 10 }))).target).toBe(
        'ratio <= 2 and ratioSameOutputs <= 1.2',
      );
    }
    expect(withTarget(row(batch1, { ratio: 2 }))).toMatchObject({ target: 'ratio <= 2', met: true });
    expect(withTarget(row(batch1, { ratio: 2.5 })).met).toBe(false);
    const big = row(cpuMeasure({ mode: 'standard', batchSize: 1000 }), { ratio: 9 });
    expect(withTarget(big)).toEqual(big);
  });

  it('bundle 1.3×, heap 1.1×, cold-start CPU 1× (at or below); wall time and other rows carry none', () => {
    expect(withTarget(row(bundle, { ratio: 1.86 }))).toMatchObject({ target: 'ratio <= 1.3', met: false });
    expect(withTarget(row(heap, { ratio: 1.05 }))).toMatchObject({ target: 'ratio <= 1.1', met: true });
    expect(withTarget(row(importCpu, { ratio: 1 }))).toMatchObject({ target: 'ratio <= 1', met: true });
    expect(withTarget(row(importCpu, { ratio: 1.01 })).met).toBe(false);
    const wall = row(coldStartMeasure.importMs('lean'), { ratio: 5 });
    expect(withTarget(wall)).toEqual(wall);
    // The worker with every feature has rows of its own, figures without target.
    for (const measure of [
      coldStartMeasure.bundle('full'),
      coldStartMeasure.importCpuMs('full'),
      coldStartMeasure.firstResponseCpuMs('full'),
      coldStartMeasure.heapAfter('full'),
    ]) {
      const full = row(measure, { ratio: 3 });
      expect(withTarget(full)).toEqual(full);
    }
  });

  it("replaces a row's stale target with the one computed from its medians", () => {
    expect(withTarget(row(heap, { ratio: 1.2, target: 'old', met: true }))).toMatchObject({
      target: 'ratio <= 1.1',
      met: false,
    });
  });

  it('allTargetsMet: every target has its row and holds; names what is missing', () => {
    expect(allTargetsMet(allMet())).toBe(true);
    expect(missingTargets(allMet())).toEqual([]);
    const withoutHeap = allMet().filter((r) => r.measure !== heap);
    expect(allTargetsMet(withoutHeap)).toBe(false);
    expect(missingTargets(withoutHeap)).toEqual([heap]);
    const bundleOver = withTargets(allMet()).map((r) => (r.measure === bundle ? { ...r, ratio: 1.86 } : r));
    expect(allTargetsMet(bundleOver)).toBe(false);
  });

  it('a run of part of the bench (e.g. --cold-start) is judged on the targets of the parts it ran', () => {
    const coldStartOnly = ISSUE_21_TARGETS.map((t) => t.measure).filter(
      (m) => !m.startsWith('CPU per record'),
    );
    const rows = withTargets(coldStartOnly.map((m) => row(m, { ratio: 0.9 })));
    expect(missingTargets(rows, coldStartOnly)).toEqual([]);
    expect(allTargetsMet(rows, coldStartOnly)).toBe(true);
    // Against every target, the CPU rows it did not run are missing.
    expect(allTargetsMet(rows)).toBe(false);
    expect(missingTargets(rows)).toContain(batch10);
    // A target of a part it ran and missed still counts.
    const over = rows.map((r) => (r.measure === importCpu ? withTarget({ ...r, ratio: 1.02 }) : r));
    expect(allTargetsMet(over, coldStartOnly)).toBe(false);
  });

  it('the bundle, cold-start and heap targets are on the rows of the lean worker, by the names bench/cold-start.ts gives them', () => {
    // Written out here: a rename of a row is a change a reader of saved runs notices (--compare pairs rows by name).
    const lean = [bundle, importCpu, initCpu, heap];
    expect(lean).toEqual([
      coldStartMeasure.bundle('lean'),
      coldStartMeasure.importCpuMs('lean'),
      coldStartMeasure.firstResponseCpuMs('lean'),
      coldStartMeasure.heapAfter('lean'),
    ]);
    for (const measure of lean) expect(ISSUE_21_TARGETS.map((t) => t.measure)).toContain(measure);
  });
});
