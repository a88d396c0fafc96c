/**
 * Side by side with the usual alternative (part of `npm run bench`, issue 10): Powertools for AWS
 * Lambda (TypeScript) `BatchProcessor` + `makeIdempotent` with `DynamoDBPersistenceLayer`, against
 * `createWorker`, on the same Node, SDK, zod and Middy copies, the same job and the same events
 * (bench/sides.ts).
 *
 * - CPU per record: bench/cpu.ts, each side in fresh processes of its own (issue 21).
 * - DynamoDB per new record (fresh ids, standard batch of 10, each side its own table on
 *   dynalite): requests, request bytes and response bytes, counted by a client middleware
 *   (HTTP bodies, the bytes DynamoDB bills and throttles on, without headers).
 * - Wall time per batch with I/O in the job, and the bytes each side writes to stdout.
 *
 * Figures, not assertions: ratios are sqs-jobs / Powertools (lower is better for costs).
 */
import { performance } from 'node:perf_hooks';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { DynamoIdempotencyStore } from '../lib/runtime/idempotency/store.ts';
import { defineJob } from '../lib/runtime/job.ts';
import { lambdaContext } from '../test/factories/sqs.ts';
import { createClient, createTable, startDynalite } from '../test/support/dynalite.ts';
import { type CpuOptions, cpuRows } from './cpu.ts';
import {
  compute,
  events,
  type Handler,
  job,
  type Mode,
  type OrderData,
  oursHandler,
  powertoolsHandler,
  schema,
} from './sides.ts';
import { median } from './stats.ts';

/** One row of the comparison (the `--json` shape of issue 10). */
export interface ComparisonRow {
  readonly measure: string;
  readonly unit: string;
  /** sqs-jobs' figure (median over rounds). */
  readonly ours: number;
  readonly powertools: number;
  /** ours / powertools. */
  readonly ratio: number;
  /** Spread over rounds, min–max, when measured over rounds. */
  readonly oursSpread?: readonly [number, number];
  readonly powertoolsSpread?: readonly [number, number];
  /** Ratio per round, min–max. */
  readonly ratioSpread?: readonly [number, number];
  /** CPU rows (bench/cpu.ts): Powertools writing the same log line and EMF as ours. */
  readonly powertoolsSameOutputs?: number;
  readonly powertoolsSameOutputsSpread?: readonly [number, number];
  /** ours / powertoolsSameOutputs, median of the per-round ratios. */
  readonly ratioSameOutputs?: number;
  readonly ratioSameOutputsSpread?: readonly [number, number];
  /** CPU rows: JSON.parse of the body, the job, the response; nothing else. */
  readonly floor?: number;
  readonly floorSpread?: readonly [number, number];
  /** ours / floor and powertools / floor, medians of the per-round ratios. */
  readonly oursOverFloor?: number;
  readonly powertoolsOverFloor?: number;
  /**
   * CPU rows: the warm-up each process ran before its measured records (`warmupRecords` of them,
   * JIT compilation and all), CPU per record, medians; `ratioWarmup` = median of the per-round
   * ours / powertools. Reported beside the measured figures; no target reads them.
   */
  readonly warmupRecords?: number;
  readonly oursWarmup?: number;
  readonly powertoolsWarmup?: number;
  readonly ratioWarmup?: number;
  readonly ratioWarmupSpread?: readonly [number, number];
  /** Rounds (fresh processes per side) behind the medians. */
  readonly rounds?: number;
  /** The 1-minute load average at the start of each round, min–max. */
  readonly loadavgSpread?: readonly [number, number];
  /** The target for this row, as a condition on the fields above, and whether it holds. */
  readonly target?: string;
  readonly met?: boolean;
}

export interface ComparisonOptions extends CpuOptions {
  /** Batches of 10 new records per side for the DynamoDB counts. */
  readonly storeBatches: number;
}

const BATCH_SIZE = 10;

/** Logs and EMF are formatted and written as in Lambda, into a stdout that drops them. */
export async function silenced<T>(fn: () => Promise<T>): Promise<T> {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
  }
}

interface DynamoCounts {
  requests: number;
  requestBytes: number;
  responseBytes: number;
  readonly byOperation: Map<string, { requests: number; requestBytes: number }>;
}

