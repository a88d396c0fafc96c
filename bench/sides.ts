/**
 * The sides of the CPU rows (bench/cpu.ts) and of the profiles (bench/profile.ts), each a handler
 * of the same SQS batches (CloudEvents bodies with a traceparent, as JobClient sends them), the
 * same job (a small computation) and the same zod schema, no idempotency store:
 *
 * - `ours`: `createWorker`, default settings (its Logger at INFO: one summary line per batch, and
 *   its EMF blob per job type);
 * - `powertools`: Powertools bare, as a user writes it: `BatchProcessor` (standard) or
 *   `SqsFifoPartialProcessorAsync` (FIFO, `skipGroupOnError`) through `processPartialResponse`,
 *   the Logger's `injectLambdaContext` Middy middleware, writing nothing itself;
 * - `powertools-same-outputs`: the same, writing what `ours` writes: the batch summary line
 *   through its Logger (the same keys) and the same EMF blob through Powertools Metrics
 *   (`JobCompleted` summed, `JobDuration` per record, dimension sets `[Queue]`, `[Queue, JobType]`);
 * - `floor`: what no runtime can avoid: `JSON.parse` of each body, the type checked, the job
 *   (schema and computation), the response built. No logs, no metrics, no middleware.
 *
 * Logs and EMF are formatted and written as in Lambda; the caller drops stdout.
 */
import { randomUUID } from 'node:crypto';
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { newTraceparent } from '../lib/core/trace-context.ts';
import type { IdempotencyGuard } from '../lib/runtime/idempotency/guard.ts';
import { defineJob } from '../lib/runtime/job.ts';
import { createWorker } from '../lib/runtime/worker.ts';
import { FakeSqs } from '../test/factories/fake-sqs.ts';
import { jobBody, queueUrl, sqsEvent, sqsRecord } from '../test/factories/sqs.ts';
import { compute } from './workers/order-job.ts';

export type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** The sides a CPU row measures, each in processes of its own. */
export const SIDES = ['ours', 'powertools', 'powertools-same-outputs', 'floor'] as const;
export type Side = (typeof SIDES)[number];

/** The queue kinds of the CPU rows: a standard queue, FIFO with 10 groups per batch, FIFO with one. */
export const MODES = ['standard', 'fifo10', 'fifo1'] as const;
export type Mode = (typeof MODES)[number];

export const schema = z.object({ orderId: z.string(), userId: z.string(), amountCents: z.number().int() });
export type OrderData = z.infer<typeof schema>;

/** The job of every side: a small computation over the data (a checksum), no I/O. */
export { compute };

export const job = defineJob({
  type: 'bench.compute',
  queue: 'bench',
  schema,
  run: async (data) => compute(data),
});

export const queueOf = (mode: Mode): string => (mode === 'standard' ? 'bench' : 'bench.fifo');
const groupsOf = (mode: Mode, batchSize: number): number =>
  mode === 'fifo1' ? 1 : mode === 'fifo10' ? 10 : batchSize;

/**
 * `count` batches of `batchSize` new records (fresh ids): bodies are CloudEvents envelopes with a
 * traceparent (every JobClient body carries one and the worker checks it), user ids spread over
 * the mode's groups (the FIFO `MessageGroupId`). One envelope and one record are built by the test
 * factories (checked), the rest copied with new ids: the factories cost more per record than
 * the sides do, and hundreds of thousands are built per run.
 */
export function events(count: number, mode: Mode, batchSize: number): SQSEvent[] {
  const queue = queueOf(mode);
  const groups = groupsOf(mode, batchSize);
  const template = JSON.parse(
    jobBody(
      job.type,
      { orderId: 'order', userId: 'user', amountCents: 1000 },
      {
        partitionKey: 'user',
        lineage: { traceparent: newTraceparent() },
      },
    ),
  ) as Record<string, unknown>;
  const recordTemplate = sqsRecord({
    queue,
    body: '',
    ...(mode === 'standard' ? {} : { groupId: 'user' }),
  });
  const run = randomUUID();
  let n = 0;
  let sequence = 18_000_000_000_000_000_000n;
  return Array.from({ length: count }, () =>
    sqsEvent(
      Array.from({ length: batchSize }, (_, i): SQSRecord => {
        n += 1;
        const userId = `user-${i % groups}`;
        const data: OrderData = { orderId: `order-${run}-${n}`, userId, amountCents: 1000 + i };
        const body = JSON.stringify({
          ...template,
          id: `${run}-${n}`,
          data,
          partitionkey: userId,
          traceparent: newTraceparent(),
        });
        sequence += 1n;
        return {
          ...recordTemplate,
          messageId: `${run}-m${n}`,
          receiptHandle: `rh-${run}-${n}`,
          body,
          attributes: {
            ...recordTemplate.attributes,
            ...(mode === 'standard' ? {} : { MessageGroupId: userId, SequenceNumber: String(sequence) }),
          },
        };
      }),
    ),
  );
}

