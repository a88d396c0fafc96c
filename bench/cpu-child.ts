/**
 * One side of a CPU row in a process of its own (bench/cpu.ts bundles this file and runs it with
 * plain `node`, a fresh process per side and round): builds the side's handler (bench/sides.ts),
 * runs `warm` records untimed (the JIT settles), then `records` more, and reports the CPU time
 * (user + system) per record and the heap in use, as one `BENCH_RESULT {json}` line on stderr.
 * stdout (the logs and EMF of the side) is dropped, as Lambda would ship it without us paying.
 *
 * `node cpu-child.mjs <side> <mode> <batchSize> <warmRecords> <records>`
 */
import { lambdaContext } from '../test/factories/sqs.ts';
import { events, MODES, type Mode, SIDES, type Side, sideHandler } from './sides.ts';

const [side, mode, batchArg, warmArg, recordsArg] = process.argv.slice(2);
if (!SIDES.includes(side as Side) || !MODES.includes(mode as Mode)) {
  throw new Error(`usage: cpu-child <${SIDES.join('|')}> <${MODES.join('|')}> <batchSize> <warm> <records>`);
}
const batchSize = Number(batchArg);
const batchesOf = (records: number) => Math.max(1, Math.round(records / batchSize));
const handler = sideHandler(side as Side, mode as Mode);
const context = lambdaContext();
process.stdout.write = (() => true) as typeof process.stdout.write;

async function run(batches: ReturnType<typeof events>): Promise<void> {
  for (const event of batches) {
    const response = await handler(event, context);
    if (response.batchItemFailures.length > 0) throw new Error(`${side}: a record failed`);
  }
}

// Built before the clock starts: making events is the bench's cost, not the side's. The warm-up
// runs the first of them (no store: a record run twice costs what a new one does).
const measured = events(batchesOf(Number(recordsArg)), mode as Mode, batchSize);
await run(measured.slice(0, batchesOf(Number(warmArg))));
const before = process.cpuUsage();
await run(measured);
const used = process.cpuUsage(before);
const records = measured.length * batchSize;
process.stderr.write(
  `BENCH_RESULT ${JSON.stringify({ cpuUsPerRecord: (used.user + used.system) / records, records, heapUsed: process.memoryUsage().heapUsed })}\n`,
);
