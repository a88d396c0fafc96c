/**
 * `onDeadLetter: 'park'` end to end on the emulators: the real worker on a FIFO queue (fauxqs)
 * with the DynamoDB idempotency store (dynalite), and the DLQ redrive of lib/ops. A user's
 * "confirm reservation" fails permanently: the user's later jobs (the invoice, and a job sent
 * while the group is parked) are dead-lettered after it as `GroupParked`; another user goes on. A
 * redrive before the fix parks the group again in the same order; a redrive after the fix runs
 * the blocker, then the parked jobs, in order, and everything completes. And the redrive race: jobs
 * a producer sends while the redrive runs reach the queue ahead of the redriven blocker and are
 * dead-lettered as parked after the redrive read their group; the verification moves them, or
 * names them with the command that does.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { ChangeMessageVisibilityCommand, DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError } from '../../lib/core/errors.ts';
import { strandedParkedCommand } from '../../lib/ops/format.ts';
import { describeQueue } from '../../lib/ops/queue.ts';
import { redriveDeadLetters, verifyRedrive } from '../../lib/ops/redrive/index.ts';
import { defaultJobKey } from '../../lib/runtime/idempotency/keys.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { runCli } from '../factories/cli.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

let emulator: EmulatedSqs;
let db: DynaliteHandle;
let tableName: string;

beforeAll(async () => {
  [emulator, db] = await Promise.all([startEmulatedSqs(), startDynalite()]);
  tableName = await db.createTable();
});

afterAll(async () => {
  await Promise.all([emulator?.stop(), db?.stop()]);
});

/** Fast DLQ reads on the emulator: short polls, one empty receive ends a read. */
const FAST = { waitTimeSeconds: 0, emptyReceivesToStop: 1, holdSeconds: 60 } as const;
const SOURCE = '/checkout';
const schema = z.object({ bookingId: z.string() });

/**
 * The booking chain of the sample; `confirm` parks its group when dead-lettered. A step fails
 * permanently while `broken` holds `<step> <bookingId>` (the cause an operator fixes).
 */
function bookingWorker(queue: EmulatedQueue, dlq: EmulatedQueue, ran: string[], broken: Set<string>) {
  const step =
    (name: string) =>
    async ({ bookingId }: { bookingId: string }) => {
      ran.push(`${name} ${bookingId}`);
      if (broken.has(`${name} ${bookingId}`))
        throw new PermanentError(`reservation of ${bookingId} does not exist`);
    };
  const jobs = [
    defineJob({ type: 'booking.reserve', queue: 'booking', schema, run: step('reserve') }),
    defineJob({
      type: 'booking.confirm',
      queue: 'booking',
      schema,
      onDeadLetter: 'park',
      run: step('confirm'),
    }),
    defineJob({ type: 'booking.invoice', queue: 'booking', schema, run: step('invoice') }),
  ];
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  const store = new DynamoIdempotencyStore({ tableName, client: db.client });
  const handler = createWorker({
    jobs,
    queueName: queue.url.split('/').pop() ?? 'booking',
    queueUrl: queue.url,
    dlqUrl: dlq.url,
    handlerVersion: 'it-park',
    idempotency: store,
    sqs: emulator.sqs,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {},
  });
  return { handler, store };
}

/** The event source mapping until the queue is empty: receive, invoke, delete what succeeded. */
async function drain(queue: EmulatedQueue, handler: WorkerHandler): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const messages = await emulator.receive(queue);
    if (messages.length === 0) return;
    const records = messages.map((m) => recordFromMessage(m, queue.arn));
    const { value } = await captureOutput(() => handler(sqsEvent(records), lambdaContext(60_000)));
    // Nothing here fails transiently: every record is completed or dead-lettered.
    expect(value.batchItemFailures).toEqual([]);
    for (const message of messages) {
      await emulator.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
  throw new Error('the queue did not drain');
}

async function send(queue: EmulatedQueue, type: string, id: string, user: string, bookingId: string) {
  await emulator.send(
    queue,
    createEnvelope({ type, source: SOURCE, id, data: { bookingId }, partitionKey: user }),
    user,
  );
}