type Run = (envelope: { source: string; id: string; data: OrderData }) => Promise<unknown>;

/** The Powertools record handler: parse the envelope, check its type, validate `data`, run. */
function powertoolsRecordHandler(run: Run): (record: SQSRecord) => Promise<unknown> {
  return async (record) => {
    const envelope = JSON.parse(record.body) as { source: string; id: string; type: string; data: unknown };
    if (envelope.type !== job.type) throw new Error(`unknown job type ${envelope.type}`);
    return run({ source: envelope.source, id: envelope.id, data: schema.parse(envelope.data) });
  };
}

/**
 * Powertools bare: `BatchProcessor` or `SqsFifoPartialProcessorAsync` + the Logger middleware.
 * `onContext` runs first in each invocation (the idempotency config's `registerLambdaContext`).
 */
export function powertoolsHandler(fifo: boolean, run: Run, onContext?: (context: Context) => void): Handler {
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

/**
 * Powertools writing what the worker writes at default settings: per batch the `batch processed`
 * INFO line with the same keys, and one EMF blob (namespace, `[Queue]` and `[Queue, JobType]`,
 * `JobCompleted` summed, `JobDuration` in milliseconds per record), through its Logger and Metrics.
 */
export function powertoolsSameOutputsHandler(fifo: boolean): Handler {
  const logger = new Logger({ serviceName: 'bench-powertools' });
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.setDefaultDimensions({ Queue: 'bench' });
  const durations: number[] = [];
  const recordHandler = powertoolsRecordHandler(async ({ data }) => {
    const started = Date.now();
    const result = compute(data);
    durations.push(Date.now() - started);
    return result;
  });
  const standard = new BatchProcessor(EventType.SQS);
  const ordered = new SqsFifoPartialProcessorAsync();
  const handler = async (event: SQSEvent, context: Context) => {
    const started = Date.now();
    durations.length = 0;
    const response = fifo
      ? await processPartialResponse(event, recordHandler, ordered, { context, skipGroupOnError: true })
      : await processPartialResponse(event, recordHandler, standard, { context });
    const failed = response.batchItemFailures.length;
    logger.info('batch processed', {
      outcome: 'batch',
      records: event.Records.length,
      completed: event.Records.length - failed,
      duplicates: 0,
      deadLettered: 0,
      retried: failed,
      durationMs: Date.now() - started,
    });
    metrics.addDimensions({});
    metrics.addDimensions({ JobType: job.type });
    metrics.addMetric('JobCompleted', MetricUnit.Count, event.Records.length - failed);
    for (const duration of durations) metrics.addMetric('JobDuration', MetricUnit.Milliseconds, duration);
    metrics.publishStoredMetrics();
    return response;
  };
  return middy(handler).use(injectLambdaContext(logger, { resetKeys: true })) as unknown as Handler;
}

/** The floor: parse, check, validate, run, answer; nothing else. */
export function floorHandler(): Handler {
  const run = async (data: OrderData) => compute(data);
  return async (event) => {
    for (const record of event.Records) {
      const envelope = JSON.parse(record.body) as { type: string; data: unknown };
      if (envelope.type !== job.type) throw new Error(`unknown job type ${envelope.type}`);
      await run(schema.parse(envelope.data));
    }
    return { batchItemFailures: [] };
  };
}

/** The worker at default settings (its own Logger at INFO and EMF), a fake SQS that is never called. */
export function oursHandler(
  mode: Mode | 'standard',
  idempotency: IdempotencyGuard | false = false,
  jobs: readonly (typeof job)[] = [job],
): Handler {
  const queue = queueOf(mode);
  return createWorker({
    jobs: [...jobs],
    queueName: 'bench',
    queueUrl: queueUrl(queue),
    dlqUrl: queueUrl(mode === 'standard' ? 'bench-dlq' : 'bench-dlq.fifo'),
    idempotency,
    sqs: new FakeSqs(),
  });
}

/** The handler of `side` for `mode`. */
export function sideHandler(side: Side, mode: Mode): Handler {
  const fifo = mode !== 'standard';
  switch (side) {
    case 'ours':
      return oursHandler(mode);
    case 'powertools':
      return powertoolsHandler(fifo, async ({ data }) => compute(data));
    case 'powertools-same-outputs':
      return powertoolsSameOutputsHandler(fifo);
    case 'floor':
      return floorHandler();
  }
}
