/**
 * Side by side with the usual alternative (part of `npm run bench`, issue 10): Powertools for AWS
 * Lambda (TypeScript) `BatchProcessor` / `SqsFifoPartialProcessorAsync` + `makeIdempotent` with
 * `DynamoDBPersistenceLayer`, against `createWorker`, in one process, on the same Node, SDK, zod
 * and Middy copies, the same job (a small computation) and the same events.
 *
 * - CPU per record (`process.cpuUsage`, user + system) with default settings and no store:
 *   standard batch of 10, FIFO batch of 10 in 10 groups, FIFO batch of 10 in 1 group. Each round
 *   runs both sides on the same pre-built events, alternating batch by batch with the order
 *   flipped every batch and every round; the figure is
 *   the median over rounds, with the spread (min–max), after an untimed warm-up of both sides. Logs and EMF are produced as in Lambda
 *   (formatted and written) into a stdout that drops them.
 * - DynamoDB per new record (fresh ids, standard batch of 10, each side its own table on
 *   dynalite): requests, request bytes and response bytes, counted by a client middleware
 *   (HTTP bodies, the bytes DynamoDB bills and throttles on, without headers).
 *
 * Figures, not assertions: ratios are sqs-jobs / Powertools (lower is better for costs).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { newTraceparent } from '../lib/core/trace-context.ts';
import { DynamoIdempotencyStore } from '../lib/runtime/idempotency/store.ts';
import { defineJob } from '../lib/runtime/job.ts';
import { createWorker } from '../lib/runtime/worker.ts';
import { FakeSqs } from '../test/factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../test/factories/sqs.ts';
import { createClient, createTable, startDynalite } from '../test/support/dynalite.ts';

export type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

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
}

export interface ComparisonOptions {
  /** Rounds per CPU figure (>= 3). */
  readonly rounds: number;
  /** Batches of 10 per side and round. */
  readonly batchesPerRound: number;
  /** Untimed batches of 10 per side before the rounds (JIT warm-up). */
  readonly warmupBatches: number;
  /** Batches of 10 new records per side for the DynamoDB counts. */
  readonly storeBatches: number;
}

const BATCH_SIZE = 10;
const schema = z.object({ orderId: z.string(), userId: z.string(), amountCents: z.number().int() });
type OrderData = z.infer<typeof schema>;

/** The job of both sides: a small computation over the data (a checksum), no I/O. */
function compute(data: OrderData): { checksum: number } {
  let h = 2166136261;
  const text = `${data.orderId}:${data.userId}:${data.amountCents}`;
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  }
  return { checksum: h >>> 0 };
}

const job = defineJob({
  type: 'bench.compute',
  queue: 'bench',
  schema,
  run: async (data) => compute(data),
});

/** Events of one round: bodies are CloudEvents envelopes, as both sides receive them. */
function events(count: number, queue: string, groups: number, records = BATCH_SIZE): SQSEvent[] {
  return Array.from({ length: count }, () =>
    sqsEvent(
      Array.from({ length: records }, (_, i) => {
        const userId = `user-${i % groups}`;
        const data: OrderData = { orderId: `order-${randomUUID()}`, userId, amountCents: 1000 + i };
        return sqsRecord({
          queue,
          // Every JobClient body carries a traceparent (a new trace when the caller gives none), and
          // the worker checks it: the bench bodies do too, so both sides parse what production sends.
          body: jobBody(job.type, data, { partitionKey: userId, lineage: { traceparent: newTraceparent() } }),
          ...(queue.endsWith('.fifo') ? { groupId: userId } : {}),
        });
      }),
    ),
  );
}

/** The Powertools record handler: parse the envelope, validate `data` with the same schema, run. */
function powertoolsRecordHandler(
  run: (envelope: { source: string; id: string; data: OrderData }) => Promise<unknown>,
): (record: SQSRecord) => Promise<unknown> {
  return async (record) => {
    const envelope = JSON.parse(record.body) as { source: string; id: string; type: string; data: unknown };
    if (envelope.type !== job.type) throw new Error(`unknown job type ${envelope.type}`);
    return run({ source: envelope.source, id: envelope.id, data: schema.parse(envelope.data) });
  };
}

function powertoolsHandler(
  fifo: boolean,
  run: (envelope: { source: string; id: string; data: OrderData }) => Promise<unknown>,
  onContext?: (context: Context) => void,
): Handler {
  const logger = new Logger({ serviceName: 'bench-powertools' });
  const recordHandler = powertoolsRecordHandler(run);
  const standard = new BatchProcessor(EventType.SQS);
  const ordered = new SqsFifoPartialProcessorAsync();
  const handler = async (event: SQSEvent, context: Context) => {
    onContext?.(context);
    return fifo
      ? processPartialResponse(event, recordHandler, ordered, { context, skipGroupOnError: true })
      : processPartialResponse(event, recordHandler, standard, { context });
  };
  return middy(handler).use(injectLambdaContext(logger, { resetKeys: true })) as unknown as Handler;
}