/** Counts requests and HTTP body bytes of `client` (SDK middleware). */
function countDynamo(client: DynamoDBClient): DynamoCounts {
  const counts: DynamoCounts = { requests: 0, requestBytes: 0, responseBytes: 0, byOperation: new Map() };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { body?: unknown };
      const body = request.body;
      const bytes =
        typeof body === 'string' ? Buffer.byteLength(body) : body instanceof Uint8Array ? body.length : 0;
      const operation = (context as { commandName?: string }).commandName ?? 'unknown';
      counts.requests += 1;
      counts.requestBytes += bytes;
      const op = counts.byOperation.get(operation) ?? { requests: 0, requestBytes: 0 };
      op.requests += 1;
      op.requestBytes += bytes;
      counts.byOperation.set(operation, op);
      const result = await next(args);
      const response = result.response as { headers?: Record<string, string> };
      counts.responseBytes += Number(response.headers?.['content-length'] ?? 0);
      return result;
    },
    { step: 'finalizeRequest', name: 'benchCountBytes', priority: 'low' },
  );
  // Failed conditional writes surface as errors after the response: still counted above.
  return counts;
}

/**
 * Both sides with idempotency on DynamoDB, standard queue: ours with the DynamoDB store on
 * `oursTable` (partition key `pk`), Powertools' `makeIdempotent` on `theirsTable` (partition key
 * `id`), key `[source, id]` and payload validation on `data`.
 */
export function storeHandlers(
  oursClient: DynamoDBClient,
  oursTable: string,
  theirsClient: DynamoDBClient,
  theirsTable: string,
): { ours: Handler; theirs: Handler } {
  const ours = oursHandler(
    'standard',
    new DynamoIdempotencyStore({ tableName: oursTable, client: oursClient }),
  );
  const config = new IdempotencyConfig({
    eventKeyJmesPath: '[source, id]',
    payloadValidationJmesPath: 'data',
  });
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: theirsTable,
    awsSdkV3Client: theirsClient,
  });
  const idempotentRun = makeIdempotent(
    async (envelope: { source: string; id: string; data: OrderData }) => compute(envelope.data),
    { persistenceStore, config },
  );
  const theirs = powertoolsHandler(false, idempotentRun, (context) => config.registerLambdaContext(context));
  return { ours, theirs };
}

/** Where each side of {@link waitingJobHandlers} keeps its idempotency records (as {@link storeHandlers}). */
export interface SideStores {
  readonly oursClient: DynamoDBClient;
  /** Partition key `pk`. */
  readonly oursTable: string;
  readonly theirsClient: DynamoDBClient;
  /** Partition key `id`. */
  readonly theirsTable: string;
}

/**
 * Both sides on a standard queue, default settings, running a job that waits `waitMs` (an API
 * call) and then computes: ours `createWorker` (a standard batch at its full width), theirs
 * `BatchProcessor`. With `stores`, idempotency on DynamoDB as {@link storeHandlers} sets it up
 * (ours the DynamoDB store, theirs `makeIdempotent`); without, none on either side.
 * For bench/wide-batch.ts.
 */
export function waitingJobHandlers(waitMs: number, stores?: SideStores): { ours: Handler; theirs: Handler } {
  const work = async (data: OrderData) => {
    await wait(waitMs);
    return compute(data);
  };
  const waitingJob = defineJob({ type: job.type, queue: 'bench', schema, run: work });
  if (stores === undefined) {
    return {
      ours: oursHandler('standard', false, [waitingJob]),
      theirs: powertoolsHandler(false, async ({ data }) => work(data)),
    };
  }
  const ours = oursHandler(
    'standard',
    new DynamoIdempotencyStore({ tableName: stores.oursTable, client: stores.oursClient }),
    [waitingJob],
  );
  const config = new IdempotencyConfig({
    eventKeyJmesPath: '[source, id]',
    payloadValidationJmesPath: 'data',
  });
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: stores.theirsTable,
    awsSdkV3Client: stores.theirsClient,
  });
  const idempotentRun = makeIdempotent(
    async (envelope: { source: string; id: string; data: OrderData }) => work(envelope.data),
    { persistenceStore, config },
  );
  const theirs = powertoolsHandler(false, idempotentRun, (context) => config.registerLambdaContext(context));
  return { ours, theirs };
}

