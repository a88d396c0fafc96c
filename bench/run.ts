/**
 * Benchmarks of the job runtime's hot paths (`npm run bench`). Figures, not assertions: speed
 * and memory targets live here, never in timed tests.
 *
 * - worker overhead per batch of 10 (standard and FIFO, no idempotency store, fake SQS):
 *   the cost the runtime adds around a job that does nothing;
 * - the same with the DynamoDB idempotency store on the embedded emulator (dynalite):
 *   dominated by the emulator's HTTP round trips, an upper bound of the local cost;
 * - envelope parsing and the payload hash, paid once per record;
 * - heap growth over many invocations of one warm handler (a leak across invocations shows
 *   here as growth proportional to the invocation count);
 * - entry point bundle sizes and times, and the packed tarball (bench/entry-points.ts);
 * - side by side with Powertools' batch and idempotency packages: CPU per record and DynamoDB
 *   requests and bytes per new record (bench/vs-powertools.ts), new records/s on moto server
 *   (bench/moto.ts), bundle, cold start and heap of a minimal worker (bench/cold-start.ts,
 *   bench/workers/); and the sample's deployed workers' bundle and source-map sizes.
 * - X-Ray tracing: CPU per record off / unsampled / sampled, the first sampled invocation, and
 *   what the tracer adds to a bundle and its import (bench/tracing.ts).
 * - wide standard batches: wall time of one batch of 100 and of 1,000 records whose job waits
 *   20 ms, against Powertools' BatchProcessor, without a store and with idempotency on dynalite,
 *   each side in fresh processes, alternated (bench/wide-batch.ts; also alone:
 *   `node --import tsx bench/wide-batch.ts [rounds]`).
 *
 * `npm run bench -- --local-scaling`: only `npm start` at 100, 1,000 and 5,000 users and the
 * emulators' ceiling (bench/local-scaling.ts; heavy, minutes, not in the short mode).
 *
 * `npm run bench -- --cpu`: only the rows of issue 21's targets (CPU per record in fresh processes,
 * bundle, cold start, heap), as one JSON object like `--json`'s (about 4¾ minutes of CPU time). With
 * `--case=standard:10` (mode `standard`, `fifo10` or `fifo1`, then the batch size; repeatable) only
 * CPU rows, with `--cold-start` the bundle, cold-start and heap rows (bench/cold-start.ts); either
 * flag alone leaves the other part out.
 *
 * `npm run bench -- --compare a.json b.json`: two saved runs, ratio by ratio, within 10 % or not
 * (bench/compare.ts). In `--cpu` and `--json` output, the rows issue 21 sets a target for carry
 * `target` and `met` (bench/targets.ts).
 *
 * `npm run bench -- --json`: only the side-by-side comparison, in its short form (a quarter of an
 * hour on a loaded machine), as one JSON object on stdout: `{ node, date, loadavg, options, rows:
 * [{ measure, unit, ours, powertools, ratio, ... }], figures: [{ measure, unit, ours }] }` (ratio = ours /
 * powertools; `figures` are ours alone). `--short`: the same short form, printed as tables.
 */
import { loadavg } from 'node:os';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import { Bench } from 'tinybench';
import { z } from 'zod';
import { payloadHash } from '../lib/core/canonical-json.ts';
import { parseEnvelope } from '../lib/core/envelope.ts';
import { DynamoIdempotencyStore } from '../lib/runtime/idempotency/store.ts';
import { defineJob } from '../lib/runtime/job.ts';
import { createWorker, type WorkerHandler } from '../lib/runtime/worker.ts';
import { FakeSqs } from '../test/factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../test/factories/sqs.ts';
import { startDynalite } from '../test/support/dynalite.ts';
import {
  type ColdStartOptions,
  coldStartRows,
  deployedWorkerFigures,
  type Figure,
  sourceMapFigures,
} from './cold-start.ts';
import { compareMain } from './compare.ts';
import { CPU_CASES, cpuMeasure, cpuRows } from './cpu.ts';
import { printEntryPointFigures } from './entry-points.ts';
import { printLocalScaling } from './local-scaling.ts';
import { motoRows } from './moto.ts';
import { allTargetsMet, ISSUE_21_TARGETS, missingTargets, withTargets } from './targets.ts';
import { measureTracing, printTracing } from './tracing.ts';
import {
  type ComparisonOptions,
  type ComparisonRow,
  compareWithPowertools,
  ioRows,
  outputBytesPerRecord,
  printComparison,
  silenced,
} from './vs-powertools.ts';
import { wideBatchRows } from './wide-batch.ts';

