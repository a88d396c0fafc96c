/**
 * One job, two SQS messages: a producer whose send succeeded but whose response was lost sends
 * again, so the same envelope (one job id) sits in the queue under two messageIds. Whatever
 * the job's fate, the user must see it once: one DLQ message, one run per delivery that should
 * run. And a redrive of that dead letter, ours or SQS's own move, must still run the job.
 * On the embedded emulators (fauxqs, dynalite) with the worker's default DynamoDB store.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope, type JobEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import { redriveDeadLetters } from '../../lib/ops/redrive/run.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { SqsSender } from '../../lib/runtime/sqs-port.ts';
import type { WorkerHandler } from '../../lib/runtime/worker.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { guardedWorker, useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();

const schema = z.object({ orderId: z.string() });

/** A job that fails as `fail` says, counting its runs. */
function countingJob(type: string, fail: (attempt: number) => Error | undefined) {
  const runs: number[] = [];
  const job = defineJob({
    type,
    queue: 'orders',
    schema,
    retry: { maxAttempts: 2, baseDelaySeconds: 1 },
    run: async (_data, ctx) => {
      runs.push(ctx.attempt);
      const error = fail(ctx.attempt);
      if (error) throw error;
      return 'done';
    },
  });
  return { job, runs };
}

/**
 * A queue and its DLQ (redrive policy set, as a stack does), a worker on them, and the envelope
 * sent twice: the producer's first send succeeded, its response was lost, it sent again. The
 * copy goes out just before the first delivery runs (so it was sent before anything was
 * dead-lettered) and comes in the next delivery, as it would after a lost response.
 */
async function sentTwice(job: ReturnType<typeof countingJob>['job'], orderId: string) {
  const { queue, dlq } = await env.emulator.createQueuePair('orders', false);
  const worker = guardedWorker(env, { queueName: 'orders', queue, dlq, jobs: [job] });
  const envelope = createEnvelope({ type: job.type, source: '/shop', data: { orderId } });
  await env.emulator.send(queue, envelope);
  let copySent = false;
  const handler: WorkerHandler = async (event, context) => {
    if (!copySent) {
      copySent = true;
      await env.emulator.send(queue, envelope);
    }
    return worker(event, context);
  };
  return { queue, dlq, handler, envelope };
}

/**
 * Delivers until the queue has nothing left. A message the worker handed back for later (a
 * retry, or `busy` behind another run) is made visible at once once its delivery ended: the
 * test stands in for the time passing, it does not wait for it.
 */
async function drain(queue: EmulatedQueue, handler: WorkerHandler): Promise<number> {
  let deliveries = 0;
  for (;;) {
    const { delivered, response, messages } = await env.emulator.deliver(queue, handler);
    if (delivered === 0) return deliveries;
    deliveries += delivered;
    await makeVisible(
      queue,
      messages,
      response.batchItemFailures.map((f) => f.itemIdentifier),
    );
  }
}

/**
 * Makes the messages among `messages` whose ids are in `ids` visible again now; one the worker
 * already made visible (a retry after 0 s) is no longer in flight, which is what we want.
 */
async function makeVisible(queue: EmulatedQueue, messages: readonly Message[], ids: readonly string[]) {
  for (const message of messages.filter((m) => ids.includes(m.MessageId ?? ''))) {
    try {
      await env.emulator.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queue.url,
          ReceiptHandle: message.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    } catch (error) {
      if ((error as Error).name !== 'MessageNotInflight') throw error;
    }
  }
}

/** Every message in the DLQ, received and left in flight (so each is read once). */
async function deadLetters(dlq: EmulatedQueue): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const batch = await env.emulator.receive(dlq);
    if (batch.length === 0) return all;
    all.push(...batch);
  }
}

function jobIdOf(message: Message): string {
  return (JSON.parse(message.Body ?? '{}') as JobEnvelope).id;
}

/** What SQS's own redrive (StartMessageMoveTask, console "Start DLQ redrive") does to one DLQ message: a new message with its body and attributes, a new messageId and SentTimestamp. */
async function nativeMove(dlq: EmulatedQueue, target: EmulatedQueue): Promise<void> {
  const { Messages = [] } = await env.emulator.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: dlq.url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
  );
  expect(Messages).toHaveLength(1);
  const [message] = Messages as [Message];
  await env.emulator.sqs.send(
    new SendMessageCommand({
      QueueUrl: target.url,
      MessageBody: message.Body,
      MessageAttributes: message.MessageAttributes,
    }),
  );
  await env.emulator.sqs.send(
    new DeleteMessageCommand({ QueueUrl: dlq.url, ReceiptHandle: message.ReceiptHandle }),
  );
}

