/**
 * CPU profile of one side of the CPU rows (bench/sides.ts: the same job, schema and events) in a
 * process of its own, no store (issues 10, 21):
 * `node --cpu-prof --cpu-prof-dir=.profiles --import tsx bench/profile.ts [standard|fifo10|fifo1] [records] [ours|powertools|powertools-same-outputs|floor] [batchSize]`
 * then read the `.cpuprofile` in Chrome DevTools, or `npx tsx bench/profile-top.ts <file>` for the top self times.
 * Without --cpu-prof it prints the side's CPU per record alone (one process: compare runs taken
 * back to back, and mind the load average it prints; bench/cpu.ts gives the ratios).
 */
import { loadavg } from 'node:os';
import { lambdaContext } from '../test/factories/sqs.ts';
import { MODES, type Mode, events as makeEvents, SIDES, type Side, sideHandler } from './sides.ts';

const mode = (process.argv[2] ?? 'standard') as Mode;
const records = Number(process.argv[3] ?? 30_000);
const side = (process.argv[4] ?? 'ours') as Side;
const batchSize = Number(process.argv[5] ?? 10);
if (!MODES.includes(mode) || !SIDES.includes(side)) {
  throw new Error(`usage: profile.ts [${MODES.join('|')}] [records] [${SIDES.join('|')}] [batchSize]`);
}
const handler = sideHandler(side, mode);
// Built once and run PASSES times (no store: the same events run again), so setup stays out of the profile.
const PASSES = Number(process.env.PASSES ?? 10);
const events = makeEvents(Math.max(1, Math.round(records / batchSize / PASSES)), mode, batchSize);
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;
const context = lambdaContext();
const before = process.cpuUsage();
for (let pass = 0; pass < PASSES; pass++) {
  for (const event of events) {
    const response = await handler(event, context);
    if (response.batchItemFailures.length > 0) throw new Error('bench record failed');
  }
}
const used = process.cpuUsage(before);
process.stdout.write = write;
const total = events.length * batchSize * PASSES;
console.log(
  `${mode} ${side} batch ${batchSize}: ${((used.user + used.system) / total).toFixed(2)} µs CPU/record over ${total} records (load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);