function oursHandler(
  queue: string,
  idempotency: DynamoIdempotencyStore | false,
  jobs: readonly (typeof job)[] = [job],
): Handler {
  // Default settings: the worker's own Logger (INFO) and metrics, as createWorker builds them.
  return createWorker({
    jobs: [...jobs],
    queueName: 'bench',
    queueUrl: queueUrl(queue),
    dlqUrl: queueUrl(queue.endsWith('.fifo') ? 'bench-dlq.fifo' : 'bench-dlq'),
    idempotency,
    sqs: new FakeSqs(),
  });
}

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

/** CPU microseconds per record of running `batches` through `handler`. */
async function cpuPerRecordUs(handler: Handler, batches: readonly SQSEvent[]): Promise<number> {
  const context = lambdaContext();
  const before = process.cpuUsage();
  for (const event of batches) {
    const response = await handler(event, context);
    if (response.batchItemFailures.length > 0) throw new Error('bench record failed');
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (batches.length * BATCH_SIZE);
}

/**
 * CPU microseconds per record of both handlers over the same batches, alternating batch by batch
 * (the order flipped every batch, starting with `oursFirst`), so both sides see the same load.
 */
async function interleavedCpuPerRecordUs(
  ours: Handler,
  theirs: Handler,
  batches: readonly SQSEvent[],
  oursFirst: boolean,
): Promise<[number, number]> {
  const context = lambdaContext();
  const used = [0, 0];
  const one = async (side: 0 | 1, event: SQSEvent) => {
    const before = process.cpuUsage();
    const response = await (side === 0 ? ours : theirs)(event, context);
    const cpu = process.cpuUsage(before);
    used[side] = (used[side] as number) + cpu.user + cpu.system;
    if (response.batchItemFailures.length > 0) throw new Error('bench record failed');
  };
  for (const [i, event] of batches.entries()) {
    const first = (i % 2 === 0) === oursFirst ? 0 : 1;
    await one(first, event);
    await one(first === 0 ? 1 : 0, event);
  }
  const records = batches.length * BATCH_SIZE;
  return [(used[0] as number) / records, (used[1] as number) / records];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const spread = (values: readonly number[]): [number, number] => [
  Math.min(...values),
  Math.max(...values),
];

/**
 * The handlers and events of a CPU row, no store, for bench/profile.ts: `queue` `bench` (standard)
 * or `bench.fifo`, `groups` message groups per batch of 10.
 */
export function cpuBenchSetup(
  queue: string,
  groups: number,
): { ours: Handler; powertools: Handler; events: (batches: number) => SQSEvent[] } {
  return {
    ours: oursHandler(queue, false),
    powertools: powertoolsHandler(queue.endsWith('.fifo'), async ({ data }) => compute(data)),
    events: (batches) => events(batches, queue, groups),
  };
}

async function cpuRow(
  measure: string,
  queue: string,
  groups: number,
  options: ComparisonOptions,
): Promise<ComparisonRow> {
  const fifo = queue.endsWith('.fifo');
  const ours = oursHandler(queue, false);
  const theirs = powertoolsHandler(fifo, async ({ data }) => compute(data));
  // Warm both until the JIT has settled (about 10,000 records here; fewer leaves either side
  // half-compiled and the figure then measures the compiler), untimed.
  const warm = events(options.warmupBatches, queue, groups);
  await cpuPerRecordUs(ours, warm);
  await cpuPerRecordUs(theirs, warm);
  const oursUs: number[] = [];
  const theirsUs: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    // No forced GC between rounds: a warm Lambda never gets one, and a forced full GC shrinks the
    // heap so that the side that allocates more pays for it twice.
    const batches = events(options.batchesPerRound, queue, groups);
    const [a, b] = await interleavedCpuPerRecordUs(ours, theirs, batches, round % 2 === 0);
    oursUs.push(a);
    theirsUs.push(b);
  }
  const ratios = oursUs.map((us, i) => us / (theirsUs[i] as number));
  return {
    measure,
    unit: 'µs CPU/record',
    ours: median(oursUs),
    powertools: median(theirsUs),
    // Median of the per-round ratios: each round's two figures were taken side by side, so a busy
    // moment of the machine weighs on both.
    ratio: median(ratios),
    oursSpread: spread(oursUs),
    powertoolsSpread: spread(theirsUs),
    ratioSpread: spread(ratios),
  };
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
  const ours = oursHandler('bench', new DynamoIdempotencyStore({ tableName: oursTable, client: oursClient }));
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
      ours: oursHandler('bench', false, [waitingJob]),
      theirs: powertoolsHandler(false, async ({ data }) => work(data)),
    };
  }
  const ours = oursHandler(
    'bench',
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
  return events(1, 'bench', BATCH_SIZE, records)[0] as SQSEvent;
}