const BATCH_SIZE = 10;
const noop = defineJob({
  type: 'bench.noop',
  queue: 'bench',
  schema: z.object({ orderId: z.string(), userId: z.string() }),
  run: async () => ({ ok: true }),
});

function quietTelemetry(): { logger: Logger; metrics: Metrics } {
  return {
    logger: new Logger({ serviceName: 'bench', logLevel: 'ERROR' }),
    metrics: new Metrics({ namespace: 'SqsJobsBench', serviceName: 'bench' }),
  };
}

let sequence = 0;
/** A fresh batch each call, so idempotency never short-circuits a run. */
function batch(queue: string, groups: number): SQSRecord[] {
  return Array.from({ length: BATCH_SIZE }, (_, i) => {
    sequence += 1;
    const userId = `user-${i % groups}`;
    return sqsRecord({
      queue,
      body: jobBody(noop.type, { orderId: `order-${sequence}`, userId }, { partitionKey: userId }),
      ...(queue.endsWith('.fifo') ? { groupId: userId } : {}),
    });
  });
}

function worker(queue: string, idempotency: DynamoIdempotencyStore | false): WorkerHandler {
  return createWorker({
    jobs: [noop],
    queueName: 'bench',
    queueUrl: queueUrl(queue),
    dlqUrl: queueUrl(queue.endsWith('.fifo') ? 'bench-dlq.fifo' : 'bench-dlq'),
    idempotency,
    sqs: new FakeSqs(),
    ...quietTelemetry(),
  });
}

async function heapGrowthPerInvocationBytes(handler: WorkerHandler, invocations: number): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const measure = () => {
    gc?.();
    return process.memoryUsage().heapUsed;
  };
  for (let i = 0; i < 200; i++) await handler(sqsEvent(batch('bench', BATCH_SIZE)), lambdaContext());
  const before = measure();
  for (let i = 0; i < invocations; i++) await handler(sqsEvent(batch('bench', BATCH_SIZE)), lambdaContext());
  return (measure() - before) / invocations;
}

interface SideBySideOptions extends ComparisonOptions, ColdStartOptions {
  /** Batches of 10 new records per side on moto server. */
  readonly motoBatches: number;
  /** Batches of 10 per side and queue kind for the wall-time rows with I/O. */
  readonly ioBatches: number;
  /** Rounds of the wide-batch rows (bench/wide-batch.ts), each side a fresh process per round. */
  readonly wideRounds: number;
}

const FULL: SideBySideOptions = {
  cpuRounds: 31,
  warmRecords: 20_000,
  measuredRecords: 50_000,
  storeBatches: 50,
  coldRounds: 80,
  ownRounds: 20,
  heapRounds: 7,
  motoBatches: 30,
  ioBatches: 30,
  wideRounds: 7,
};
const SHORT: SideBySideOptions = {
  cpuRounds: 25,
  warmRecords: 20_000,
  measuredRecords: 30_000,
  storeBatches: 20,
  coldRounds: 60,
  ownRounds: 15,
  heapRounds: 5,
  motoBatches: 20,
  ioBatches: 10,
  wideRounds: 5,
};

