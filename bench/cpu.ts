/**
 * CPU per record, each side in fresh processes of its own (issue 21), part of `npm run bench`.
 *
 * Why processes: alternating two sides batch by batch inside one process shares garbage
 * collection and JIT state between them (one side's garbage is collected on the other's clock,
 * both run the same hot shared code), which pulls ratios toward 1 and flattered us by 25–50 %.
 *
 * How: bench/cpu-child.ts is bundled once (esbuild, packages left external so both sides load the
 * same node_modules) and run by plain `node` per side and round. A process runs a pool of events
 * over again (see there): a warm-up (the JIT settles; its CPU per record is reported beside the
 * row's figures), then the measured records. A round runs the four sides of bench/sides.ts (ours,
 * Powertools bare, Powertools writing the same outputs, the floor) one after another, `ours`
 * always right between the two Powertools sides ({@link sideOrder}), so every ratio a target reads
 * compares two processes that ran back to back and a drift of the machine's load weighs on both.
 * A row gives the median over rounds of each side with its spread (min–max), and the median of
 * the per-round ratios with their spread (bench/stats.ts).
 *
 * Figures, not assertions: on a loaded machine they are indicative only; the load average is
 * printed with them.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type Mode, SIDES, type Side } from './sides.ts';
import { median, roundRatios, spread } from './stats.ts';
import type { ComparisonRow } from './vs-powertools.ts';

const root = new URL('../', import.meta.url).pathname;
/** Inside the repository, so the bundle's external packages resolve to its node_modules. */
const outDir = join(root, 'node_modules', '.cache', 'sqs-jobs-bench');

export interface CpuOptions {
  /** Rounds (fresh processes per side) per row, >= 5. */
  readonly cpuRounds: number;
  /** Records each process runs before measuring (their CPU is reported apart: `oursWarmup`, ...). */
  readonly warmRecords: number;
  /** Records each process measures. */
  readonly measuredRecords: number;
}

/** One row's configuration: queue kind and batch size (FIFO batches hold at most 10: sqs-fifo batch size). */
export interface CpuCase {
  readonly mode: Mode;
  readonly batchSize: number;
}

export const CPU_CASES: readonly CpuCase[] = [
  { mode: 'standard', batchSize: 1 },
  { mode: 'standard', batchSize: 10 },
  { mode: 'fifo10', batchSize: 10 },
  { mode: 'fifo1', batchSize: 10 },
  { mode: 'standard', batchSize: 1000 },
];

const MODE_LABEL: Record<Mode, string> = {
  standard: 'standard',
  fifo10: 'FIFO 10 groups',
  fifo1: 'FIFO 1 group',
};

/** The row's `measure` for a case (bench/targets.ts knows the rows by it and gives their targets). */
export const cpuMeasure = (c: CpuCase): string =>
  `CPU per record, ${MODE_LABEL[c.mode]} batch of ${c.batchSize.toLocaleString('en')}, no store`;

interface ChildResult {
  /** CPU time per record of the measured phase, µs (user + system, the whole process). */
  readonly cpuUsPerRecord: number;
  /** The same over the warm-up that came before it. */
  readonly warmCpuUsPerRecord: number;
}

export async function buildCpuChild(): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  // One file per bench process: two benches at once (a baseline from another checkout) must not clash.
  const outfile = join(outDir, `cpu-child-${process.pid}.mjs`);
  await build({
    absWorkingDir: root,
    entryPoints: ['bench/cpu-child.ts'],
    bundle: true,
    packages: 'external',
    platform: 'node',
    target: 'node22',
    format: 'esm',
    outfile,
    logLevel: 'silent',
  });
  return outfile;
}

/** Runs one process of `side`; rejects with its stderr when it fails. */
export function runCpuChild(
  child: string,
  side: Side,
  c: CpuCase,
  options: CpuOptions,
  nodeArgs: readonly string[] = [],
): Promise<ChildResult> {
  const args = [
    ...nodeArgs,
    child,
    side,
    c.mode,
    String(c.batchSize),
    String(options.warmRecords),
    String(options.measuredRecords),
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', POWERTOOLS_SERVICE_NAME: 'bench' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      const line = stderr.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`cpu child ${side} ${c.mode} exited ${code}: ${stderr.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(line.slice('BENCH_RESULT '.length)) as ChildResult);
    });
  });
}

/**
 * The order of the four sides in `round`: `ours` always runs right next to both Powertools sides
 * (between them), so each ratio a target reads compares two processes that ran back to back and
 * a slow drift of the machine's load weighs on both alike. Four orders in turn: which reference
 * comes first, and whether the floor opens or closes the round, alternate, so no side always
 * follows the same one.
 */
export function sideOrder(round: number): Side[] {
  const orders: Side[][] = [
    ['floor', 'powertools', 'ours', 'powertools-same-outputs'],
    ['powertools-same-outputs', 'ours', 'powertools', 'floor'],
    ['floor', 'powertools-same-outputs', 'ours', 'powertools'],
    ['powertools', 'ours', 'powertools-same-outputs', 'floor'],
  ];
  return orders[round % orders.length] as Side[];
}

async function cpuRow(child: string, c: CpuCase, options: CpuOptions): Promise<ComparisonRow> {
  const us = Object.fromEntries(SIDES.map((side) => [side, [] as number[]])) as Record<Side, number[]>;
  const warm = Object.fromEntries(SIDES.map((side) => [side, [] as number[]])) as Record<Side, number[]>;
  const loads: number[] = [];
  for (let round = 0; round < options.cpuRounds; round++) {
    loads.push(loadavg()[0] as number);
    for (const side of sideOrder(round)) {
      const result = await runCpuChild(child, side, c, options);
      us[side].push(result.cpuUsPerRecord);
      warm[side].push(result.warmCpuUsPerRecord);
    }
  }
  const ratios = (a: Side, b: Side) => roundRatios(us[a], us[b]);
  const bare = ratios('ours', 'powertools');
  const same = ratios('ours', 'powertools-same-outputs');
  const warmBare = roundRatios(warm.ours, warm.powertools);
  return {
    measure: cpuMeasure(c),
    unit: 'µs CPU/record',
    ours: median(us.ours),
    powertools: median(us.powertools),
    ratio: median(bare),
    oursSpread: spread(us.ours),
    powertoolsSpread: spread(us.powertools),
    ratioSpread: spread(bare),
    powertoolsSameOutputs: median(us['powertools-same-outputs']),
    powertoolsSameOutputsSpread: spread(us['powertools-same-outputs']),
    ratioSameOutputs: median(same),
    ratioSameOutputsSpread: spread(same),
    floor: median(us.floor),
    floorSpread: spread(us.floor),
    oursOverFloor: median(ratios('ours', 'floor')),
    powertoolsOverFloor: median(ratios('powertools', 'floor')),
    warmupRecords: options.warmRecords,
    oursWarmup: median(warm.ours),
    powertoolsWarmup: median(warm.powertools),
    ratioWarmup: median(warmBare),
    ratioWarmupSpread: spread(warmBare),
    rounds: options.cpuRounds,
    loadavgSpread: spread(loads),
  };
}

/** The CPU rows of {@link CPU_CASES}, each side in fresh processes. */
export async function cpuRows(
  options: CpuOptions,
  cases: readonly CpuCase[] = CPU_CASES,
): Promise<ComparisonRow[]> {
  const child = await buildCpuChild();
  try {
    const rows: ComparisonRow[] = [];
    for (const c of cases) rows.push(await cpuRow(child, c, options));
    return rows;
  } finally {
    rmSync(child, { force: true });
  }
}