describe('a job sent twice (two messages, one envelope id)', () => {
  it('that fails permanently ends as one dead letter, run once', async () => {
    const { job, runs } = countingJob('orders.charge', () => new PermanentError('card declined'));
    const { queue, dlq, handler, envelope } = await sentTwice(job, 'o-1');

    expect(await drain(queue, handler)).toBe(2);

    expect(runs).toEqual([1]);
    const dlqMessages = await deadLetters(dlq);
    expect(dlqMessages.map(jobIdOf)).toEqual([envelope.id]);
    expect(await env.emulator.receive(queue)).toEqual([]);
  });

  it('whose retries run out ends as one dead letter: both messages share the attempts', async () => {
    const { job, runs } = countingJob('orders.ship', () => new TransientError('carrier API 503'));
    const { queue, dlq, handler, envelope } = await sentTwice(job, 'o-2');

    await drain(queue, handler);

    // maxAttempts 2: two runs in all, whichever message carried them.
    expect(runs).toEqual([1, 2]);
    expect((await deadLetters(dlq)).map(jobIdOf)).toEqual([envelope.id]);
    expect(await env.emulator.receive(queue)).toEqual([]);
  });

  it('whose copy arrives while the first run is in progress ends as one dead letter', async () => {
    let release: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      release = resolve;
    });
    let letGo: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const runs: number[] = [];
    const job = defineJob({
      type: 'orders.refund',
      queue: 'orders',
      schema,
      run: async (_data, ctx) => {
        runs.push(ctx.attempt);
        release();
        await gate;
        throw new PermanentError('refund refused');
      },
    });
    const { queue, dlq } = await env.emulator.createQueuePair('orders', false);
    const handler = guardedWorker(env, { queueName: 'orders', queue, dlq, jobs: [job] });
    const envelope = createEnvelope({ type: job.type, source: '/shop', data: { orderId: 'o-3' } });
    await env.emulator.send(queue, envelope);
    const first = env.emulator.deliver(queue, handler);
    await started;
    // The copy is sent and delivered while the first run holds the lease: it waits (busy).
    await env.emulator.send(queue, envelope);
    const copy = await env.emulator.deliver(queue, handler);
    expect(copy.response.batchItemFailures).toHaveLength(1);
    letGo();
    await first;
    await makeVisible(
      queue,
      copy.messages,
      copy.response.batchItemFailures.map((f) => f.itemIdentifier),
    );

    await drain(queue, handler);

    expect(runs).toEqual([1]);
    expect((await deadLetters(dlq)).map(jobIdOf)).toEqual([envelope.id]);
  });

  it('that completes runs once; its copy is absorbed with no dead letter', async () => {
    const { job, runs } = countingJob('orders.confirm', () => undefined);
    const { queue, dlq, handler } = await sentTwice(job, 'o-4');

    expect(await drain(queue, handler)).toBe(2);

    expect(runs).toEqual([1]);
    expect(await deadLetters(dlq)).toEqual([]);
  });
});