/** Every side-by-side row (issue 10), and the figures of ours alone (deployed workers). */
async function sideBySide(options: SideBySideOptions): Promise<{ rows: ComparisonRow[]; figures: Figure[] }> {
  const rows = [
    ...(await compareWithPowertools(options)),
    ...(await ioRows(options.ioBatches)),
    ...(await wideBatchRows({ rounds: options.wideRounds })),
    // Both workers log and write EMF to stdout: dropped, so `--json` stays one object.
    ...(await silenced(() => motoRows(options.motoBatches))),
    ...(await coldStartRows(options)),
  ];
  const output = await outputBytesPerRecord(50);
  const outputFigures: Figure[] = [
    {
      measure: 'stdout log bytes per record, standard batch of 10, default level',
      unit: 'bytes',
      ours: output.ours.logBytesPerRecord,
    },
    {
      measure: 'stdout EMF bytes per record, standard batch of 10',
      unit: 'bytes',
      ours: output.ours.emfBytesPerRecord,
    },
    {
      measure: 'Powertools side: stdout log bytes per record (Logger, no metrics)',
      unit: 'bytes',
      ours: output.powertools.logBytesPerRecord,
    },
    {
      measure: 'Powertools side: stdout EMF bytes per record',
      unit: 'bytes',
      ours: output.powertools.emfBytesPerRecord,
    },
  ];
  return {
    rows: withTargets(rows),
    figures: [
      ...(await deployedWorkerFigures()),
      ...(await sourceMapFigures(options.coldRounds)),
      ...outputFigures,
    ],
  };
}

/** Issue 21's targets with no row in `rows` (a renamed row, a part left out), on stderr: stdout stays one JSON object. */
function warnMissingTargets(rows: readonly ComparisonRow[], expected?: readonly string[]): void {
  for (const measure of missingTargets(rows, expected))
    process.stderr.write(`bench: no row for issue 21's target "${measure}"\n`);
}

