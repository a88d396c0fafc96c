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
import { jobEventOf } from '../../lib/local/job-lines.ts';
import { walkJobChain } from '../../lib/ops/job-chain.ts';
import { renderJobChain } from '../../lib/ops/job-chain-format.ts';
import { redriveDeadLetters } from '../../lib/ops/redrive/index.ts';
import type { BatchChildOutcome } from '../../lib/runtime/batches/context.ts';
import { defaultJobKey, jobRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { SqsSender } from '../../lib/runtime/sqs-port.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { useGuardedEmulators } from '../factories/guarded-emulators.ts';
import { dropResponsesOf, lossyDynamo } from '../factories/lossy-dynamo.ts';
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

describe('a batch started by a job', () => {
  it('runs 50 children and then its completion job once, with every child outcome', async () => {
    const t = batchJobs('fifty');
    const s = await setup(t.jobs);
    const startedAt = Date.now();
    await sendStart(s, t.start.type, 'b50', 50);
    await pump(s, () => t.completions.length > 0);
    // Anything still in flight (a second completion would be) is delivered too.
    await pump(s, () => false, 1_000);
    const tookMs = Date.now() - startedAt;

    expect(t.completions).toHaveLength(1);
    const [completion] = t.completions;
    expect(completion).toMatchObject({ total: 50, succeeded: 50, deadLettered: 0 });
    expect(completion?.children.map((c) => c.result)).toEqual(
      Array.from({ length: 50 }, (_, n) => ({ square: n * n })),
    );
    expect(completion?.children.every((c) => c.status === 'succeeded' && c.resultStored)).toBe(true);
    expect([...t.childRuns.values()].every((runs) => runs === 1)).toBe(true);
    // Lineage: every child names the job that started the batch as its parent.
    expect([...t.childParents]).toEqual(['start-b50']);
    const item = await batchItem(startedBatchId('b50'));
    expect(item?.state?.S).toBe('completed');
    expect(item?.succeeded?.N).toBe('50');
    expect(tookMs).toBeGreaterThan(0);
  });

  it('counts each child once and runs the completion job once under lost responses, duplicates and a failed completion send', async () => {
    const t = batchJobs('faults');
    const lossy = lossyDynamo(env.db.endpoint);
    const store = new DynamoIdempotencyStore({ tableName: env.tableName, client: lossy.client });
    // Lose the response of every other counting transaction (applied, then the SDK sends it again).
    dropResponsesOf(lossy, 'TransactWriteItems', (n) => n % 2 === 1);
    // The completion job's first sends fail (every try of the JobClient): the child that saw the
    // batch done is left on the queue, as if its run crashed after counting; its redelivery sends it.
    let completionSendsRefused = 0;
    const sqs: SqsSender = {
      async send(command) {
        const input = (command as { input?: { Entries?: { MessageBody?: string }[] } }).input;
        if (
          completionSendsRefused < 3 &&
          input?.Entries?.some((e) => e.MessageBody?.includes('"completesbatch"'))
        ) {
          completionSendsRefused += 1;
          throw Object.assign(new Error('injected: SQS unavailable'), {
            name: 'ServiceUnavailable',
            $fault: 'server',
          });
        }
        return env.emulator.sqs.send(command as never);
      },
    };
    const s = await setup(t.jobs, { idempotency: store, sqs });
    await sendStart(s, t.start.type, 'bf', 20);
    // Deliver the start, then copy every child message once more (SQS at-least-once duplicates).
    await deliverOnce(s, 2_000);
    const children = [];
    for (;;) {
      const messages = await env.emulator.receiveWithin(s.queue, 500);
      if (messages.length === 0) break;
      children.push(...messages);
    }
    expect(children).toHaveLength(20);
    for (const message of [...children, ...children]) {
      await env.emulator.sqs.send(
        new SendMessageCommand({ QueueUrl: s.queue.url, MessageBody: message.Body ?? '' }),
      );
    }
    await pump(s, () => false, 1_500);

    expect(lossy.dropped.filter((op) => op === 'TransactWriteItems').length).toBeGreaterThan(5);
    expect(completionSendsRefused).toBe(3);
    // Each batch-pending retry (here: a counting transaction whose response was lost) is a job
    // line of `sqs-jobs local` (outcome retry), naming the child and the error.
    const pendingLines = s.lines
      .map((line) => jobEventOf('Worker', JSON.stringify(line)))
      .filter((event) => event?.outcome === 'retry' && event.reason === 'batch-pending');
    expect(pendingLines.length).toBeGreaterThanOrEqual(1);
    expect(pendingLines[0]).toMatchObject({
      type: 'faults.child',
      error: expect.stringMatching(/^IdempotencyStoreError: /),
    });
    expect(t.completions).toHaveLength(1);
    expect(t.completions[0]).toMatchObject({ total: 20, succeeded: 20, deadLettered: 0 });
    expect([...t.childRuns.values()].every((runs) => runs === 1)).toBe(true);
    const item = await batchItem(startedBatchId('bf'));
    expect(item?.succeeded?.N).toBe('20');
    expect(item?.state?.S).toBe('completed');
  });
});

describe('many batches at once', () => {
  it('25 batches of 4 under lost responses and every message sent twice: each completion job once, none open', async () => {
    const t = batchJobs('many');
    const lossy = lossyDynamo(env.db.endpoint);
    const store = new DynamoIdempotencyStore({ tableName: env.tableName, client: lossy.client });
    dropResponsesOf(lossy, 'TransactWriteItems', (n) => n % 3 === 0);
    // Every batch send of the worker (children, completion jobs) reaches the queue twice.
    const sqs: SqsSender = {
      async send(command) {
        const out = await env.emulator.sqs.send(command as never);
        if ((command as { constructor: { name: string } }).constructor.name === 'SendMessageBatchCommand') {
          await env.emulator.sqs.send(command as never);
        }
        return out;
      },
    };
    const s = await setup(t.jobs, { idempotency: store, sqs });
    for (let i = 0; i < 25; i++) await sendStart(s, t.start.type, `m${i}`, 4);
    await pump(s, () => t.completions.length >= 25, 1_500);
    await pump(s, () => false, 1_500);

    expect(lossy.dropped.filter((op) => op === 'TransactWriteItems').length).toBeGreaterThan(10);
    expect(t.completions).toHaveLength(25);
    expect(new Set(t.completions.map((c) => c.batchId)).size).toBe(25);
    expect(t.completions.every((c) => c.total === 4 && c.succeeded === 4)).toBe(true);
    for (let i = 0; i < 25; i++) {
      const item = await batchItem(startedBatchId(`m${i}`));
      expect(item?.state?.S, `batch m${i}`).toBe('completed');
      expect(item?.succeeded?.N, `batch m${i}`).toBe('4');
    }
  });
});

describe('a dead-lettered child', () => {
  it('complete-with-failures: counts it, and the completion job lists it with its reason', async () => {
    const t = batchJobs('failing', {
      onChildDeadLettered: 'complete-with-failures',
      child: async (n) => {
        if (n === 3) throw new PermanentError('customer 3 has no address');
        return { ok: n };
      },
    });
    const s = await setup(t.jobs);
    await sendStart(s, t.start.type, 'bd', 5);
    await pump(s, () => t.completions.length > 0);
    await pump(s, () => false, 1_000);

    expect(t.completions).toHaveLength(1);
    const completion = t.completions[0];
    expect(completion).toMatchObject({ total: 5, succeeded: 4, deadLettered: 1 });
    expect(completion?.children[3]).toMatchObject({
      status: 'dead-lettered',
      reason: 'PermanentError',
      error: 'PermanentError: customer 3 has no address',
      resultStored: false,
    });
  });

  it('wait-for-redrive: the batch waits (its watchdog reports it overdue), and the redrive completes it', async () => {
    let failing = true;
    const t = batchJobs('waiting', {
      onChildDeadLettered: 'wait-for-redrive',
      openLimitSeconds: 1,
      child: async (n) => {
        if (n === 1 && failing) throw new PermanentError('partner API refused');
        return { ok: n };
      },
    });
    const s = await setup(t.jobs);
    await sendStart(s, t.start.type, 'bw', 3);
    // Until the watchdog (due 1 s after the start) has seen the batch still open.
    await pump(
      s,
      () => s.lines.some((line) => line.message === 'batch overdue: still open past its openLimitSeconds'),
      3_000,
    );

    expect(t.completions).toHaveLength(0);
    const overdue = s.lines.find(
      (line) => line.message === 'batch overdue: still open past its openLimitSeconds',
    );
    expect(overdue).toMatchObject({ total: 3, succeeded: 2, waitingForRedrive: 1, notCounted: 1 });
    expect(String((overdue?.missingChildren as string[] | undefined)?.[0])).toMatch(
      /^1:.*waiting for its redrive/,
    );
    expect(s.lines.some((line) => JSON.stringify(line).includes('"BatchOverdue"'))).toBe(true);
    // Lineage: `sqs-jobs job` of the starting job shows the batch's progress and children's states.
    const chain = await walkJobChain({
      tables: [env.tableName],
      readItem: async (table, pk) =>
        (
          await env.db.client.send(
            new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }),
          )
        ).Item,
      start: { type: t.start.type, key: defaultJobKey('/test', 'start-bw') },
    });
    expect(chain.batches).toEqual([
      expect.objectContaining({
        batchId: startedBatchId('bw'),
        startedBy: jobRecordKey(t.start.type, defaultJobKey('/test', 'start-bw')),
        total: 3,
        succeeded: 2,
        waitingForRedrive: 1,
        notCounted: 0,
        state: 'open',
        overdue: true,
        completionJob: t.summary.type,
      }),
    ]);
    expect(renderJobChain(chain)).toMatch(
      /batch .*: open, OVERDUE\n {3}2 of 3 children counted \(2 succeeded, 0 dead-lettered, 1 waiting for their redrive, 0 not counted yet\); policy wait-for-redrive/,
    );

    failing = false;
    const redriven = await redriveDeadLetters({
      sqs: env.emulator.sqs,
      dlqUrl: s.dlq.url,
      targetUrl: s.queue.url,
      waitTimeSeconds: 0,
      emptyReceivesToStop: 1,
      holdSeconds: 60,
    });
    expect(redriven.moved).toHaveLength(1);
    await pump(s, () => t.completions.length > 0);
    await pump(s, () => false, 1_000);

    expect(t.completions).toHaveLength(1);
    expect(t.completions[0]).toMatchObject({ total: 3, succeeded: 3, deadLettered: 0 });
    expect(t.completions[0]?.children.map((c) => c.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });
});

describe("a batch whose completion job the children's worker cannot send", () => {
  it('dead-letters each failed child once, counts exactly, warns with the CDK fix, and its watchdog sends the completion job', async () => {
    // The children's worker runs a newer version of the child, whose schema refuses n = 2 (a dead
    // letter before any lease) and which fails n = 3 for good (a dead letter under its lease). The
    // completion job's queue, 'summary', is no enqueue target of that worker.
    const producerChild = defineJob({
      type: 'cq.child',
      queue: 'work',
      schema: z.object({ n: z.number() }),
      async run() {},
    });
    const workerChild = defineJob({
      type: 'cq.child',
      queue: 'work',
      schema: z.object({ n: z.number().refine((n) => n !== 2, 'n = 2 is refused by this version') }),
      async run({ n }) {
        if (n === 3) throw new PermanentError('customer 3 has no address');
        return { n };
      },
    });
    const completions: { deadLettered: number; statuses: string[] }[] = [];
    const summary = defineJob({
      type: 'cq.summary',
      queue: 'summary',
      schema: z.object({ batch: z.string() }),
      async run(_data, ctx) {
        const statuses: string[] = [];
        for await (const child of ctx.batch?.children() ?? []) statuses.push(child.status);
        completions.push({ deadLettered: ctx.batch?.deadLettered ?? -1, statuses });
      },
    });
    const work = await setup([workerChild as AnyJob]);
    const summaryQueues = await env.emulator.createQueuePair('summary', false);
    const summaryWorker: Setup = {
      ...summaryQueues,
      lines: [],
      handler: createWorker({
        jobs: [summary as AnyJob],
        sqs: env.emulator.sqs,
        random: () => 0,
        logger: new Logger({ logLevel: 'INFO' }),
        env: {
          JOBS_QUEUE_NAME: 'summary',
          JOBS_QUEUE_URL: summaryQueues.queue.url,
          JOBS_DLQ_URL: summaryQueues.dlq.url,
          JOBS_IDEMPOTENCY_TABLE: env.tableName,
          JOBS_QUEUE_URL_SUMMARY: summaryQueues.queue.url,
        },
      }),
    };
    const client = new JobClient({
      source: '/producer',
      queueUrls: { work: work.queue.url, summary: summaryQueues.queue.url },
      sqs: env.emulator.sqs,
      dynamodb: env.db.client,
      batches: { tableName: env.tableName },
    });
    await client.startBatch({
      id: 'cq-1',
      children: [1, 2, 3].map((n) => ({ job: producerChild, data: { n } })),
      completion: { job: summary, data: { batch: 'cq' } },
      openLimitSeconds: 1,
    });

    // The children's queue goes quiet: nothing is retried in a loop.
    await pump(work, () => false, 1_500);
    const deadLetters: Message[] = [];
    for (;;) {
      const messages = await env.emulator.receiveWithin(work.dlq, 500);
      if (messages.length === 0) break;
      deadLetters.push(...messages);
    }
    // Each failed child in the DLQ exactly once.
    expect(deadLetters.map((m) => JSON.parse(m.Body ?? '{}').data.n).sort()).toEqual([2, 3]);
    const batch = await batchItem('cq-1');
    expect([batch?.succeeded?.N, batch?.deadLettered?.N, batch?.state?.S]).toEqual(['1', '2', 'open']);
    const handedOff = work.lines.filter(
      (line) =>
        line.level === 'WARN' &&
        String(line.message).startsWith('batch done, but its completion job could not be sent from here'),
    );
    expect(handedOff).toHaveLength(1);
    expect(handedOff[0]?.batchId).toBe('cq-1');
    expect(JSON.stringify(handedOff[0]?.error)).toMatch(
      /unknown queue \\"summary\\" \(this worker can send to: work\); make it an enqueue target of this worker's JobQueue in your CDK app: jobQueue.addEnqueueTarget\('summary'/,
    );

    // The watchdog, on the completion job's own queue, finds every child counted: it sends it.
    await pump(summaryWorker, () => completions.length > 0, 4_000);
    await pump(summaryWorker, () => false, 1_000);
    expect(completions).toEqual([
      { deadLettered: 2, statuses: ['succeeded', 'dead-lettered', 'dead-lettered'] },
    ]);
    expect((await batchItem('cq-1'))?.state?.S).toBe('completed');
  });
});

describe('a completion job whose batch does not exist', () => {
  it('is dead-lettered at once as BatchNotFoundError naming the batch, never run, never retried', async () => {
    const t = batchJobs('orphan');
    const s = await setup(t.jobs);
    await env.emulator.send(
      s.queue,
      createEnvelope({
        type: t.summary.type,
        source: '/test',
        id: 'orphan-completion',
        data: { batch: 'none' },
        batch: { completesbatch: 'no-such-batch' },
      }),
    );
    const [delivered] = await deliverOnce(s, 2_000);
    expect(delivered).toBeDefined();
    const [deadLetter] = await env.emulator.receiveWithin(s.dlq, 2_000);
    expect(deadLetter?.MessageAttributes?.ErrorName?.StringValue).toBe('BatchNotFoundError');
    expect(deadLetter?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
      /completion job of batch "no-such-batch", but table .* has no item batch#no-such-batch/,
    );
    // Acknowledged (not retried), and the job's run never saw an undefined ctx.batch.
    expect(await env.emulator.receiveWithin(s.queue, 500)).toHaveLength(0);
    expect(t.completions).toHaveLength(0);
  });
});

describe('a worker without the idempotency table', () => {
  it('refuses ctx.startBatch: the starting job is dead-lettered saying what batches need', async () => {
    const t = batchJobs('unguarded');
    const { queue, dlq } = await env.emulator.createQueuePair('unguarded', false);
    const handler = createWorker({
      jobs: t.jobs,
      sqs: env.emulator.sqs,
      idempotency: false,
      logger: new Logger({ logLevel: 'SILENT' }),
      env: { JOBS_QUEUE_NAME: 'work', JOBS_QUEUE_URL: queue.url, JOBS_DLQ_URL: dlq.url },
    });
    const s: Setup = { queue, dlq, handler, lines: [] };
    await sendStart(s, t.start.type, 'bu', 2);
    await deliverOnce(s, 2_000);
    const [deadLetter] = await env.emulator.receiveWithin(dlq, 2_000);
    expect(deadLetter?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
      /ctx.startBatch needs the worker's DynamoDB idempotency store .*idempotency off or another store/,
    );
    expect(t.childRuns.size).toBe(0);
  });
});

describe('nested batches', () => {
  it('a child that starts its own batch: each inner completion once, then the outer once', async () => {
    const inner = batchJobs('inner');
    const outerSummaries: number[] = [];
    const outerChild = defineJob({
      type: 'outer.child',
      queue: 'work',
      schema: childSchema,
      async run({ n, batch }, ctx) {
        return ctx.startBatch({
          children: [0, 1].map((m) => ({ job: inner.child, data: { n: n * 10 + m, batch } })),
          completion: { job: inner.summary, data: { batch: `${batch}-${n}` } },
        });
      },
    });
    const outerSummary = defineJob({
      type: 'outer.summary',
      queue: 'work',
      schema: summarySchema,
      async run(_data, ctx) {
        outerSummaries.push(ctx.batch?.succeeded ?? -1);
      },
    });
    const outerStart = defineJob({
      type: 'outer.start',
      queue: 'work',
      schema: startSchema,
      async run({ batch, size }, ctx) {
        ctx.startBatch({
          children: Array.from({ length: size }, (_, n) => ({ job: outerChild, data: { n, batch } })),
          completion: { job: outerSummary, data: { batch } },
        });
      },
    });
    const s = await setup([outerStart, outerChild, outerSummary, inner.child, inner.summary]);
    await sendStart(s, 'outer.start', 'bn', 3);
    await pump(s, () => outerSummaries.length > 0 && inner.completions.length === 3);
    await pump(s, () => false, 1_000);

    expect(outerSummaries).toEqual([3]);
    expect(inner.completions.map((c) => c.succeeded)).toEqual([2, 2, 2]);
    expect(new Set(inner.completions.map((c) => c.batchId)).size).toBe(3);
  });
});

describe('a batch started by a producer (JobClient.startBatch)', () => {
  /** A producer's JobClient on the test's queue and table. */
  const producerClient = (s: { queue: { url: string } }) =>
    new JobClient({
      source: '/producer',
      queueUrls: { work: s.queue.url },
      sqs: env.emulator.sqs,
      dynamodb: env.db.client,
      batches: { tableName: env.tableName },
    });

  it('started twice with the same id: one batch, no second child, completion once', async () => {
    const t = batchJobs('producer');
    const s = await setup(t.jobs);
    const client = producerClient(s);
    const spec = {
      id: 'nightly-2026-12-01',
      children: Array.from({ length: 12 }, (_, n) => ({ job: t.child, data: { n, batch: 'p' } })),
      completion: { job: t.summary, data: { batch: 'p' } },
    };
    const first = await client.startBatch(spec);
    const second = await client.startBatch(spec);
    expect(first).toEqual({ batchId: 'nightly-2026-12-01', total: 12, created: true });
    expect(second).toEqual({ batchId: 'nightly-2026-12-01', total: 12, created: false });
    // The same id with other children is another batch under an old name: refused, nothing sent.
    await expect(client.startBatch({ ...spec, children: spec.children.slice(0, 5) })).rejects.toThrow(
      /batch nightly-2026-12-01 exists with 12 children and this start has 5/,
    );
    await pump(s, () => t.completions.length > 0);
    await pump(s, () => false, 1_000);

    expect(t.completions).toHaveLength(1);
    expect(t.completions[0]).toMatchObject({ total: 12, succeeded: 12 });
    expect([...t.childRuns.values()].every((runs) => runs === 1)).toBe(true);
    expect(t.childRuns.size).toBe(12);
  });

  it('started again under the same id with the same count but other child data: refused, nothing sent; the same spec again is absorbed', async () => {
    const t = batchJobs('respec');
    const s = await setup(t.jobs);
    const client = producerClient(s);
    const spec = {
      id: 'dd-1',
      children: [
        { job: t.child, data: { n: 1, batch: 'dd' } },
        { job: t.child, data: { n: 2, batch: 'dd' } },
      ],
      completion: { job: t.summary, data: { batch: 'dd' } },
    };
    expect(await client.startBatch(spec)).toEqual({ batchId: 'dd-1', total: 2, created: true });
    // Two children, two messages on the queue (the watchdog is delayed).
    const sent = await env.emulator.receiveWithin(s.queue, 1_000);
    expect(sent).toHaveLength(2);
    await expect(
      client.startBatch({
        ...spec,
        children: [
          { job: t.child, data: { n: 100, batch: 'dd' } },
          { job: t.child, data: { n: 200, batch: 'dd' } },
        ],
      }),
    ).rejects.toMatchObject({
      code: 'InvalidBatch',
      message: expect.stringMatching(/batch dd-1 exists with other children or another completion job/),
    });
    await expect(
      client.startBatch({ ...spec, completion: { job: t.summary, data: { batch: 'other' } } }),
    ).rejects.toMatchObject({ code: 'InvalidBatch' });
    // The same spec, its keys in another order: a retry, answered created: false.
    expect(
      await client.startBatch({
        ...spec,
        children: spec.children.map((c) => ({ job: c.job, data: { batch: c.data.batch, n: c.data.n } })),
      }),
    ).toEqual({ batchId: 'dd-1', total: 2, created: false });
    // The refused starts sent nothing: only the retry's two children (same ids) join the first two.
    await env.emulator.sqs.send(
      new (await import('@aws-sdk/client-sqs')).ChangeMessageVisibilityBatchCommand({
        QueueUrl: s.queue.url,
        Entries: sent.map((m, i) => ({
          Id: String(i),
          ReceiptHandle: m.ReceiptHandle ?? '',
          VisibilityTimeout: 0,
        })),
      }),
    );
    await pump(s, () => t.completions.length > 0);
    await pump(s, () => false, 1_000);

    expect(t.completions).toHaveLength(1);
    expect(t.completions[0]).toMatchObject({ total: 2, succeeded: 2, deadLettered: 0 });
    expect(t.completions[0]?.children.map((c) => c.result)).toEqual([{ square: 1 }, { square: 4 }]);
    expect([...t.childRuns.entries()].sort()).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(await env.emulator.receiveWithin(s.dlq, 500)).toHaveLength(0);
  });

  it('refuses without the table, and names what is wrong with a spec', async () => {
    const t = batchJobs('refused');
    const bare = new JobClient({
      source: '/p',
      queueUrls: { work: 'https://sqs.us-east-1.amazonaws.com/1/work' },
    });
    await expect(
      bare.startBatch({ children: [], completion: { job: t.summary, data: { batch: 'x' } } }),
    ).rejects.toThrow(/startBatch needs the idempotency table/);
    const client = new JobClient({
      source: '/p',
      queueUrls: { work: 'https://sqs.us-east-1.amazonaws.com/1/work' },
      dynamodb: env.db.client,
      batches: { tableName: env.tableName },
    });
    await expect(
      client.startBatch({
        children: [],
        completion: { job: t.summary, data: { batch: 'x' } },
        onChildDeadLettered: 'retry' as never,
        openLimitSeconds: 0,
      }),
    ).rejects.toThrow(
      /onChildDeadLettered must be 'wait-for-redrive' or 'complete-with-failures'.*openLimitSeconds must be an integer 1-43200/,
    );
  });

  it('a child refused before sending (its data, its queue) leaves no batch behind to hang open', async () => {
    const t = batchJobs('refused-child');
    const client = new JobClient({
      source: '/p',
      queueUrls: { work: 'https://sqs.us-east-1.amazonaws.com/1/work' },
      dynamodb: env.db.client,
      batches: { tableName: env.tableName },
    });
    await expect(
      client.startBatch({
        id: 'refused-child-data',
        children: [
          { job: t.child, data: { n: 0, batch: 'r' } },
          { job: t.child, data: { n: 'one', batch: 'r' } as never },
        ],
        completion: { job: t.summary, data: { batch: 'r' } },
      }),
    ).rejects.toMatchObject({ code: 'InvalidEntries', message: expect.stringMatching(/entry 1 .*data\.n/) });
    expect(await batchItem('refused-child-data')).toBeUndefined();
  });
});
