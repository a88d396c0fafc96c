/**
 * CPU profile of warm records of the side-by-side bench (bench/vs-powertools.ts: the same job,
 * schema and events, bodies with a traceparent), one side per process, default settings, no store
 * (issue 10):
 * `npx node --cpu-prof --cpu-prof-dir=.profiles --import tsx bench/profile.ts [standard|fifo10|fifo1] [records] [ours|powertools]`
 * then read the `.cpuprofile` in Chrome DevTools, or `npx tsx bench/profile-top.ts <file>` for the top self times.
 * Without --cpu-prof it prints the side's CPU per record alone (no interleaving: compare runs taken
 * back to back, and mind the load average it prints).
 */
import { loadavg } from 'node:os';
import { lambdaContext } from '../test/factories/sqs.ts';
import { cpuBenchSetup } from './vs-powertools.ts';

const mode = process.argv[2] ?? 'standard';
const records = Number(process.argv[3] ?? 30_000);
const side = process.argv[4] ?? 'ours';
if (!['standard', 'fifo10', 'fifo1'].includes(mode) || !['ours', 'powertools'].includes(side)) {
  throw new Error('usage: profile.ts [standard|fifo10|fifo1] [records] [ours|powertools]');
}
const setup = cpuBenchSetup(mode === 'standard' ? 'bench' : 'bench.fifo', mode === 'fifo1' ? 1 : 10);
const handler = side === 'ours' ? setup.ours : setup.powertools;
// Built once and run PASSES times (no store: the same events run again), so setup stays out of the profile.
const PASSES = Number(process.env.PASSES ?? 10);
const events = setup.events(Math.max(1, Math.round(records / 10 / PASSES)));
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
console.log(
  `${mode} ${side}: ${((used.user + used.system) / (events.length * 10 * PASSES)).toFixed(2)} µs CPU/record over ${events.length * 10 * PASSES} records (load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);
