/**
 * Wall time of one wide standard batch (issue 18, part of `npm run bench`): 100 and 1,000 records
 * whose job waits 20 ms (an API call), sqs-jobs' `createWorker` (default settings: the batch at
 * its full width) against Powertools' `BatchProcessor` (every record at once), without a store
 * and with idempotency on DynamoDB (ours the DynamoDB store, theirs `makeIdempotent`, each on its
 * own table of one dynalite started here), as bench/vs-powertools.ts sets both up.
 *
 * Each measurement runs in a fresh process of its own (`node --import tsx bench/wide-batch.ts
 * child <side> <records> [endpoint]`): untimed warm-up batches ({@link WARMUP_RECORDS} records),
 * then {@link TIMED_BATCHES} timed batches of new records, the process reporting their median. The sides alternate, the order
 * flipped every round; a row gives the median over rounds and the spread (min–max), and the ratio
 * as the median of per-round ratios (ours / Powertools; lower is better). Figures, not assertions.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { lambdaContext } from '../test/factories/sqs.ts';
import { createClient, createTable, startDynalite } from '../test/support/dynalite.ts';
import { median, spread } from './stats.ts';
import {
  type ComparisonRow,
  type SideStores,
  silenced,
  standardEventOf,
  waitingJobHandlers,
} from './vs-powertools.ts';

/** Milliseconds each job waits, as the I/O rows of bench/vs-powertools.ts. */
const WAIT_MS = 20;
/** Timed batches per child process, after the warm-up. */
const TIMED_BATCHES = 5;
/**
 * Records run untimed first in each child (at least one batch): a warm Lambda instance has run
 * the code before; fewer leaves both sides half-compiled and the figure then measures the JIT.
 */
const WARMUP_RECORDS = 2_000;
const SIZES = [100, 1_000] as const;

type Side = 'ours' | 'powertools';

export interface WideBatchOptions {
  /** Rounds per row (>= 5): each round runs each side once, in a fresh process. */
  readonly rounds: number;
}

/** What a child prints: the median wall time of its timed batches, in milliseconds. */
interface ChildResult {
  readonly ms: number;
}

/** Runs one measurement in a fresh process and returns its median wall time per batch. */
function measureInChild(side: Side, records: number, endpoint: string | undefined): Promise<number> {
  const script = fileURLToPath(import.meta.url);
  const args = ['--import', 'tsx', script, 'child', side, String(records), ...(endpoint ? [endpoint] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        if (code !== 0) throw new Error(`exit code ${code}`);
        resolve((JSON.parse(line) as ChildResult).ms);
      } catch (error) {
        reject(
          new Error(`wide-batch child ${side} ${records} failed (${String(error)}): ${err.slice(-2000)}`),
        );
      }
    });
  });
}

async function row(
  records: number,
  endpoint: string | undefined,
  options: WideBatchOptions,
): Promise<ComparisonRow> {
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ['ours', 'powertools'] : ['powertools', 'ours'];
    for (const side of order) {
      const ms = await measureInChild(side, records, endpoint);
      (side === 'ours' ? ours : theirs).push(ms);
    }
  }
  const ratios = ours.map((ms, i) => ms / (theirs[i] as number));
  return {
    measure: `wall time of one standard batch of ${records.toLocaleString('en-US')}, each job waits ${WAIT_MS} ms, ${endpoint ? 'DynamoDB idempotency (dynalite)' : 'no store'}`,
    unit: 'ms wall/batch',
    ours: median(ours),
    powertools: median(theirs),
    ratio: median(ratios),
    oursSpread: spread(ours),
    powertoolsSpread: spread(theirs),
    ratioSpread: spread(ratios),
  };
}

/** The rows: 100 and 1,000 records, without a store and with idempotency on dynalite. */
export async function wideBatchRows(options: WideBatchOptions): Promise<ComparisonRow[]> {
  const rows: ComparisonRow[] = [];
  for (const records of SIZES) rows.push(await row(records, undefined, options));
  const dynamo = await startDynalite();
  try {
    for (const records of SIZES) rows.push(await row(records, dynamo.endpoint, options));
  } finally {
    await dynamo.stop();
  }
  return rows;
}

/** The child: builds one side, warms it up, times {@link TIMED_BATCHES} batches. */
async function child(side: Side, records: number, endpoint: string | undefined): Promise<void> {
  let stores: SideStores | undefined;
  if (endpoint !== undefined) {
    const oursClient = createClient(endpoint);
    const theirsClient = createClient(endpoint);
    stores = {
      oursClient,
      oursTable: await createTable(oursClient),
      theirsClient,
      theirsTable: await createTable(theirsClient, { partitionKey: 'id' }),
    };
  }
  const handlers = waitingJobHandlers(WAIT_MS, stores);
  const handler = side === 'ours' ? handlers.ours : handlers.theirs;
  const times = await silenced(async () => {
    const measured: number[] = [];
    const warmup = Math.max(1, Math.ceil(WARMUP_RECORDS / records));
    for (let batch = 0; batch < warmup + TIMED_BATCHES; batch++) {
      const event = standardEventOf(records);
      const started = performance.now();
      // A context per batch, as each invocation gets its own deadline.
      const response = await handler(event, lambdaContext());
      if (batch >= warmup) measured.push(performance.now() - started);
      if (response.batchItemFailures.length > 0) {
        throw new Error(`${response.batchItemFailures.length} records failed (${side}, ${records})`);
      }
    }
    return measured;
  });
  stores?.oursClient.destroy();
  stores?.theirsClient.destroy();
  process.stdout.write(`${JSON.stringify({ ms: median(times) } satisfies ChildResult)}\n`);
}

/** Prints the rows as a table, with the load average before and after. */
export function printWideBatch(
  rows: readonly ComparisonRow[],
  options: WideBatchOptions,
  load: string,
): void {
  const fmt = (n: number) => n.toFixed(0);
  console.log(
    `\nwide standard batches, sqs-jobs (default settings) vs Powertools BatchProcessor (+ makeIdempotent with a store): ` +
      `each figure from a fresh process (${WARMUP_RECORDS} records of warm-up, then the median of ${TIMED_BATCHES} batches), sides alternated, ` +
      `median of ${options.rounds} rounds (min–max); load average before: ${load}, after: ${loadavg().join(' ')}`,
  );
  console.table(
    rows.map((r) => ({
      measure: r.measure,
      'sqs-jobs ms': `${fmt(r.ours)} (${fmt(r.oursSpread?.[0] ?? r.ours)}–${fmt(r.oursSpread?.[1] ?? r.ours)})`,
      'Powertools ms': `${fmt(r.powertools)} (${fmt(r.powertoolsSpread?.[0] ?? r.powertools)}–${fmt(r.powertoolsSpread?.[1] ?? r.powertools)})`,
      ratio: `${r.ratio.toFixed(2)}× (${r.ratioSpread?.[0].toFixed(2)}–${r.ratioSpread?.[1].toFixed(2)})`,
    })),
  );
}

const [, , mode, side, records, endpoint] = process.argv;
if (mode === 'child' && process.argv[1] === fileURLToPath(import.meta.url)) {
  await child(side as Side, Number(records), endpoint);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `node --import tsx bench/wide-batch.ts [rounds]`: this bench alone.
  const options = { rounds: Math.max(5, Number(mode ?? 5) || 5) };
  const load = loadavg().join(' ');
  printWideBatch(await wideBatchRows(options), options, load);
}
