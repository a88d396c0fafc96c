/**
 * Compares two saved runs of `npm run bench -- --cpu` (or `--json`): issue 21's "the same ratios
 * within 10 % when run again". Per row both runs' ratios, the relative change in % and whether it
 * is within the tolerance; the exit code is 1 when any row moved more than that.
 *
 *   npm run bench -- --cpu > a.json; npm run bench -- --cpu > b.json
 *   npm run bench -- --compare a.json b.json [--all] [--tolerance 10]
 *   npx tsx bench/compare.ts a.json b.json      (the same, without loading the bench)
 *
 * By default only issue 21's rows (those bench/targets.ts sets a target for) are compared, on
 * each ratio the target is about (`ratio`, and `ratioSameOutputs` on the CPU rows); `--all`
 * compares every row both runs have (DynamoDB counts, wall time with I/O, heap growth near zero:
 * ratios that are not the issue's and move more).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { hasIssue21Target } from './targets.ts';
import type { ComparisonRow } from './vs-powertools.ts';

/** The part of a saved run this reads: `rows` of `--cpu` / `--json`, and the load averages it recorded. */
export interface SavedRun {
  readonly rows: readonly ComparisonRow[];
  /** `os.loadavg()` at the start of a `--cpu` run and at the end of any run ([1, 5, 15 min]). */
  readonly loadavgAtStart?: readonly number[];
  readonly loadavg?: readonly number[];
}

/** The ratios a comparison looks at, when the row has them. */
const RATIO_FIELDS = ['ratio', 'ratioSameOutputs'] as const;
export type RatioField = (typeof RATIO_FIELDS)[number];

export interface RatioChange {
  readonly measure: string;
  readonly field: RatioField;
  /** The ratio in the first run and in the second. */
  readonly a: number;
  readonly b: number;
  /** (b - a) / a, in %. */
  readonly changePct: number;
  /** |changePct| <= the tolerance. */
  readonly within: boolean;
}

export interface RunComparison {
  readonly tolerancePct: number;
  readonly changes: readonly RatioChange[];
  /** Rows compared in one run only (by measure). */
  readonly onlyInA: readonly string[];
  readonly onlyInB: readonly string[];
  /** Every change within the tolerance, and at least one compared. */
  readonly ok: boolean;
}

export interface CompareOptions {
  /** Largest relative change of a ratio still "the same", in % (default 10: issue 21). */
  readonly tolerancePct?: number;
  /** Compare every row, not only issue 21's (default false). */
  readonly all?: boolean;
}

/** Floating-point slack: 1.1 / 1 reads 10.000000000000009 %, which is 10 %. */
const EPSILON_PCT = 1e-9;

/** Compares the ratios of the rows `a` and `b` share, matched by `measure`. */
export function compareRuns(a: SavedRun, b: SavedRun, options: CompareOptions = {}): RunComparison {
  const tolerancePct = options.tolerancePct ?? 10;
  const chosen = (run: SavedRun) =>
    new Map(run.rows.filter((r) => options.all || hasIssue21Target(r.measure)).map((r) => [r.measure, r]));
  const rowsA = chosen(a);
  const rowsB = chosen(b);
  const changes: RatioChange[] = [];
  for (const [measure, rowA] of rowsA) {
    const rowB = rowsB.get(measure);
    if (rowB === undefined) continue;
    for (const field of RATIO_FIELDS) {
      const [ra, rb] = [rowA[field], rowB[field]];
      if (typeof ra !== 'number' || typeof rb !== 'number') continue;
      // A ratio of 0 (a side that measured nothing) has no relative change: compared as moved.
      const changePct = ra === 0 ? (rb === 0 ? 0 : Number.POSITIVE_INFINITY) : ((rb - ra) / ra) * 100;
      changes.push({
        measure,
        field,
        a: ra,
        b: rb,
        changePct,
        within: Math.abs(changePct) <= tolerancePct + EPSILON_PCT,
      });
    }
  }
  return {
    tolerancePct,
    changes,
    onlyInA: [...rowsA.keys()].filter((m) => !rowsB.has(m)),
    onlyInB: [...rowsB.keys()].filter((m) => !rowsA.has(m)),
    ok: changes.length > 0 && changes.every((c) => c.within),
  };
}