/** One standard-queue event of `records` new records (fresh ids), as both sides receive it. */
export function standardEventOf(records: number): SQSEvent {
  return events(1, 'standard', records)[0] as SQSEvent;
}

/** Batches of 10 new records (fresh ids) of the standard queue, as both sides receive them. */
export function newRecordBatches(count: number): SQSEvent[] {
  return events(count, 'standard', BATCH_SIZE);
}

async function dynamoRows(options: ComparisonOptions): Promise<ComparisonRow[]> {
  const dynamo = await startDynalite();
  try {
    const oursClient = createClient(dynamo.endpoint);
    const theirsClient = createClient(dynamo.endpoint);
    const oursTable = await createTable(oursClient);
    const theirsTable = await createTable(theirsClient, { partitionKey: 'id' });
    const oursCounts = countDynamo(oursClient);
    const theirsCounts = countDynamo(theirsClient);
    const { ours, theirs } = storeHandlers(oursClient, oursTable, theirsClient, theirsTable);
    const batches = events(options.storeBatches, 'standard', BATCH_SIZE);
    const context = lambdaContext();
    for (const [i, event] of batches.entries()) {
      // Each side gets its own copy of the same events (separate tables); order flipped per batch.
      const sides = i % 2 === 0 ? [ours, theirs] : [theirs, ours];
      for (const side of sides) {
        const response = await side(event, context);
        if (response.batchItemFailures.length > 0) throw new Error('bench record failed (store)');
      }
    }
    const records = options.storeBatches * BATCH_SIZE;
    const row = (measure: string, unit: string, a: number, b: number): ComparisonRow => ({
      measure,
      unit,
      ours: a / records,
      powertools: b / records,
      ratio: a / b,
    });
    const opRows = [...new Set([...oursCounts.byOperation.keys(), ...theirsCounts.byOperation.keys()])]
      .sort()
      .flatMap((op) => {
        const a = oursCounts.byOperation.get(op) ?? { requests: 0, requestBytes: 0 };
        const b = theirsCounts.byOperation.get(op) ?? { requests: 0, requestBytes: 0 };
        return [
          row(`DynamoDB ${op} per new record`, 'requests/record', a.requests, b.requests),
          row(`DynamoDB ${op} request bytes per new record`, 'bytes/record', a.requestBytes, b.requestBytes),
        ];
      });
    return [
      row('DynamoDB requests per new record', 'requests/record', oursCounts.requests, theirsCounts.requests),
      row(
        'DynamoDB request bytes per new record',
        'bytes/record',
        oursCounts.requestBytes,
        theirsCounts.requestBytes,
      ),
      row(
        'DynamoDB response bytes per new record',
        'bytes/record',
        oursCounts.responseBytes,
        theirsCounts.responseBytes,
      ),
      ...opRows,
    ];
  } finally {
    await dynamo.stop();
  }
}

/** Milliseconds each job of the I/O rows waits (an external call), before its small computation. */
const IO_WAIT_MS = 20;
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Wall time per batch of 10 when each job waits {@link IO_WAIT_MS} (an API call) then computes:
 * both sides on the same events, alternating batch by batch, median over `batches`. This is what
 * Lambda bills (duration): Powertools' FIFO processor runs a batch's records one after another,
 * the worker one group after another only within a group.
 */
async function ioRow(measure: string, mode: Mode, batches: number): Promise<ComparisonRow> {
  const fifo = mode !== 'standard';
  const ioJob = defineJob({
    type: job.type,
    queue: 'bench',
    schema,
    run: async (data) => {
      await wait(IO_WAIT_MS);
      return compute(data);
    },
  });
  const ours = oursHandler(mode, false, [ioJob]);
  const theirs = powertoolsHandler(fifo, async ({ data }) => {
    await wait(IO_WAIT_MS);
    return compute(data);
  });
  const context = lambdaContext();
  const times: [number[], number[]] = [[], []];
  for (const [i, event] of events(batches, mode, BATCH_SIZE).entries()) {
    for (const side of i % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      const started = performance.now();
      const response = await (side === 0 ? ours : theirs)(event, context);
      times[side].push(performance.now() - started);
      if (response.batchItemFailures.length > 0) throw new Error('bench record failed (io)');
    }
  }
  const [a, b] = [median(times[0]), median(times[1])];
  return { measure, unit: 'ms wall/batch', ours: a, powertools: b, ratio: a / b };
}