describe('a redrive of the one dead letter of a job sent twice', () => {
  it('runs the job again: our redrive (redriveDeadLetters)', async () => {
    let failing = true;
    const { job, runs } = countingJob('orders.invoice', () =>
      failing ? new PermanentError('no billing address') : undefined,
    );
    const { queue, dlq, handler } = await sentTwice(job, 'o-5');
    await drain(queue, handler);
    expect(runs).toEqual([1]);

    failing = false;
    const redriven = await redriveDeadLetters({
      sqs: env.emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      waitTimeSeconds: 0,
      emptyReceivesToStop: 1,
      holdSeconds: 60,
    });
    expect(redriven.moved).toHaveLength(1);
    expect(await drain(queue, handler)).toBe(1);

    expect(runs).toEqual([1, 1]);
    expect(await deadLetters(dlq)).toEqual([]);
  });

  it("runs the job again: SQS's own move (StartMessageMoveTask), attributes kept", async () => {
    const { job, runs } = countingJob('orders.receipt', () => new PermanentError('no email address'));
    const { queue, dlq, handler, envelope } = await sentTwice(job, 'o-6');
    await drain(queue, handler);
    expect(runs).toEqual([1]);

    await nativeMove(dlq, queue);
    expect(await drain(queue, handler)).toBe(1);

    // It ran again and failed again: one dead letter again, the redrive's.
    expect(runs).toEqual([1, 1]);
    expect((await deadLetters(dlq)).map(jobIdOf)).toEqual([envelope.id]);
  });

  it('two DLQ copies of the one dead letter (its send retried after a lost response), redriven together, run the job once', async () => {
    const { job, runs } = countingJob('orders.label', () => new PermanentError('no shipping address'));
    const { queue, dlq, handler } = await sentTwice(job, 'o-7');
    await drain(queue, handler);
    // What the SDK's retry of a DLQ SendMessage whose response was lost leaves: the same dead
    // letter (body and evidence) twice.
    const [deadLetter] = await deadLetters(dlq);
    await env.emulator.sqs.send(
      new SendMessageCommand({
        QueueUrl: dlq.url,
        MessageBody: deadLetter?.Body,
        MessageAttributes: deadLetter?.MessageAttributes,
      }),
    );
    await env.emulator.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dlq.url,
        ReceiptHandle: deadLetter?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );

    const redriven = await redriveDeadLetters({
      sqs: env.emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      waitTimeSeconds: 0,
      emptyReceivesToStop: 1,
      holdSeconds: 60,
    });
    expect(redriven.moved).toHaveLength(2);
    expect(await drain(queue, handler)).toBeGreaterThanOrEqual(2);

    // It failed again: one run, one dead letter again (the second copy, sent before that run's
    // dead-lettering began, is absorbed; had the run completed it would be absorbed as completed).
    expect(runs).toEqual([1, 1]);
    expect(await deadLetters(dlq)).toHaveLength(1);
  });
});

describe('batch children sent twice (the children send retried after a lost response)', () => {
  it('dead-letters each failing child once, runs each child once, and counts each once', async () => {
    const childRuns = new Map<number, number>();
    const completions: { total: number; succeeded: number; deadLettered: number }[] = [];
    const child = defineJob({
      type: 'orders.line',
      queue: 'orders',
      schema: z.object({ n: z.number() }),
      async run({ n }) {
        childRuns.set(n, (childRuns.get(n) ?? 0) + 1);
        if (n % 2 === 1) throw new PermanentError(`line ${n} is out of stock`);
        return n;
      },
    });
    const summary = defineJob({
      type: 'orders.lines-done',
      queue: 'orders',
      schema: z.object({}),
      async run(_data, ctx) {
        const batch = ctx.batch;
        if (batch === undefined) throw new PermanentError('no ctx.batch');
        completions.push({
          total: batch.total,
          succeeded: batch.succeeded,
          deadLettered: batch.deadLettered,
        });
      },
    });
    const start = defineJob({
      type: 'orders.lines',
      queue: 'orders',
      schema: z.object({}),
      async run(_data, ctx) {
        return ctx.startBatch({
          children: [0, 1, 2, 3].map((n) => ({ job: child, data: { n } })),
          completion: { job: summary, data: {} },
          onChildDeadLettered: 'complete-with-failures',
          openLimitSeconds: 600,
        });
      },
    });
    const { queue, dlq } = await env.emulator.createQueuePair('orders', false);
    // Every SendMessageBatch of the worker (the children) reaches the queue twice: what the SDK's
    // retry leaves after a response lost once the messages were on the queue.
    const sqs: SqsSender = {
      async send(command) {
        const out = await env.emulator.sqs.send(command as never);
        if (command instanceof SendMessageBatchCommand) await env.emulator.sqs.send(command);
        return out;
      },
    };
    const handler = guardedWorker(env, {
      queueName: 'orders',
      queue,
      dlq,
      jobs: [start, child, summary] as AnyJob[],
      sqs: sqs as never,
      env: { JOBS_QUEUE_URL_ORDERS: queue.url },
    });
    await env.emulator.send(queue, createEnvelope({ type: start.type, source: '/shop', data: {} }));

    await drain(queue, handler);

    expect(completions).toEqual([{ total: 4, succeeded: 2, deadLettered: 2 }]);
    expect([...childRuns.entries()].sort()).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
    const letters = await deadLetters(dlq);
    expect(letters).toHaveLength(2);
    expect(new Set(letters.map(jobIdOf)).size).toBe(2);
  });
});