async function redrive(queue: EmulatedQueue, dlq: EmulatedQueue) {
  const result = await redriveDeadLetters({
    sqs: emulator.sqs,
    dlqUrl: dlq.url,
    targetUrl: queue.url,
    ...FAST,
  });
  expect(result.failed).toEqual([]);
  expect(result.skipped).toEqual([]);
  // In DLQ order, which is the group's order.
  return result.moved.map((m) => [m.jobId, m.reason, m.messageGroupId]);
}

describe("onDeadLetter: 'park' with the real worker, the DynamoDB store and a DLQ redrive", () => {
  it('parks the group after a dead letter, keeps it parked through a failed redrive, and runs it in order once fixed', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const ran: string[] = [];
    const broken = new Set(['confirm b1']);
    const { handler, store } = bookingWorker(queue, dlq, ran, broken);
    const queueName = queue.url.split('/').pop() as string;

    await send(queue, 'booking.reserve', 'u1-reserve-b1', 'user-1', 'b1');
    await send(queue, 'booking.confirm', 'u1-confirm-b1', 'user-1', 'b1');
    await send(queue, 'booking.invoice', 'u1-invoice-b1', 'user-1', 'b1');
    await send(queue, 'booking.reserve', 'u2-reserve-b9', 'user-2', 'b9');
    await send(queue, 'booking.confirm', 'u2-confirm-b9', 'user-2', 'b9');
    await drain(queue, handler);

    // user-1 stops at the failed confirmation: no invoice for it. user-2 goes on.
    expect(ran.filter((r) => r.endsWith('b1'))).toEqual(['reserve b1', 'confirm b1']);
    expect(ran.filter((r) => r.endsWith('b9'))).toEqual(['reserve b9', 'confirm b9']);
    const park = await store.readGroupPark(queueName, 'user-1');
    expect(park).toMatchObject({
      blockerJobType: 'booking.confirm',
      blockerJobId: 'u1-confirm-b1',
      parkCount: 1,
    });
    expect(await store.readGroupPark(queueName, 'user-2')).toBeUndefined();

    // A job of the user sent while the group is parked (another instance, a later batch): held too.
    await send(queue, 'booking.reserve', 'u1-reserve-b2', 'user-1', 'b2');
    await drain(queue, handler);
    expect(ran).not.toContain('reserve b2');

    // Redrive before the fix: the blocker fails again and the group is parked again, same order.
    expect(await redrive(queue, dlq)).toEqual([
      ['u1-confirm-b1', 'PermanentError', 'user-1'],
      ['u1-invoice-b1', 'GroupParked', 'user-1'],
      ['u1-reserve-b2', 'GroupParked', 'user-1'],
    ]);
    await drain(queue, handler);
    expect(ran.filter((r) => r.endsWith('b1') || r.endsWith('b2'))).toEqual([
      'reserve b1',
      'confirm b1',
      'confirm b1',
    ]);
    expect(await store.readGroupPark(queueName, 'user-1')).toMatchObject({ parkCount: 2 });

    // Fixed: the redrive runs the blocker first, then the parked jobs, in order; all complete.
    broken.clear();
    expect(await redrive(queue, dlq)).toEqual([
      ['u1-confirm-b1', 'PermanentError', 'user-1'],
      ['u1-invoice-b1', 'GroupParked', 'user-1'],
      ['u1-reserve-b2', 'GroupParked', 'user-1'],
    ]);
    await drain(queue, handler);

    expect(ran.filter((r) => r.endsWith('b1') || r.endsWith('b2'))).toEqual([
      'reserve b1',
      'confirm b1',
      'confirm b1',
      'confirm b1',
      'invoice b1',
      'reserve b2',
    ]);
    expect(await store.readGroupPark(queueName, 'user-1')).toBeUndefined();
    for (const [type, id] of [
      ['booking.confirm', 'u1-confirm-b1'],
      ['booking.invoice', 'u1-invoice-b1'],
      ['booking.reserve', 'u1-reserve-b2'],
    ] as const) {
      expect((await store.readRecord(type, defaultJobKey(SOURCE, id)))?.status).toBe('COMPLETED');
    }
    expect(await emulator.receive(dlq)).toEqual([]);

    // The group is free again: the user's next job runs at once.
    await send(queue, 'booking.invoice', 'u1-invoice-b2', 'user-1', 'b2');
    await drain(queue, handler);
    expect(ran.at(-1)).toBe('invoice b2');
  });
});

