/**
 * bench/compare.ts: two saved bench runs compared ratio by ratio (issue 21's "same ratios within
 * 10 % when run again"), on hand-made JSON.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { coldStartMeasure } from '../../bench/cold-start.ts';
import { compareMain, compareRuns, formatComparison, loadRange, readRun } from '../../bench/compare.ts';
import { cpuMeasure } from '../../bench/cpu.ts';
import type { ComparisonRow } from '../../bench/vs-powertools.ts';

const batch10 = cpuMeasure({ mode: 'standard', batchSize: 10 });
const heap = coldStartMeasure.heapAfter('lean');
const dynamo = 'DynamoDB requests per new record';
const row = (measure: string, ratio: number, ratioSameOutputs?: number): ComparisonRow => ({
  measure,
  unit: 'x',
  ours: ratio,
  powertools: 1,
  ratio,
  ...(ratioSameOutputs !== undefined ? { ratioSameOutputs } : {}),
});

describe('compareRuns', () => {
  it("gives both runs' ratios and the relative change of each, within 10 % or not", () => {
    const a = { rows: [row(batch10, 1.25, 0.6), row(heap, 1.05)] };
    const b = { rows: [row(batch10, 1.43, 0.63), row(heap, 1.05)] };
    const result = compareRuns(a, b);
    expect(result.changes).toEqual([
      {
        measure: batch10,
        field: 'ratio',
        a: 1.25,
        b: 1.43,
        changePct: expect.closeTo(14.4, 5),
        within: false,
      },
      {
        measure: batch10,
        field: 'ratioSameOutputs',
        a: 0.6,
        b: 0.63,
        changePct: expect.closeTo(5, 5),
        within: true,
      },
      { measure: heap, field: 'ratio', a: 1.05, b: 1.05, changePct: 0, within: true },
    ]);
    expect(result.ok).toBe(false);
    expect(formatComparison(result)).toContain(`${batch10} [ratio]: 1.250× → 1.430×, +14.4 % (MOVED 10 %)`);
    expect(formatComparison(result).at(-1)).toBe('2 of 3 ratios within 10 %; 1 moved more');
  });

  it('exactly 10 % either way is within; a fall counts as a move as a rise does', () => {
    expect(compareRuns({ rows: [row(heap, 1)] }, { rows: [row(heap, 1.1)] }).ok).toBe(true);
    expect(compareRuns({ rows: [row(heap, 1)] }, { rows: [row(heap, 0.9)] }).ok).toBe(true);
    expect(compareRuns({ rows: [row(heap, 1)] }, { rows: [row(heap, 0.85)] }).ok).toBe(false);
    expect(compareRuns({ rows: [row(heap, 1)] }, { rows: [row(heap, 1.15)] }, { tolerancePct: 20 }).ok).toBe(
      true,
    );
  });

  it("compares issue 21's rows only unless --all; lists rows one run lacks", () => {
    const a = { rows: [row(heap, 1), row(dynamo, 1), row(batch10, 1.2, 0.6)] };
    const b = { rows: [row(heap, 1), row(dynamo, 3)] };
    const only21 = compareRuns(a, b);
    expect(only21.changes.map((c) => c.measure)).toEqual([heap]);
    expect(only21.onlyInA).toEqual([batch10]);
    expect(only21.ok).toBe(true);
    const all = compareRuns(a, b, { all: true });
    expect(all.changes.map((c) => c.measure)).toEqual([heap, dynamo]);
    expect(all.ok).toBe(false);
  });

  it('nothing in common is not a pass', () => {
    const result = compareRuns({ rows: [row(heap, 1)] }, { rows: [] });
    expect(result.ok).toBe(false);
    expect(formatComparison(result)).toEqual([
      `only in the first run: ${heap}`,
      'no ratio in both runs to compare',
    ]);
  });
});

describe('compareMain (npm run bench -- --compare a.json b.json)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'));
  const save = (name: string, content: string) => {
    const file = join(dir, name);
    writeFileSync(file, content);
    return file;
  };
  const out: string[] = [];
  const err: string[] = [];
  const capture = () => {
    out.length = 0;
    err.length = 0;
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => err.push(String(chunk)) > 0);
  };
  afterEach(() => vi.restoreAllMocks());

  const run = (rows: ComparisonRow[]) => JSON.stringify({ node: 'v22', date: 'd', options: {}, rows });

  it('exits 0 when every ratio is within 10 %, 1 when one moved more, and prints each', () => {
    const a = save('a.json', `${run([row(batch10, 1.25, 0.6), row(heap, 1.05)])}\n`);
    const same = save('b.json', run([row(batch10, 1.3, 0.62), row(heap, 1.04)]));
    const moved = save('c.json', run([row(batch10, 1.43, 0.63), row(heap, 1.05)]));
    capture();
    expect(compareMain([a, same])).toBe(0);
    expect(out.join('')).toContain('3 of 3 ratios within 10 %');
    capture();
    expect(compareMain([a, moved])).toBe(1);
    expect(out.join('')).toContain('MOVED');
  });

  it('prints the load average each run recorded (start, end, every round), or that it recorded none', () => {
    const loaded = save(
      'loaded.json',
      JSON.stringify({
        loadavgAtStart: [18, 15, 12],
        loadavg: [25.5, 20, 15],
        rows: [{ ...row(heap, 1), loadavgSpread: [17.25, 32.3] }],
      }),
    );
    const bare = save('bare.json', run([row(heap, 1)]));
    expect(loadRange(readRun(loaded))).toEqual([17.25, 32.3]);
    expect(loadRange(readRun(bare))).toBeUndefined();
    capture();
    compareMain([loaded, bare]);
    expect(out[0]).toBe('load average (1 min) during the runs: first 17.3–32.3, second not recorded\n');
  });

  it('reads a run whose file holds other lines before the JSON object (stderr saved with it)', () => {
    const file = save('mixed.json', `bench: warming up\n${run([row(heap, 1)])}\n`);
    expect(readRun(file).rows).toEqual([row(heap, 1)]);
  });

  it('exits 2 with a clear message on a file that is no run, or not two files', () => {
    const notRun = save('not-run.json', '{"hello": 1}');
    const good = save('good.json', run([row(heap, 1)]));
    capture();
    expect(compareMain([notRun, good])).toBe(2);
    expect(err.join('')).toContain('no bench run in it');
    capture();
    expect(compareMain([good])).toBe(2);
    expect(err.join('')).toContain('two saved runs are needed, got 1');
    capture();
    expect(compareMain([good, good, '--tolerance', 'x'])).toBe(2);
    expect(err.join('')).toContain('--tolerance takes a percentage');
    capture();
    const emptyRun = save('empty.json', run([]));
    expect(compareMain([emptyRun, good])).toBe(2);
    expect(err.join('')).toContain('no bench run in it');
  });

  it('refuses an unknown option or one without its value instead of reading it as a file', () => {
    const good = save('good2.json', run([row(heap, 1)]));
    for (const [args, message] of [
      [['--bogus'], "Unknown option '--bogus'"],
      [['--tolerance'], "Option '--tolerance <value>' argument missing"],
      [['--tolerance', ''], '--tolerance takes a percentage >= 0, got ""'],
      [['--tolerance', '-5'], "Option '--tolerance' argument is ambiguous"],
      [['--tolerance=-5'], '--tolerance takes a percentage >= 0, got "-5"'],
    ] as const) {
      capture();
      expect(compareMain([good, good, ...args])).toBe(2);
      expect(err.join('')).toContain(message);
    }
    capture();
    expect(compareMain([good, good, '--tolerance=5'])).toBe(0);
    expect(out.join('')).toContain('1 of 1 ratios within 5 %');
  });

  it('a ratio of 0 in the first run is a move with no relative change, not +Infinity %', () => {
    const zero = save('zero.json', run([row(heap, 0)]));
    const one = save('one.json', run([row(heap, 1)]));
    capture();
    expect(compareMain([zero, one])).toBe(1);
    expect(out.join('')).toContain('no relative change (a ratio of 0) (MOVED 10 %)');
    expect(out.join('')).not.toContain('Infinity');
  });
});
