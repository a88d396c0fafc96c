/**
 * One side of a CPU row in a process of its own (bench/cpu.ts bundles this file and runs it with
 * plain `node`, a fresh process per side and round): builds the side's handler (bench/sides.ts),
 * runs `warm` records (the JIT settles), then `records` more, and reports the process's CPU time
 * (user + system, every thread: background compilation and concurrent GC are the side's cost too)
 * per record of each phase, as one `BENCH_RESULT {json}` line on stderr: `cpuUsPerRecord` (the
 * measured phase, what the rows compare) and `warmCpuUsPerRecord` (the warm-up, reported beside
 * it, never dropped unseen). stdout (the logs and EMF of the side) is dropped, as Lambda would ship
 * it without us paying.
 *
 * The events are a pool of {@link POOL_RECORDS} records built before the clock starts and run over
 * again in turn (no store: a record run twice costs what a new one does). Building every measured
 * record up front kept tens of megabytes of events alive, and the full garbage collections that
 * marked them fell into one side's window or the other's by chance (one 5,000-record stretch of a
 * Powertools process read 48 µs per record against 15–20 in the others), and added 4–5 µs per
 * record to every side, which pulled ratios toward 1. A small pool keeps the live heap the side's
 * own, as in Lambda (bench/README.md, "Repeatability").
 *
 * `node cpu-child.mjs <side> <mode> <batchSize> <warmRecords> <records>`
 */
import { lambdaContext } from '../test/factories/sqs.ts';
import { events, MODES, type Mode, SIDES, type Side, sideHandler } from './sides.ts';

/** Records in the pool of events a process runs through again and again (at least one batch). */
const POOL_RECORDS = 10_000;

const [side, mode, batchArg, warmArg, recordsArg] = process.argv.slice(2);
if (!SIDES.includes(side as Side) || !MODES.includes(mode as Mode)) {
  throw new Error(`usage: cpu-child <${SIDES.join('|')}> <${MODES.join('|')}> <batchSize> <warm> <records>`);
}
const batchSize = Number(batchArg);
const batchesOf = (records: number) => Math.max(1, Math.round(records / batchSize));
const handler = sideHandler(side as Side, mode as Mode);
const context = lambdaContext();
process.stdout.write = (() => true) as typeof process.stdout.write;

// Built before the clock starts: making events is the bench's cost, not the side's.
const pool = events(batchesOf(POOL_RECORDS), mode as Mode, batchSize);
let next = 0;

/** Runs `batches` batches from the pool; the CPU time they took, in µs (user + system). */
async function run(batches: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < batches; i++) {
    const response = await handler(pool[next] as (typeof pool)[number], context);
    if (response.batchItemFailures.length > 0) throw new Error(`${side}: a record failed`);
    next = (next + 1) % pool.length;
  }
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

const warmBatches = batchesOf(Number(warmArg));
const measuredBatches = batchesOf(Number(recordsArg));
const warmUs = await run(warmBatches);
const measuredUs = await run(measuredBatches);
const records = measuredBatches * batchSize;
process.stderr.write(
  `BENCH_RESULT ${JSON.stringify({
    cpuUsPerRecord: measuredUs / records,
    records,
    warmCpuUsPerRecord: warmUs / (warmBatches * batchSize),
    warmRecords: warmBatches * batchSize,
    heapUsed: process.memoryUsage().heapUsed,
  })}\n`,
);