/** Batches of 10 new records (fresh ids) of the standard queue, as both sides receive them. */
export function newRecordBatches(count: number): SQSEvent[] {
  return events(count, 'bench', BATCH_SIZE);
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
    const batches = events(options.storeBatches, 'bench', BATCH_SIZE);
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
async function ioRow(
  measure: string,
  queue: string,
  groups: number,
  batches: number,
): Promise<ComparisonRow> {
  const fifo = queue.endsWith('.fifo');
  const ioJob = defineJob({
    type: job.type,
    queue: 'bench',
    schema,
    run: async (data) => {
      await wait(IO_WAIT_MS);
      return compute(data);
    },
  });
  const ours = oursHandler(queue, false, [ioJob]);
  const theirs = powertoolsHandler(fifo, async ({ data }) => {
    await wait(IO_WAIT_MS);
    return compute(data);
  });
  const context = lambdaContext();
  const times: [number[], number[]] = [[], []];
  for (const [i, event] of events(batches, queue, groups).entries()) {
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
    await ioRow(
      `wall time per batch of 10, each job waits ${IO_WAIT_MS} ms, standard`,
      'bench',
      BATCH_SIZE,
      batches,
    ),
    await ioRow(
      `wall time per batch of 10, each job waits ${IO_WAIT_MS} ms, FIFO 10 groups`,
      'bench.fifo',
      10,
      batches,
    ),
    await ioRow(
      `wall time per batch of 10, each job waits ${IO_WAIT_MS} ms, FIFO 1 group`,
      'bench.fifo',
      1,
      batches,
    ),
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
      for (const event of events(batches, 'bench', BATCH_SIZE)) await handler(event, context);
    } finally {
      process.stdout.write = write;
    }
    const records = batches * BATCH_SIZE;
    return { logBytesPerRecord: log / records, emfBytesPerRecord: emf / records };
  };
  return {
    ours: await measure(oursHandler('bench', false)),
    powertools: await measure(powertoolsHandler(false, async ({ data }) => compute(data))),
  };
}

/** Runs the side-by-side comparison; logs and EMF of both sides are dropped while it runs. */
export async function compareWithPowertools(options: ComparisonOptions): Promise<ComparisonRow[]> {
  return silenced(async () => [...(await cpuRows(options)), ...(await dynamoRows(options))]);
}

/** The three CPU rows alone (no store); logs and EMF go to stdout, so call it inside {@link silenced}. */
export async function cpuRows(options: ComparisonOptions): Promise<ComparisonRow[]> {
  return [
    await cpuRow('CPU per record, standard batch of 10, no store', 'bench', BATCH_SIZE, options),
    await cpuRow('CPU per record, FIFO batch of 10 in 10 groups, no store', 'bench.fifo', 10, options),
    await cpuRow('CPU per record, FIFO batch of 10 in 1 group, no store', 'bench.fifo', 1, options),
  ];
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2));

/** Prints the rows as a table (human form). */
export function printComparison(rows: readonly ComparisonRow[], options: ComparisonOptions): void {
  console.log(
    `\nsqs-jobs vs Powertools (BatchProcessor / SqsFifoPartialProcessorAsync + makeIdempotent on DynamoDB), ` +
      `default settings; CPU: median of ${options.rounds} rounds × ${options.batchesPerRound} batches of 10, ` +
      `alternating batch by batch, order flipped each time; ratio = median of per-round ratios; DynamoDB: ${options.storeBatches * BATCH_SIZE} new records on dynalite`,
  );
  console.table(
    rows.map((r) => ({
      measure: r.measure,
      unit: r.unit,
      'sqs-jobs': fmt(r.ours) + (r.oursSpread ? ` (${fmt(r.oursSpread[0])}–${fmt(r.oursSpread[1])})` : ''),
      Powertools:
        fmt(r.powertools) +
        (r.powertoolsSpread ? ` (${fmt(r.powertoolsSpread[0])}–${fmt(r.powertoolsSpread[1])})` : ''),
      ratio:
        `${r.ratio.toFixed(2)}×` +
        (r.ratioSpread ? ` (${r.ratioSpread[0].toFixed(2)}–${r.ratioSpread[1].toFixed(2)})` : ''),
    })),
  );
}
