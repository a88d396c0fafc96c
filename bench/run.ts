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
 * - side by side with Powertools' batch and idempotency packages (bench/vs-powertools.ts).
 *
 * `npm run bench -- --json`: only the side-by-side comparison, in its short form (about a
 * minute), as one JSON object on stdout: `{ node, date, rows: [{ measure, unit, ours,
 * powertools, ratio, ... }] }` (ratio = ours / powertools). `--short`: the same short form,
 * printed as a table.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import { Bench } from 'tinybench';
import { z } from 'zod';
import { payloadHash } from '../lib/runtime/canonical-json.ts';
import { parseEnvelope } from '../lib/runtime/envelope.ts';
import { DynamoIdempotencyStore } from '../lib/runtime/idempotency/store.ts';
import { defineJob } from '../lib/runtime/job.ts';
import { createWorker, type WorkerHandler } from '../lib/runtime/worker.ts';
import { FakeSqs } from '../test/factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../test/factories/sqs.ts';
import { startDynalite } from '../test/support/dynalite.ts';
import { printEntryPointFigures } from './entry-points.ts';
import { type ComparisonOptions, compareWithPowertools, printComparison } from './vs-powertools.ts';

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

/** EMF blobs go to stdout once per invocation: swallow them while measuring. */
async function silenced<T>(fn: () => Promise<T>): Promise<T> {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
  }
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

const FULL: ComparisonOptions = { rounds: 9, batchesPerRound: 1000, warmupBatches: 2000, storeBatches: 50 };
const SHORT: ComparisonOptions = { rounds: 5, batchesPerRound: 500, warmupBatches: 1500, storeBatches: 20 };

async function main(): Promise<void> {
  const args = new Set(process.argv.slice(2));
  if (args.has('--json')) {
    const rows = await compareWithPowertools(SHORT);
    process.stdout.write(
      `${JSON.stringify({ node: process.version, date: new Date().toISOString(), options: SHORT, rows })}\n`,
    );
    return;
  }
  if (args.has('--short')) {
    printComparison(await compareWithPowertools(SHORT), SHORT);
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
  printComparison(await compareWithPowertools(FULL), FULL);
  await printEntryPointFigures();
}

await main();
