/**
 * What a batch costs in DynamoDB calls, and how large a batch the embedded emulators take (issue
 * 19, docs/architecture.md "Batches"): the real worker (`createWorker`, the DynamoDB idempotency
 * store) fed by pollers like Lambda's event source mapping (10 records per invocation), on the
 * local runtime's emulators (fauxqs, dynalite with its emulated transactions, lib/local/emulators.ts).
 *
 * The worker's and the producer's DynamoDB clients carry a counting middleware: `initialize`
 * counts each command once, `deserialize` (inside the SDK's retry loop) each HTTP attempt. Calls
 * are read at three points: after `JobClient.startBatch` (the producer's start), when the
 * completion job starts running (every child counted: the children's share), and at the end (the
 * completion job's share). Two batches: `size` children that complete, then `deadLettered`
 * children that throw a PermanentError (dead-lettered at once, `complete-with-failures`).
 * Figures, not assertions. Run: `node --import tsx bench/batch-size.ts [size] [deadLettered] [pollers]`
 * (defaults 200, 100, 4).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { JobClient } from '../lib/client/job-client.ts';
import { PermanentError } from '../lib/core/errors.ts';
import { startEmulators } from '../lib/local/emulators.ts';
import { DynamoIdempotencyStore } from '../lib/runtime/idempotency/store.ts';
import { defineJob } from '../lib/runtime/job.ts';
import { createWorker } from '../lib/runtime/worker.ts';
import { lambdaContext, sqsEvent } from '../lib/testing/sqs-events.ts';
import { recordFromMessage } from '../test/factories/sqs.ts';
import { createTable } from '../test/support/dynalite.ts';

const size = Number(process.argv[2] ?? 200);
const deadLetteredSize = Number(process.argv[3] ?? 100);
const pollers = Number(process.argv[4] ?? 4);

type Counts = Map<string, number>;
/** Adds the counting middleware to `client`: commands (once each) and HTTP attempts (each try). */
function counting(client: DynamoDBClient): { commands: Counts; attempts: Counts } {
  const commands: Counts = new Map();
  const attempts: Counts = new Map();
  const add = (counts: Counts, name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);
  client.middlewareStack.add(
    (next, context) => (args) => {
      add(commands, String(context.commandName).replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name: 'benchCountCommands' },
  );
  client.middlewareStack.add(
    (next, context) => (args) => {
      add(attempts, String(context.commandName).replace(/Command$/, ''));
      return next(args);
    },
    { step: 'deserialize', name: 'benchCountAttempts' },
  );
  return { commands, attempts };
}
const snapshot = (counts: Counts): Counts => new Map(counts);
function minus(after: Counts, before: Counts): Counts {
  const out: Counts = new Map();
  for (const [name, n] of after)
    if (n - (before.get(name) ?? 0) > 0) out.set(name, n - (before.get(name) ?? 0));
  return out;
}
const total = (counts: Counts) => [...counts.values()].reduce((a, b) => a + b, 0);
function show(counts: Counts, per = 1): string {
  const parts = [...counts].sort().map(([name, n]) => `${name} ${per === 1 ? n : (n / per).toFixed(2)}`);
  return `${parts.join(', ') || 'none'} (${per === 1 ? total(counts) : (total(counts) / per).toFixed(2)} in all)`;
}

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const emulators = await startEmulators({}, {});
const region = 'us-east-1';
const sqs = new SQSClient({ endpoint: emulators.endpoints.sqs, region, credentials });
const tableClient = new DynamoDBClient({ endpoint: emulators.endpoints.dynamodb, region, credentials });
try {
  const tableName = await createTable(tableClient);
  const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'bench-batch' }))).QueueUrl as string;
  const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'bench-batch-dlq' })))
    .QueueUrl as string;
  const queueArn = `arn:aws:sqs:${region}:000000000000:bench-batch`;

  const workerDynamo = new DynamoDBClient({ endpoint: emulators.endpoints.dynamodb, region, credentials });
  const worker = counting(workerDynamo);
  const producerDynamo = new DynamoDBClient({ endpoint: emulators.endpoints.dynamodb, region, credentials });
  const producer = counting(producerDynamo);

  let atCompletion: { commands: Counts; attempts: Counts } | undefined;
  let completionRuns = 0;
  let seenChildren = 0;
  const child = defineJob({
    type: 'bench.child',
    queue: 'work',
    schema: z.object({ n: z.number(), fail: z.boolean() }),
    retry: { maxAttempts: 5, baseDelaySeconds: 1, maxDelaySeconds: 5 },
    async run({ n, fail }) {
      if (fail) throw new PermanentError(`child ${n} fails on purpose`);
      return { n };
    },
  });
  const completion = defineJob({
    type: 'bench.completion',
    queue: 'work',
    schema: z.object({ batch: z.string() }),
    async run({ batch }, ctx) {
      // Every child is counted once the completion job runs: the children's calls end here.
      atCompletion ??= { commands: snapshot(worker.commands), attempts: snapshot(worker.attempts) };
      completionRuns += 1;
      for await (const _ of ctx.batch?.children() ?? []) seenChildren += 1;
      return { batch };
    },
  });
  const handler = createWorker({
    jobs: [child, completion],
    sqs,
    idempotency: new DynamoIdempotencyStore({ tableName, client: workerDynamo }),
    maxConcurrency: 10,
    logger: new Logger({ logLevel: 'SILENT' }),
    env: {
      JOBS_QUEUE_NAME: 'work',
      JOBS_QUEUE_URL: queueUrl,
      JOBS_DLQ_URL: dlqUrl,
      JOBS_IDEMPOTENCY_TABLE: tableName,
      JOBS_QUEUE_URL_WORK: queueUrl,
    },
  });
  const client = new JobClient({
    source: '/bench/batch-size',
    queueUrls: { work: queueUrl },
    sqs,
    dynamodb: producerDynamo,
    batches: { tableName },
  });

  // The worker's EMF lines and summary go to stdout: dropped here, the figures are printed to stderr.
  const write = process.stdout.write.bind(process.stdout);
  (process.stdout as { write: unknown }).write = () => true;
  const print = (line: string) => process.stderr.write(`${line}\n`);

  /** Polls like an event source mapping until the completion job has run `runs` times and the queue is quiet. */
  async function drain(runs: number): Promise<void> {
    let quiet = 0;
    const poll = async () => {
      while (completionRuns < runs || quiet < 2) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            VisibilityTimeout: 60,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) {
          if (completionRuns >= runs) quiet += 1;
          continue;
        }
        quiet = 0;
        const response = await handler(
          sqsEvent(Messages.map((m) => recordFromMessage(m, queueArn))),
          lambdaContext(60_000),
        );
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        const done = Messages.filter((m) => !failed.has(m.MessageId ?? ''));
        if (done.length > 0)
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
            }),
          );
      }
    };
    await Promise.all(Array.from({ length: pollers }, poll));
  }

  async function run(label: string, children: number, fail: boolean, runs: number): Promise<void> {
    atCompletion = undefined;
    const before = { commands: snapshot(worker.commands), attempts: snapshot(worker.attempts) };
    const producerBefore = snapshot(producer.commands);
    const started = performance.now();
    const { batchId } = await client.startBatch({
      id: `bench-${label}`,
      children: Array.from({ length: children }, (_, n) => ({ job: child, data: { n, fail } })),
      completion: { job: completion, data: { batch: label } },
      onChildDeadLettered: 'complete-with-failures',
      openLimitSeconds: 3_600,
    });
    const startMs = performance.now() - started;
    print(`${label}: started in ${(startMs / 1000).toFixed(1)} s`);
    const ticker = setInterval(() => {
      const counted =
        (worker.commands.get('TransactWriteItems') ?? 0) - (before.commands.get('TransactWriteItems') ?? 0);
      print(
        `  ${((performance.now() - started) / 1000).toFixed(0)} s: ${counted} transactions (children counted)`,
      );
    }, 15_000);
    await drain(runs);
    clearInterval(ticker);
    const ms = performance.now() - started;
    const at = atCompletion as unknown as { commands: Counts; attempts: Counts };
    const childCommands = minus(at.commands, before.commands);
    const childAttempts = minus(at.attempts, before.attempts);
    print(
      `\n${label}: batch ${batchId}, ${children} children, ${(ms / 1000).toFixed(1)} s (start ${startMs.toFixed(0)} ms), ${pollers} pollers`,
    );
    print(`  producer start: ${show(minus(producer.commands, producerBefore))}`);
    print(`  per child (commands): ${show(childCommands, children)}`);
    print(`  per child (HTTP attempts, with the SDK's retries): ${show(childAttempts, children)}`);
    print(`  completion job and what followed: ${show(minus(worker.commands, at.commands))}`);
    print(`  completion job runs so far: ${completionRuns}; children it read: ${seenChildren}`);
  }

  print(`embedded emulators: SQS ${emulators.endpoints.sqs}, DynamoDB ${emulators.endpoints.dynamodb}`);
  await run(`completed-${size}`, size, false, 1);
  if (deadLetteredSize > 0) await run(`dead-lettered-${deadLetteredSize}`, deadLetteredSize, true, 2);
  (process.stdout as { write: unknown }).write = write;
} finally {
  await emulators.stop();
}