describe('the redrive race: jobs of a parked group dead-lettered as parked after the redrive read it', () => {
  /** user-1's group parked behind its failed confirmation, with the invoice parked behind that. */
  let tests = 0;
  async function parkedGroup() {
    // Job ids of their own: the idempotency table is shared by the file's tests.
    tests += 1;
    const id = (name: string) => `race${tests}-${name}`;
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const ran: string[] = [];
    const broken = new Set(['confirm b1']);
    const { handler, store } = bookingWorker(queue, dlq, ran, broken);
    await send(queue, 'booking.reserve', id('reserve-b1'), 'user-1', 'b1');
    await send(queue, 'booking.confirm', id('confirm-b1'), 'user-1', 'b1');
    await send(queue, 'booking.invoice', id('invoice-b1'), 'user-1', 'b1');
    await drain(queue, handler);
    const queueName = queue.url.split('/').pop() as string;
    expect(await store.readGroupPark(queueName, 'user-1')).toMatchObject({ blockerJobId: id('confirm-b1') });
    return { queue, dlq, ran, broken, handler, store, queueName, id };
  }

  /**
   * The user's next jobs, sent while the redrive runs (from its confirmation, before it has sent
   * the blocker): on the FIFO queue they are ahead of the redriven blocker, so the worker
   * dead-letters them as parked, after the redrive read the group.
   */
  async function sendDuringRedrive(queue: EmulatedQueue, ids: readonly string[]) {
    for (const id of ids) await send(queue, 'booking.reserve', id, 'user-1', id);
  }

  /** Visible DLQ messages (the emulator's count; a FIFO read would see one per group). */
  async function dlqDepth(dlq: EmulatedQueue): Promise<number> {
    return (await describeQueue(emulator.sqs, dlq.url, 'DLQ')).approximateVisible;
  }

  function redriveCli(
    queue: EmulatedQueue,
    dlq: EmulatedQueue,
    extra: readonly string[],
    io: Parameters<typeof runCli>[2],
  ) {
    return runCli(
      [
        'dlq',
        'redrive',
        '--dlq-url',
        dlq.url,
        '--target-url',
        queue.url,
        '--wait-seconds',
        '0',
        '--endpoint',
        emulator.endpoint,
        ...extra,
      ],
      emulator.endpoint,
      io,
    );
  }

  it('--verify-seconds moves them after the park is cleared, in order, naming each: nothing stays in the DLQ', async () => {
    const g = await parkedGroup();
    g.broken.clear();
    let raced = false;
    const run = await redriveCli(g.queue, g.dlq, ['--verify-seconds', '1'], {
      stdinIsTTY: true,
      ask: async () => {
        await sendDuringRedrive(g.queue, [g.id('reserve-b2'), g.id('reserve-b3')]);
        return 'y';
      },
      // The wait before the verification: the worker runs. The race has happened once the blocker
      // completed (the park is cleared) while the two jobs sent during the redrive sit in the DLQ.
      sleep: async () => {
        await drain(g.queue, g.handler);
        expect(await g.store.readGroupPark(g.queueName, 'user-1')).toBeUndefined();
        expect(await dlqDepth(g.dlq)).toBe(2);
        raced = true;
      },
    });
    expect(raced).toBe(true);
    expect(run.stdout).toContain(
      'moved 2 parked jobs dead-lettered as GroupParked after the redrive read their group',
    );
    const afterHeader = run.stdout.split('parked jobs dead-lettered as GroupParked')[1] ?? '';
    const moved = afterHeader.split('\n').filter((line) => line.startsWith('  '));
    expect(moved.map((line) => line.match(/job (\S+)/)?.[1])).toEqual([
      g.id('reserve-b2'),
      g.id('reserve-b3'),
    ]);
    expect(run.stdout).not.toContain('not verified');
    expect(run.code).toBe(0);

    await drain(g.queue, g.handler);
    expect(g.ran.filter((r) => !r.endsWith('b1') || r.startsWith('invoice'))).toEqual([
      'invoice b1',
      `reserve ${g.id('reserve-b2')}`,
      `reserve ${g.id('reserve-b3')}`,
    ]);
    expect(await dlqDepth(g.dlq)).toBe(0);
    expect(await emulator.receive(g.dlq)).toEqual([]);
  });

  it('a verification that does not move names them by message id, with a command that moves the whole rest of the group', async () => {
    const g = await parkedGroup();
    g.broken.clear();
    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: g.dlq.url,
      targetUrl: g.queue.url,
      confirm: async () => {
        await sendDuringRedrive(g.queue, [g.id('reserve-b2'), g.id('reserve-b3')]);
        return true;
      },
      ...FAST,
    });
    expect(result.moved.map((m) => m.jobId)).toEqual([g.id('confirm-b1'), g.id('invoice-b1')]);
    await drain(g.queue, g.handler);
    expect(await g.store.readGroupPark(g.queueName, 'user-1')).toBeUndefined();

    // As the console verifies: report only.
    const verify = await verifyRedrive({
      sqs: emulator.sqs,
      dlqUrl: g.dlq.url,
      targetUrl: g.queue.url,
      redriven: result.moved,
      exclude: result.seenMessageIds,
      ...FAST,
    });
    expect(verify.strandedParked.moved).toEqual([]);
    expect(verify.strandedParked.left.map((item) => [item.jobId, item.reason, item.messageGroupId])).toEqual([
      [g.id('reserve-b2'), 'GroupParked', 'user-1'],
    ]);
    const [dlqMessage] = await emulator.receive(g.dlq);
    expect(verify.strandedParked.left[0]?.messageId).toBe(dlqMessage?.MessageId);
    await emulator.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: g.dlq.url,
        ReceiptHandle: dlqMessage?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const command = verify.strandedParked.command;
    expect(command).toBe(strandedParkedCommand(g.dlq.url, g.queue.url));

    // The command as printed (plus --yes: no terminal here) moves the one named and the one behind it.
    const [program, ...argv] = (command ?? '').split(' ');
    expect(program).toBe('sqs-jobs');
    const run = await runCli(
      [...argv, '--yes', '--wait-seconds', '0', '--endpoint', emulator.endpoint],
      emulator.endpoint,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('selected 2, moved 2');
    await drain(g.queue, g.handler);
    expect(g.ran.slice(-2)).toEqual([`reserve ${g.id('reserve-b2')}`, `reserve ${g.id('reserve-b3')}`]);
    expect(await dlqDepth(g.dlq)).toBe(0);
  });

  it('when the blocker fails again, the move finds it come back behind them and the group keeps its order', async () => {
    const g = await parkedGroup();
    const run = await redriveCli(g.queue, g.dlq, ['--verify-seconds', '1'], {
      stdinIsTTY: true,
      ask: async () => {
        await sendDuringRedrive(g.queue, [g.id('reserve-b2')]);
        return 'y';
      },
      sleep: () => drain(g.queue, g.handler),
    });
    // The job sent during the redrive was first of the group in the DLQ, the blocker's return hidden
    // behind it; moving the job shows the return.
    expect(run.stdout).toContain('moved 1 parked job');
    expect(run.stdout).toContain(`1 of 3 redriven jobs came back to the DLQ\n  job ${g.id('confirm-b1')} `);
    expect(run.code).toBe(1);
    // The moved job meets the park again and is dead-lettered behind the blocker: once fixed, one
    // redrive runs the group in order.
    await drain(g.queue, g.handler);
    expect(g.ran).not.toContain(`reserve ${g.id('reserve-b2')}`);
    g.broken.clear();
    expect(await redrive(g.queue, g.dlq)).toEqual([
      [g.id('confirm-b1'), 'PermanentError', 'user-1'],
      [g.id('invoice-b1'), 'GroupParked', 'user-1'],
      [g.id('reserve-b2'), 'GroupParked', 'user-1'],
    ]);
    await drain(g.queue, g.handler);
    expect(g.ran.slice(-3)).toEqual(['confirm b1', 'invoice b1', `reserve ${g.id('reserve-b2')}`]);
    expect(await dlqDepth(g.dlq)).toBe(0);
  });
});