/** The I/O rows: standard, FIFO 10 groups, FIFO 1 group. */
export async function ioRows(batches: number): Promise<ComparisonRow[]> {
  return silenced(async () => [
    await ioRow(`wall time per batch of 10, each job waits ${IO_WAIT_MS} ms, standard`, 'standard', batches),
    await ioRow(
      `wall time per batch of 10, each job waits ${IO_WAIT_MS} ms, FIFO 10 groups`,
      'fifo10',
      batches,
    ),
    await ioRow(`wall time per batch of 10, each job waits ${IO_WAIT_MS} ms, FIFO 1 group`, 'fifo1', batches),
  ]);
}

/** Bytes written to stdout (CloudWatch Logs in Lambda) per record, by kind, default settings. */
export interface OutputBytes {
  readonly logBytesPerRecord: number;
  readonly emfBytesPerRecord: number;
}

/**
 * What each side writes to stdout per record of a standard batch of 10 at the default log level:
 * log lines and EMF blobs (lines with `_aws`), over `batches` batches. Lambda's own platform lines
 * (START, END, REPORT) come on top, the same for both.
 */
export async function outputBytesPerRecord(
  batches: number,
): Promise<{ ours: OutputBytes; powertools: OutputBytes }> {
  const measure = async (handler: Handler): Promise<OutputBytes> => {
    let log = 0;
    let emf = 0;
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      for (const line of text.split('\n')) {
        if (line === '') continue;
        const bytes = Buffer.byteLength(line) + 1;
        if (line.includes('"_aws"')) emf += bytes;
        else log += bytes;
      }
      return true;
    }) as typeof process.stdout.write;
    try {
      const context = lambdaContext();
      for (const event of events(batches, 'standard', BATCH_SIZE)) await handler(event, context);
    } finally {
      process.stdout.write = write;
    }
    const records = batches * BATCH_SIZE;
    return { logBytesPerRecord: log / records, emfBytesPerRecord: emf / records };
  };
  return {
    ours: await measure(oursHandler('standard', false)),
    powertools: await measure(powertoolsHandler(false, async ({ data }) => compute(data))),
  };
}

/** Runs the side-by-side comparison; logs and EMF of both sides are dropped while it runs. */
export async function compareWithPowertools(options: ComparisonOptions): Promise<ComparisonRow[]> {
  const cpu = await cpuRows(options);
  return [...cpu, ...(await silenced(() => dynamoRows(options)))];
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2));

const range = (r: readonly [number, number] | undefined, f: (n: number) => string = fmt) =>
  r ? ` (${f(r[0])}–${f(r[1])})` : '';
const times = (n: number) => `${n.toFixed(2)}×`;

/** Prints the rows as a table (human form); CPU rows also give the two references and the floor. */
export function printComparison(rows: readonly ComparisonRow[], options: ComparisonOptions): void {
  console.log(
    `\nsqs-jobs vs Powertools (BatchProcessor / SqsFifoPartialProcessorAsync + makeIdempotent on DynamoDB), ` +
      `default settings; CPU: each side in fresh processes, ${options.cpuRounds} rounds alternating, ` +
      `${options.warmRecords.toLocaleString('en')} records of warm-up then ${options.measuredRecords.toLocaleString('en')} measured, ` +
      `median (min–max); ratio = median of per-round ratios; DynamoDB: ${options.storeBatches * BATCH_SIZE} new records on dynalite`,
  );
  console.table(
    rows.map((r) => ({
      measure: r.measure,
      unit: r.unit,
      'sqs-jobs': fmt(r.ours) + range(r.oursSpread),
      Powertools: fmt(r.powertools) + range(r.powertoolsSpread),
      ratio: times(r.ratio) + range(r.ratioSpread, times),
      ...(r.powertoolsSameOutputs !== undefined
        ? {
            'Powertools, same outputs': fmt(r.powertoolsSameOutputs) + range(r.powertoolsSameOutputsSpread),
            'ratio, same outputs':
              times(r.ratioSameOutputs as number) + range(r.ratioSameOutputsSpread, times),
            floor: fmt(r.floor as number) + range(r.floorSpread),
          }
        : {}),
      target: r.target === undefined ? '' : `${r.target}: ${r.met ? 'met' : 'NOT met'}`,
    })),
  );
}