/** The comparison as lines of text, one a ratio, then the verdict. */
export function formatComparison(c: RunComparison): string[] {
  const lines = c.changes.map((x) => {
    const sign = x.changePct >= 0 ? '+' : '';
    const verdict = x.within ? 'within' : 'MOVED';
    const change = Number.isFinite(x.changePct)
      ? `${sign}${x.changePct.toFixed(1)} %`
      : 'no relative change (a ratio of 0)';
    return `${x.measure} [${x.field}]: ${x.a.toFixed(3)}× → ${x.b.toFixed(3)}×, ${change} (${verdict} ${c.tolerancePct} %)`;
  });
  for (const m of c.onlyInA) lines.push(`only in the first run: ${m}`);
  for (const m of c.onlyInB) lines.push(`only in the second run: ${m}`);
  const moved = c.changes.filter((x) => !x.within).length;
  lines.push(
    c.changes.length === 0
      ? 'no ratio in both runs to compare'
      : `${c.changes.length - moved} of ${c.changes.length} ratios within ${c.tolerancePct} %${moved > 0 ? `; ${moved} moved more` : ''}`,
  );
  return lines;
}

/**
 * The 1-minute load averages a run recorded, [min, max]: at its start and end and at the start of
 * every round of its rows (`loadavgSpread`); undefined when it recorded none. Two runs compared
 * at very different loads may differ for that alone (bench/README.md, "Repeatability").
 */
export function loadRange(run: SavedRun): [number, number] | undefined {
  const loads = [
    run.loadavgAtStart?.[0],
    run.loadavg?.[0],
    ...run.rows.flatMap((r) => r.loadavgSpread ?? []),
  ].filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return loads.length === 0 ? undefined : [Math.min(...loads), Math.max(...loads)];
}

const formatLoad = (range: [number, number] | undefined) =>
  range === undefined ? 'not recorded' : `${range[0].toFixed(1)}–${range[1].toFixed(1)}`;

/** Reads a saved run: the JSON object `--cpu` / `--json` writes (its last line that is one, if the file holds more). */
export function readRun(path: string): SavedRun {
  const text = readFileSync(path, 'utf8');
  const candidates = [text, ...text.split('\n').reverse()].filter((t) => t.trim().startsWith('{'));
  for (const candidate of candidates) {
    try {
      const parsed = JSON.parse(candidate) as Partial<SavedRun>;
      if (Array.isArray(parsed.rows) && parsed.rows.length > 0) return parsed as SavedRun;
    } catch {
      // not this one: try the next line
    }
  }
  throw new Error(
    `${path}: no bench run in it (expected the JSON object of \`npm run bench -- --cpu\` or \`--json\`, with at least one row in "rows")`,
  );
}

const USAGE = 'usage: compare <first.json> <second.json> [--all] [--tolerance <percent>]';

/** The command: prints the comparison, returns the exit code (0 all within, 1 moved or nothing compared, 2 usage). */
export function compareMain(argv: readonly string[]): number {
  let files: string[];
  let all: boolean;
  let tolerancePct: number;
  try {
    // node:util parseArgs: an unknown option or one without its value is an error, not a file name.
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { all: { type: 'boolean', default: false }, tolerance: { type: 'string', default: '10' } },
    });
    files = positionals;
    all = values.all;
    tolerancePct = values.tolerance.trim() === '' ? Number.NaN : Number(values.tolerance);
    if (!Number.isFinite(tolerancePct) || tolerancePct < 0) {
      throw new Error(`--tolerance takes a percentage >= 0, got ${JSON.stringify(values.tolerance)}`);
    }
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (files.length !== 2) {
    process.stderr.write(`two saved runs are needed, got ${files.length}\n${USAGE}\n`);
    return 2;
  }
  let runs: [SavedRun, SavedRun];
  try {
    runs = [readRun(files[0] as string), readRun(files[1] as string)];
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const comparison = compareRuns(runs[0], runs[1], { all, tolerancePct });
  process.stdout.write(
    `load average (1 min) during the runs: first ${formatLoad(loadRange(runs[0]))}, second ${formatLoad(loadRange(runs[1]))}\n`,
  );
  for (const line of formatComparison(comparison)) process.stdout.write(`${line}\n`);
  return comparison.ok ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = compareMain(process.argv.slice(2));
}