function printFigures(figures: readonly Figure[]): void {
  console.log(
    "\nsqs-jobs alone: the sample's deployed workers, bundled with JobQueue's settings (AWS SDK bundled), and what source maps cost them",
  );
  console.table(figures.map((f) => ({ measure: f.measure, unit: f.unit, value: f.ours.toFixed(1) })));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const args = new Set(argv);
  if (args.has('--compare')) {
    // Two saved JSON runs (`--cpu` or `--json`), side by side: bench/compare.ts.
    process.exitCode = compareMain(argv.filter((a) => a !== '--compare'));
    return;
  }
  const cases = [...args]
    .filter((arg) => arg.startsWith('--case='))
    .map((arg) => arg.slice('--case='.length));
  if (args.has('--local-scaling')) {
    await printLocalScaling();
    return;
  }
  if (args.has('--cpu')) {
    // Only the rows of issue 21's targets (CPU per record, bundle, cold start, heap), as JSON.
    const loadavgAtStart = loadavg();
    const cpuCases = CPU_CASES.filter(
      (c) => cases.length === 0 || cases.includes(`${c.mode}:${c.batchSize}`),
    );
    if (cpuCases.length === 0)
      throw new Error(`--case: none of ${cases.join(', ')} is a CPU case (standard:10, fifo1:10, ...)`);
    // Neither flag: every row; either or both: only what they name.
    const all = cases.length === 0 && !args.has('--cold-start');
    const runCpu = all || cases.length > 0;
    const runColdStart = all || args.has('--cold-start');
    const rows = withTargets([
      ...(runCpu ? await cpuRows(SHORT, cpuCases) : []),
      ...(runColdStart ? await coldStartRows(SHORT) : []),
    ]);
    // The targets of the parts this run measured; `partial` when it left some out.
    const cpuTargetMeasures = new Set(CPU_CASES.map(cpuMeasure));
    const ranMeasures = new Set(cpuCases.map(cpuMeasure));
    const expected = ISSUE_21_TARGETS.map((t) => t.measure).filter((m) =>
      cpuTargetMeasures.has(m) ? runCpu && ranMeasures.has(m) : runColdStart,
    );
    warnMissingTargets(rows, expected);
    process.stdout.write(
      `${JSON.stringify({ node: process.version, date: new Date().toISOString(), loadavgAtStart, loadavg: loadavg(), options: SHORT, partial: expected.length < ISSUE_21_TARGETS.length, allTargetsMet: allTargetsMet(rows, expected), rows })}\n`,
    );
    return;
  }
  if (args.has('--json')) {
    const { rows, figures } = await sideBySide(SHORT);
    warnMissingTargets(rows);
    process.stdout.write(
      `${JSON.stringify({ node: process.version, date: new Date().toISOString(), loadavg: loadavg(), options: SHORT, allTargetsMet: allTargetsMet(rows), rows, figures })}\n`,
    );
    return;
  }
  if (args.has('--short')) {
    const { rows, figures } = await sideBySide(SHORT);
    printComparison(rows, SHORT);
    printFigures(figures);
    console.log(`load average at the end: ${loadavg().join(' ')}`);
    return;
  }
  const dynamo = await startDynalite();
  const tableName = await dynamo.createTable();
  const store = new DynamoIdempotencyStore({ tableName, client: dynamo.client });
  const standard = worker('bench', false);
  const fifo = worker('bench.fifo', false);
  const guarded = worker('bench', store);
  const sampleBody = jobBody(noop.type, { orderId: 'order-1', userId: 'user-1' });
  const sampleData = { orderId: 'order-1', userId: 'user-1', items: [{ sku: 'sku-1', quantity: 2 }] };

  const bench = new Bench({ time: 1500, warmupTime: 300 });
  bench
    .add('worker: standard batch of 10, no store', () =>
      standard(sqsEvent(batch('bench', 10)), lambdaContext()),
    )
    .add('worker: FIFO batch of 10 in 5 groups, no store', () =>
      fifo(sqsEvent(batch('bench.fifo', 5)), lambdaContext()),
    )
    .add('worker: standard batch of 10, DynamoDB store (dynalite)', () =>
      guarded(sqsEvent(batch('bench', 10)), lambdaContext()),
    )
    .add('envelope: parseEnvelope', () => {
      parseEnvelope(sampleBody);
    })
    .add('idempotency: payloadHash (canonical JSON + SHA-256)', () => {
      payloadHash(sampleData);
    });

  const growth = await silenced(async () => {
    await bench.run();
    return heapGrowthPerInvocationBytes(standard, 2000);
  });
  await dynamo.stop();

  console.log(`sqs-jobs bench on Node ${process.version}, ${new Date().toISOString()}`);
  console.table(
    bench.tasks.map((task) => {
      const result = task.result;
      const latency = result && 'latency' in result ? result.latency : undefined;
      const throughput = result && 'throughput' in result ? result.throughput : undefined;
      const perBatch = task.name.startsWith('worker');
      return {
        task: task.name,
        'ops/s': throughput ? Math.round(throughput.mean) : 'n/a',
        'mean ms': latency ? latency.mean.toFixed(3) : 'n/a',
        'p99 ms': latency?.p99 !== undefined ? latency.p99.toFixed(3) : 'n/a',
        'records/s': perBatch && throughput ? Math.round(throughput.mean * BATCH_SIZE) : '',
      };
    }),
  );
  const gcNote = (globalThis as { gc?: unknown }).gc ? '' : ' (run with --expose-gc for a cleaner figure)';
  console.log(`heap growth per invocation over 2,000 warm invocations: ${Math.round(growth)} bytes${gcNote}`);
  const { rows, figures } = await sideBySide(FULL);
  printComparison(rows, FULL);
  printFigures(figures);
  console.log(`load average at the end: ${loadavg().join(' ')}`);
  printTracing(await measureTracing());
  await printEntryPointFigures();
}

await main();
