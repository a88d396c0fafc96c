/**
 * Batches through the real worker on the emulators (fauxqs, dynalite with its emulated
 * transactions): a job fans out, the completion job runs exactly once after every child is
 * counted, under lost DynamoDB responses, duplicate deliveries and a failed completion send; a
 * dead-lettered child under each policy (and its redrive completing the batch); the watchdog of an
 * overdue batch; nested batches; a producer's batch started twice.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { type Message, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import { batchIdOf, batchKey } from '../../lib/core/batch.ts';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError } from '../../lib/core/errors.ts';
import { redriveDeadLetters } from '../../lib/ops/redrive/index.ts';
import type { BatchChildOutcome } from '../../lib/runtime/batches/context.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { SqsSender } from '../../lib/runtime/sqs-port.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { useGuardedEmulators } from '../factories/guarded-emulators.ts';
import { lossyDynamo } from '../factories/lossy-dynamo.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput, type OutputLine } from '../factories/worker.ts';

const env = useGuardedEmulators();

interface Setup {
  readonly queue: EmulatedQueue;
  readonly dlq: EmulatedQueue;
  readonly handler: WorkerHandler;
  /** Every line the worker wrote (logs, EMF). */
  readonly lines: OutputLine[];
}

interface WorkerExtras {
  readonly idempotency?: DynamoIdempotencyStore;
  readonly sqs?: SqsSender;
}

async function setup(jobs: AnyJob[], extras: WorkerExtras = {}): Promise<Setup> {
  const { queue, dlq } = await env.emulator.createQueuePair('batches', false);
  const handler = createWorker({
    jobs,
    sqs: extras.sqs ?? env.emulator.sqs,
    random: () => 0,
    maxConcurrency: 10,
    logger: new Logger({ logLevel: 'INFO' }),
    ...(extras.idempotency === undefined ? {} : { idempotency: extras.idempotency }),
    env: {
      JOBS_QUEUE_NAME: 'work',
      JOBS_QUEUE_URL: queue.url,
      JOBS_DLQ_URL: dlq.url,
      JOBS_IDEMPOTENCY_TABLE: env.tableName,
      JOBS_QUEUE_URL_WORK: queue.url,
    },
  });
  return { queue, dlq, handler, lines: [] };
}

/** One poll of the event source mapping; returns the messages delivered. */
async function deliverOnce(s: Setup, waitMs: number): Promise<Message[]> {
  const messages = await env.emulator.receiveWithin(s.queue, waitMs);
  if (messages.length === 0) return messages;
  const records = messages.map((m) => recordFromMessage(m, s.queue.arn));
  const { value: response, lines } = await captureOutput(() =>
    s.handler(sqsEvent(records), lambdaContext(60_000)),
  );
  s.lines.push(...lines);
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  for (const message of messages) {
    if (failed.has(message.MessageId ?? '')) continue;
    await env.emulator.sqs.send(
      new (await import('@aws-sdk/client-sqs')).DeleteMessageCommand({
        QueueUrl: s.queue.url,
        ReceiptHandle: message.ReceiptHandle,
      }),
    );
  }
  return messages;
}

/** Delivers until `done()` holds, or the queue stays empty for `quietMs`. */
async function pump(s: Setup, done: () => boolean, quietMs = 1_500): Promise<void> {
  while (!done()) {
    const delivered = await deliverOnce(s, quietMs);
    if (delivered.length === 0) return;
  }
}

async function batchItem(batchId: string) {
  return (
    await env.db.client.send(
      new GetItemCommand({
        TableName: env.tableName,
        Key: { pk: { S: batchKey(batchId) } },
        ConsistentRead: true,
      }),
    )
  ).Item;
}

const childSchema = z.object({ n: z.number(), batch: z.string() });
const summarySchema = z.object({ batch: z.string() });
const startSchema = z.object({ batch: z.string(), size: z.number() });

/** The jobs of one test: a starter, children, a completion job recording what it saw. */
function batchJobs(
  name: string,
  options: {
    onChildDeadLettered?: 'wait-for-redrive' | 'complete-with-failures';
    openLimitSeconds?: number;
    child?: (n: number) => Promise<unknown>;
  } = {},
) {
  const completions: {
    batchId: string;
    total: number;
    succeeded: number;
    deadLettered: number;
    children: BatchChildOutcome[];
  }[] = [];
  const childRuns = new Map<number, number>();
  const childParents = new Set<string | undefined>();
  const child = defineJob({
    type: `${name}.child`,
    queue: 'work',
    schema: childSchema,
    retry: { maxAttempts: 2, baseDelaySeconds: 1 },
    async run({ n }, ctx) {
      childRuns.set(n, (childRuns.get(n) ?? 0) + 1);
      childParents.add(ctx.lineage.parentJobId);
      if (options.child) return options.child(n);
      return { square: n * n };
    },
  });
  const summary = defineJob({
    type: `${name}.summary`,
    queue: 'work',
    schema: summarySchema,
    async run(_data, ctx) {
      const batch = ctx.batch;
      if (batch === undefined) throw new PermanentError('no ctx.batch');
      const children: BatchChildOutcome[] = [];
      for await (const outcome of batch.children()) children.push(outcome);
      completions.push({
        batchId: batch.id,
        total: batch.total,
        succeeded: batch.succeeded,
        deadLettered: batch.deadLettered,
        children,
      });
      return { summarized: children.length };
    },
  });
  const start = defineJob({
    type: `${name}.start`,
    queue: 'work',
    schema: startSchema,
    async run({ batch, size }, ctx) {
      return ctx.startBatch({
        children: Array.from({ length: size }, (_, n) => ({ job: child, data: { n, batch } })),
        completion: { job: summary, data: { batch } },
        ...(options.onChildDeadLettered === undefined
          ? {}
          : { onChildDeadLettered: options.onChildDeadLettered }),
        openLimitSeconds: options.openLimitSeconds ?? 600,
      });
    },
  });
  return {
    child,
    summary,
    start,
    completions,
    childRuns,
    childParents,
    jobs: [start, child, summary] as AnyJob[],
  };
}

async function sendStart(s: Setup, type: string, batch: string, size: number): Promise<void> {
  await env.emulator.send(
    s.queue,
    createEnvelope({ type, source: '/test', id: `start-${batch}`, data: { batch, size } }),
  );
}

/** The batch id of the start job sent by {@link sendStart}: derived from its identity (its first batch). */
function startedBatchId(batch: string): string {
  return batchIdOf({ source: '/test', id: `start-${batch}` }, 0);
}

describe('large', () => {
  it('large batch', async () => {
    const size = Number(process.env.P13_SIZE ?? '2000');
    const t = batchJobs('large');
    const s = await setup(t.jobs);
    const startedAt = Date.now();
    await sendStart(s, t.start.type, 'big', size);
    await pump(s, () => t.completions.length > 0, 3_000);
    const tookMs = Date.now() - startedAt;
    await pump(s, () => false, 1_000);
    console.error(`LARGE size=${size} tookMs=${tookMs} completions=${t.completions.length} succeeded=${t.completions[0]?.succeeded}`);
    expect(t.completions).toHaveLength(1);
  }, 600_000);
});
