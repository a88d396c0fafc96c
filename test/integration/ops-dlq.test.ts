/**
 * DLQ operations (lib/ops) on the embedded SQS emulator (fauxqs), with dead letters produced by
 * the real worker: list grouped by cause without losing anything, dry run, filtered redrive on
 * standard and FIFO queues, partial send failures, verification, and the refusals.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope, deduplicationIdOf, type JobEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import { NO_EVIDENCE_REASON, UNKNOWN_JOB_TYPE } from '../../lib/ops/dead-letter-message.ts';
import { readDeadLetters } from '../../lib/ops/dlq-reader.ts';
import {
  InvalidQueueUrlError,
  QueueMismatchError,
  QueueNotFoundError,
  SqsUnreachableError,
} from '../../lib/ops/errors.ts';
import type { OpsSqs, OpsSqsCommand } from '../../lib/ops/queue.ts';
import { redriveDeadLetters, redriveDeduplicationId, verifyRedrive } from '../../lib/ops/redrive/index.ts';
import { summarizeDeadLetters } from '../../lib/ops/summary.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

/** Fast reads on the emulator: short polls, one empty receive ends a read. */
const FAST = { waitTimeSeconds: 0, emptyReceivesToStop: 1, holdSeconds: 60 } as const;

const orderSchema = z.object({ orderId: z.string() });

/** Jobs that fail the way the sample's do: permanent, attempts used up, or (when fixed) succeed. */
function jobs(options: { readonly fixed?: ReadonlySet<string> } = {}): AnyJob[] {
  const fixed = options.fixed ?? new Set<string>();
  return [
    defineJob({
      type: 'orders.capture',
      queue: 'orders',
      schema: orderSchema,
      run: async ({ orderId }) => {
        if (!fixed.has(orderId)) throw new PermanentError(`order ${orderId} does not exist`);
      },
    }),
    defineJob({
      type: 'orders.refund',
      queue: 'orders',
      schema: orderSchema,
      retry: { maxAttempts: 1 },
      run: async ({ orderId }) => {
        if (!fixed.has(orderId)) throw new TransientError(`payment API timed out for ${orderId}`);
      },
    }),
  ];
}

function worker(queue: EmulatedQueue, dlq: EmulatedQueue, jobList: AnyJob[]): WorkerHandler {
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  return createWorker({
    jobs: jobList,
    queueName: 'orders',
    queueUrl: queue.url,
    dlqUrl: dlq.url,
    handlerVersion: 'it-7',
    idempotency: false,
    sqs: emulator.sqs,
    random: () => 0.9999,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {},
  });
}

/** Runs the event source mapping until the queue is empty (no waiting: every job here ends at once). */
async function drain(queue: EmulatedQueue, handler: WorkerHandler): Promise<number> {
  let delivered = 0;
  for (let round = 0; round < 100; round++) {
    const messages = await emulator.receive(queue);
    if (messages.length === 0) return delivered;
    delivered += messages.length;
    const records = messages.map((m) => recordFromMessage(m, queue.arn));
    const { value } = await captureOutput(() => handler(sqsEvent(records), lambdaContext(60_000)));
    const failed = new Set(value.batchItemFailures.map((f) => f.itemIdentifier));
    for (const message of messages) {
      if (failed.has(message.MessageId ?? '')) continue;
      await emulator.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
  throw new Error('the queue did not drain');
}

function envelope(type: string, id: string, orderId: string, partitionKey?: string): JobEnvelope {
  return createEnvelope({
    type,
    source: '/checkout',
    id,
    data: { orderId },
    ...(partitionKey === undefined ? {} : { partitionKey }),
  });
}

async function depth(queue: EmulatedQueue): Promise<{ visible: number; inFlight: number }> {
  const out = await emulator.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queue.url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
}

/** Takes every message off a queue (deleting each after reading, so FIFO groups unlock), in order. */
async function takeAll(queue: EmulatedQueue): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const messages = await emulator.receive(queue);
    if (messages.length === 0) return all;
    for (const message of messages) {
      all.push(message);
      await emulator.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
}

/**
 * A standard source queue and DLQ with six dead letters: three orders.capture (PermanentError),
 * one orders.refund (attempts used up), one malformed body (all through the worker), and one
 * envelope moved without evidence (as SQS's maxReceiveCount would).
 */
async function standardFixture() {
  const { queue, dlq } = await emulator.createQueuePair('orders', false);
  const bodies = new Map<string, string>();
  for (const [id, orderId] of [
    ['cap-1', 'o-1'],
    ['cap-2', 'o-2'],
    ['cap-3', 'o-3'],
  ] as const) {
    bodies.set(id, await emulator.send(queue, envelope('orders.capture', id, orderId)));
  }
  bodies.set('ref-1', await emulator.send(queue, envelope('orders.refund', 'ref-1', 'o-9')));
  await emulator.sqs.send(
    new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"not": "an envelope"' }),
  );
  await drain(queue, worker(queue, dlq, jobs()));
  const crashed = JSON.stringify(envelope('orders.capture', 'crash-1', 'o-5'));
  await emulator.sqs.send(new SendMessageCommand({ QueueUrl: dlq.url, MessageBody: crashed }));
  bodies.set('crash-1', crashed);
  return { queue, dlq, bodies };
}

describe('list (readDeadLetters + summarizeDeadLetters)', () => {
  it('groups a standard DLQ by cause, then job type, and leaves every message visible', async () => {
    const { dlq } = await standardFixture();
    const read = await readDeadLetters({ sqs: emulator.sqs, queueUrl: dlq.url, ...FAST });

    expect(read.messages).toHaveLength(6);
    expect(read.stoppedBy).toBe('end');
    expect(read.release).toEqual({ released: 6, failed: [] });
    const summary = summarizeDeadLetters(read.messages);
    const keys = summary.groups.map((g) => [g.key.reason, g.key.jobType, g.count]);
    expect(keys[0]).toEqual(['PermanentError', 'orders.capture', 3]);
    expect(keys).toContainEqual(['attempts-used-up: TransientError', 'orders.refund', 1]);
    expect(keys).toContainEqual([NO_EVIDENCE_REASON, 'orders.capture', 1]);
    const malformed = summary.groups.find((g) => g.key.jobType === UNKNOWN_JOB_TYPE);
    expect(malformed?.errorNames[0]?.name).toBe('EnvelopeError');

    const capture = summary.groups[0];
    expect(capture?.errorNames).toEqual([{ name: 'PermanentError', count: 3 }]);
    expect(capture?.attempts).toEqual({ min: 1, max: 1 });
    expect(capture?.handlerVersions).toEqual(['it-7']);
    expect(capture?.errorMessages).toHaveLength(3);
    expect(capture?.errorMessages).toContain('order o-2 does not exist');
    expect(Date.parse(capture?.firstFailureAt ?? '')).toBeLessThanOrEqual(
      Date.parse(capture?.lastFailureAt ?? ''),
    );
    expect(capture?.sample.body).toContain('"type":"orders.capture"');

    // Nothing deleted, nothing left in flight: every message can be received again at once.
    expect(await depth(dlq)).toEqual({ visible: 6, inFlight: 0 });
    expect(await takeAll(dlq)).toHaveLength(6);
  });

  it('reads the first message of each group of a FIFO DLQ, says how many it could not read, and loses nothing', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    await emulator.send(queue, envelope('orders.capture', 'u1-a', 'o-1', 'user-1'), 'user-1');
    await emulator.send(queue, envelope('orders.capture', 'u1-b', 'o-2', 'user-1'), 'user-1');
    await emulator.send(queue, envelope('orders.refund', 'u2-a', 'o-3', 'user-2'), 'user-2');
    await drain(queue, worker(queue, dlq, jobs()));
    expect((await depth(dlq)).visible).toBe(3);

    const read = await readDeadLetters({ sqs: emulator.sqs, queueUrl: dlq.url, ...FAST });

    // fauxqs hands out one message per group while one is in flight (SQS: the first ones, in order).
    expect(read.messages.map((m) => m.job?.id).sort()).toEqual(['u1-a', 'u2-a']);
    expect(read.messages.map((m) => m.messageGroupId).sort()).toEqual(['user-1', 'user-2']);
    expect(read.notRead).toBe(1);
    expect(read.queue.fifo).toBe(true);
    expect(await depth(dlq)).toEqual({ visible: 3, inFlight: 0 });
    const all = await takeAll(dlq);
    const ids = (group: string) =>
      all.filter((m) => m.Attributes?.MessageGroupId === group).map((m) => JSON.parse(m.Body ?? '{}').id);
    expect(ids('user-1')).toEqual(['u1-a', 'u1-b']);
    expect(ids('user-2')).toEqual(['u2-a']);
  });
});

/**
 * SQS as a redrive sees it when the target's worker fails at once: every message sent to the
 * target is followed by a new dead letter of the same body in `dlq`.
 */
function bouncingTarget(dlq: EmulatedQueue): OpsSqs {
  return {
    async send(command: OpsSqsCommand) {
      const out = await emulator.sqs.send(command as never);
      if (command instanceof SendMessageBatchCommand) {
        for (const entry of command.input.Entries ?? []) {
          await emulator.sqs.send(
            new SendMessageCommand({ QueueUrl: dlq.url, MessageBody: entry.MessageBody }),
          );
        }
      }
      return out;
    },
  };
}

describe('redrive (redriveDeadLetters)', () => {
  it('dry run: selects exactly what would move and changes nothing', async () => {
    const { queue, dlq } = await standardFixture();
    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { reasons: ['PermanentError'] },
      dryRun: true,
      ...FAST,
    });

    expect(result.selected.map((s) => s.jobId).sort()).toEqual(['cap-1', 'cap-2', 'cap-3']);
    expect(result.moved).toEqual([]);
    expect(result.skipped).toHaveLength(3);
    expect(result.skipped.every((s) => s.why === 'not-selected')).toBe(true);
    expect(await depth(queue)).toEqual({ visible: 0, inFlight: 0 });
    expect(await depth(dlq)).toEqual({ visible: 6, inFlight: 0 });
  });

  it('moves only the selected messages, bodies unchanged, and leaves the rest visible in the DLQ', async () => {
    const { queue, dlq, bodies } = await standardFixture();
    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { reasons: ['PermanentError', NO_EVIDENCE_REASON], jobTypes: ['orders.*'] },
      ...FAST,
    });

    expect(result.moved.map((m) => m.jobId).sort()).toEqual(['cap-1', 'cap-2', 'cap-3', 'crash-1']);
    expect(result.failed).toEqual([]);
    expect(result.notDeleted).toEqual([]);
    expect(result.skipped.map((s) => s.why)).toEqual(['not-selected', 'not-selected']);
    expect(result.release.failed).toEqual([]);
    const arrived = await takeAll(queue);
    expect(arrived.map((m) => m.Body).sort()).toEqual(
      ['cap-1', 'cap-2', 'cap-3', 'crash-1'].map((id) => bodies.get(id)).sort(),
    );
    // The evidence stays behind: the target gets the body only.
    expect(arrived.every((m) => m.MessageAttributes === undefined)).toBe(true);
    expect(await depth(dlq)).toEqual({ visible: 2, inFlight: 0 });
    const left = await readDeadLetters({ sqs: emulator.sqs, queueUrl: dlq.url, ...FAST });
    expect(left.messages.map((m) => m.reason).sort()).toEqual([
      'EnvelopeError',
      'attempts-used-up: TransientError',
    ]);
  });

  it('stops at --max and leaves the rest', async () => {
    const { queue, dlq } = await standardFixture();
    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { jobTypes: ['orders.capture'] },
      max: 2,
      ...FAST,
    });
    expect(result.moved).toHaveLength(2);
    expect(result.stoppedBy).toBe('max');
    expect((await takeAll(queue)).length).toBe(2);
    expect(await depth(dlq)).toEqual({ visible: 4, inFlight: 0 });
  });

  it('standard: a redriven job keeps its fair-queue tenant (the envelope partitionkey as its MessageGroupId)', async () => {
    const { queue, dlq } = await emulator.createQueuePair('tenants', false);
    // Sent by JobClient with a partitionKey (the fair queue's MessageGroupId), dead-lettered by the worker.
    await emulator.sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: JSON.stringify(envelope('orders.capture', 'ten-a', 'o-1', 'tenant-a')),
        MessageGroupId: 'tenant-a',
      }),
    );
    await drain(queue, worker(queue, dlq, jobs()));
    await emulator.sqs.send(
      new SendMessageCommand({
        QueueUrl: dlq.url,
        MessageBody: JSON.stringify(envelope('orders.capture', 'plain', 'o-3')),
      }),
    );
    // fauxqs takes a MessageGroupId on a standard queue but does not hand it back on receive (AWS
    // and moto do): the request the redrive sends is the evidence.
    const sent: { id: string; group: string | undefined }[] = [];
    const sqs: OpsSqs = {
      send: (command: OpsSqsCommand) => {
        if (command instanceof SendMessageBatchCommand) {
          for (const entry of command.input.Entries ?? [])
            sent.push({ id: JSON.parse(entry.MessageBody ?? '{}').id, group: entry.MessageGroupId });
        }
        return emulator.sqs.send(command as never);
      },
    };

    const result = await redriveDeadLetters({ sqs, dlqUrl: dlq.url, targetUrl: queue.url, ...FAST });

    expect(result.moved.map((m) => m.jobId).sort()).toEqual(['plain', 'ten-a']);
    expect(sent.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'plain', group: undefined },
      { id: 'ten-a', group: 'tenant-a' },
    ]);
    expect((await takeAll(queue)).map((m) => JSON.parse(m.Body ?? '{}').id).sort()).toEqual([
      'plain',
      'ten-a',
    ]);
  });

  it('FIFO: keeps the group and DLQ order, and a fresh dedup id so nothing is dropped inside the 5-minute window', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const sent = [
      envelope('orders.capture', 'u1-a', 'o-1', 'user-1'),
      envelope('orders.capture', 'u1-b', 'o-2', 'user-1'),
      envelope('orders.capture', 'u1-c', 'o-3', 'user-1'),
      envelope('orders.capture', 'u2-a', 'o-4', 'user-2'),
    ];
    for (const e of sent) await emulator.send(queue, e, e.partitionkey);
    await drain(queue, worker(queue, dlq, jobs()));

    // Seconds after the original sends: reusing their dedup ids would be silently dropped.
    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      ...FAST,
    });

    expect(result.moved).toHaveLength(4);
    const arrived = await takeAll(queue);
    expect(arrived).toHaveLength(4);
    const inGroup = (group: string) =>
      arrived.filter((m) => m.Attributes?.MessageGroupId === group).map((m) => JSON.parse(m.Body ?? '{}').id);
    expect(inGroup('user-1')).toEqual(['u1-a', 'u1-b', 'u1-c']);
    expect(inGroup('user-2')).toEqual(['u2-a']);
    for (const message of arrived) {
      const moved = result.moved.find((m) => m.targetMessageId === message.MessageId);
      expect(message.Attributes?.MessageDeduplicationId).toBe(redriveDeduplicationId(moved?.messageId ?? ''));
      expect(message.Attributes?.MessageDeduplicationId).not.toBe(
        deduplicationIdOf(JSON.parse(message.Body ?? '{}') as JobEnvelope),
      );
    }
    expect(await depth(dlq)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('FIFO: a group stops at its first message that is not selected; other groups move', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const sent = [
      envelope('orders.capture', 'u1-a', 'o-1', 'user-1'),
      envelope('orders.refund', 'u1-b', 'o-2', 'user-1'),
      envelope('orders.refund', 'u2-a', 'o-3', 'user-2'),
    ];
    for (const e of sent) await emulator.send(queue, e, e.partitionkey);
    await drain(queue, worker(queue, dlq, jobs()));

    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { reasons: ['attempts-used-up*'] },
      ...FAST,
    });

    expect(result.moved.map((m) => m.jobId)).toEqual(['u2-a']);
    expect(result.skipped.map((s) => [s.jobId, s.why])).toEqual([['u1-a', 'not-selected']]);
    // u1-b matches, but moving it ahead of u1-a would run user-1 out of order: it stays.
    expect(result.notRead).toBe(1);
    const left = await takeAll(dlq);
    expect(left.map((m) => JSON.parse(m.Body ?? '{}').id)).toEqual(['u1-a', 'u1-b']);
  });

  it('deletes only the messages whose send succeeded when SendMessageBatch fails in part', async () => {
    const { queue, dlq } = await standardFixture();
    const sqs = failingSends(emulator.sqs, (entry) => entry.MessageBody?.includes('"cap-2"') === true);
    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { reasons: ['PermanentError'] },
      ...FAST,
    });

    expect(result.moved.map((m) => m.jobId).sort()).toEqual(['cap-1', 'cap-3']);
    expect(result.failed.map((f) => [f.jobId, f.code, f.senderFault])).toEqual([
      ['cap-2', 'InternalError', false],
    ]);
    expect((await takeAll(queue)).map((m) => JSON.parse(m.Body ?? '{}').id).sort()).toEqual([
      'cap-1',
      'cap-3',
    ]);
    const left = await readDeadLetters({ sqs: emulator.sqs, queueUrl: dlq.url, ...FAST });
    expect(left.messages.map((m) => m.job?.id ?? 'malformed').sort()).toEqual(
      ['cap-2', 'crash-1', 'malformed', 'ref-1'].sort(),
    );
  });

  it('deletes nothing when the whole SendMessageBatch request fails', async () => {
    const { queue, dlq } = await standardFixture();
    const sqs: OpsSqs = {
      send: (command: OpsSqsCommand) =>
        command instanceof SendMessageBatchCommand
          ? Promise.reject(Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET' }))
          : emulator.sqs.send(command as never),
    };
    const result = await redriveDeadLetters({ sqs, dlqUrl: dlq.url, targetUrl: queue.url, ...FAST });

    expect(result.moved).toEqual([]);
    expect(result.failed).toHaveLength(6);
    expect(result.failed[0]?.code).toBe('EndpointUnreachable');
    expect(await depth(dlq)).toEqual({ visible: 6, inFlight: 0 });
    expect(await depth(queue)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('FIFO: a failed send blocks the rest of its group, so the group never runs out of order', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const sent = [
      envelope('orders.capture', 'u1-a', 'o-1', 'user-1'),
      envelope('orders.capture', 'u1-b', 'o-2', 'user-1'),
      envelope('orders.capture', 'u2-a', 'o-3', 'user-2'),
    ];
    for (const e of sent) await emulator.send(queue, e, e.partitionkey);
    await drain(queue, worker(queue, dlq, jobs()));
    const sqs = failingSends(emulator.sqs, (entry) => entry.MessageBody?.includes('"u1-a"') === true);

    const result = await redriveDeadLetters({ sqs, dlqUrl: dlq.url, targetUrl: queue.url, ...FAST });

    expect(result.moved.map((m) => m.jobId)).toEqual(['u2-a']);
    expect(result.failed.map((f) => f.jobId)).toEqual(['u1-a']);
    expect((await takeAll(queue)).map((m) => JSON.parse(m.Body ?? '{}').id)).toEqual(['u2-a']);
    expect((await takeAll(dlq)).map((m) => JSON.parse(m.Body ?? '{}').id)).toEqual(['u1-a', 'u1-b']);
  });

  it('does not move again a job that comes back to the DLQ during the redrive', async () => {
    const { queue, dlq } = await standardFixture();
    const sqs = bouncingTarget(dlq);
    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { jobIds: ['cap-1'] },
      ...FAST,
    });
    expect(result.moved.map((m) => m.jobId)).toEqual(['cap-1']);
    expect(result.skipped.filter((s) => s.why === 'came-back').map((s) => s.jobId)).toEqual(['cap-1']);
    expect(result.seenMessageIds).not.toContain(result.skipped.find((s) => s.why === 'came-back')?.messageId);
  });
});

describe('verify (verifyRedrive)', () => {
  it('reports the redriven jobs that came back to the DLQ, and only those', async () => {
    const { queue, dlq } = await standardFixture();
    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { reasons: ['PermanentError'] },
      ...FAST,
    });
    expect(result.moved).toHaveLength(3);
    // The fix covers o-1 and o-3; o-2 still does not exist.
    await drain(queue, worker(queue, dlq, jobs({ fixed: new Set(['o-1', 'o-3']) })));

    const verify = await verifyRedrive({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      redriven: result.moved,
      exclude: result.seenMessageIds,
      ...FAST,
    });

    expect(verify.redrivenJobs).toBe(3);
    expect(verify.cameBack.map((c) => [c.redriven.jobId, c.reason, c.errorMessage])).toEqual([
      ['cap-2', 'PermanentError', 'order o-2 does not exist'],
    ]);
    expect(verify.cameBack[0]?.messageId).not.toBe(result.moved.find((m) => m.jobId === 'cap-2')?.messageId);
    expect(verify.targetPending).toBe(0);
    expect(verify.read).toBe(4);
    expect(await depth(dlq)).toEqual({ visible: 4, inFlight: 0 });
  });

  it('reports nothing when every redriven job succeeded', async () => {
    const { queue, dlq } = await standardFixture();
    const result = await redriveDeadLetters({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { jobTypes: ['orders.refund'] },
      ...FAST,
    });
    await drain(queue, worker(queue, dlq, jobs({ fixed: new Set(['o-9']) })));
    const verify = await verifyRedrive({
      sqs: emulator.sqs,
      dlqUrl: dlq.url,
      redriven: result.moved,
      exclude: result.seenMessageIds,
      ...FAST,
    });
    expect(verify.redrivenJobs).toBe(1);
    expect(verify.cameBack).toEqual([]);
  });
});

/** The operator's clock, `skewMs` off SQS's (here: the emulator's, which is this process's). */
const SKEWED_CLOCKS = [
  ['90 s fast', 90_000],
  ['90 s slow', -90_000],
] as const;

/**
 * Another reader (a `dlq list` in a second terminal) holds the first message of `queue` that
 * `pick` accepts, so that a redrive meanwhile cannot read it; every other message received is
 * made visible again. Returns the held message.
 */
async function holdOne(queue: EmulatedQueue, pick: (message: Message) => boolean): Promise<Message> {
  const out = await emulator.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 300,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  const messages = out.Messages ?? [];
  const held = messages.find(pick);
  for (const message of messages) {
    if (message !== held) await makeVisible(queue, message);
  }
  if (held === undefined) throw new Error('no message to hold');
  return held;
}

async function makeVisible(queue: EmulatedQueue, message: Message): Promise<void> {
  await emulator.sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queue.url,
      ReceiptHandle: message.ReceiptHandle,
      VisibilityTimeout: 0,
    }),
  );
}

const jobIdOf = (message: Message): unknown => JSON.parse(message.Body ?? '{}').id;

describe("verify with the operator clock off SQS's (matching by identity, not by this clock)", () => {
  it.each(SKEWED_CLOCKS)(
    'worker path, clock %s: a job the worker dead-letters again is reported; a dead letter of a redriven job that was not redriven is not',
    async (_clock, skewMs) => {
      const now = () => Date.now() + skewMs;
      const { queue, dlq } = await emulator.createQueuePair('orders', false);
      await emulator.send(queue, envelope('orders.capture', 'cap-2', 'o-2'));
      // The same job sent twice (a producer retry): two dead letters of one job, from two source messages.
      await emulator.send(queue, envelope('orders.capture', 'dup-1', 'o-7'));
      await emulator.send(queue, envelope('orders.capture', 'dup-1', 'o-7'));
      await drain(queue, worker(queue, dlq, jobs()));
      const held = await holdOne(dlq, (m) => jobIdOf(m) === 'dup-1');

      const result = await redriveDeadLetters({
        sqs: emulator.sqs,
        dlqUrl: dlq.url,
        targetUrl: queue.url,
        now,
        ...FAST,
      });
      expect(result.moved.map((m) => m.jobId).sort()).toEqual(['cap-2', 'dup-1']);
      await makeVisible(dlq, held);
      // The fix covers o-7; o-2 still does not exist: cap-2 fails again at once, with fresh evidence.
      await drain(queue, worker(queue, dlq, jobs({ fixed: new Set(['o-7']) })));

      const verify = await verifyRedrive({
        sqs: emulator.sqs,
        dlqUrl: dlq.url,
        targetUrl: queue.url,
        redriven: result.moved,
        exclude: result.seenMessageIds,
        now,
        ...FAST,
      });

      const capture = result.moved.find((m) => m.jobId === 'cap-2');
      expect(verify.cameBack.map((c) => [c.redriven.jobId, c.reason, c.errorMessage])).toEqual([
        ['cap-2', 'PermanentError', 'order o-2 does not exist'],
      ]);
      expect(verify.cameBack[0]?.matchedBy).toBe('source-message-id');
      expect(verify.cameBack[0]?.redriven.targetMessageId).toBe(capture?.targetMessageId);
      expect(verify.cameBack[0]?.messageId).not.toBe(capture?.targetMessageId);
      // The other dead letter of dup-1 is still there, and is not a return.
      expect(verify.read).toBe(2);
      expect(verify.targetPending).toBe(0);
    },
  );

  it.each(SKEWED_CLOCKS)(
    'redrive-policy path, clock %s: a redriven message SQS moves back (same message id, no evidence) is reported; an older copy of its job is not',
    async (_clock, skewMs) => {
      const now = () => Date.now() + skewMs;
      const { queue, dlq } = await emulator.createQueuePair('orders', false);
      await emulator.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: queue.url,
          Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 1 }) },
        }),
      );
      // Two dead letters of one job without evidence (moved by maxReceiveCount): the older one is
      // held by another reader during the redrive, the newer one is redriven.
      const body = JSON.stringify(envelope('orders.capture', 'crash-2', 'o-5'));
      await emulator.sqs.send(new SendMessageCommand({ QueueUrl: dlq.url, MessageBody: body }));
      const held = await holdOne(dlq, () => true);
      await untilClockPasses(Number(held.Attributes?.SentTimestamp));
      await emulator.sqs.send(new SendMessageCommand({ QueueUrl: dlq.url, MessageBody: body }));

      const result = await redriveDeadLetters({
        sqs: emulator.sqs,
        dlqUrl: dlq.url,
        targetUrl: queue.url,
        now,
        ...FAST,
      });
      expect(result.moved.map((m) => m.jobId)).toEqual(['crash-2']);
      await makeVisible(dlq, held);
      // The redriven job crashes (no answer, the visibility timeout runs out): received once more
      // than maxReceiveCount, SQS moves it to the DLQ with its message id.
      const copy = await emulator.receive(queue);
      expect(copy.map((m) => m.MessageId)).toEqual([result.moved[0]?.targetMessageId]);
      await makeVisible(queue, copy[0] as Message);
      expect(await emulator.receive(queue)).toEqual([]);

      const verify = await verifyRedrive({
        sqs: emulator.sqs,
        dlqUrl: dlq.url,
        targetUrl: queue.url,
        redriven: result.moved,
        exclude: result.seenMessageIds,
        now,
        ...FAST,
      });

      expect(verify.read).toBe(2);
      expect(verify.cameBack.map((c) => [c.redriven.jobId, c.messageId, c.reason, c.matchedBy])).toEqual([
        ['crash-2', result.moved[0]?.targetMessageId, NO_EVIDENCE_REASON, 'message-id'],
      ]);
    },
  );

  it('a job that comes back during the redrive is not moved again, with the clock 90 s fast', async () => {
    const { queue, dlq } = await standardFixture();
    const sqs = bouncingTarget(dlq);
    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: dlq.url,
      targetUrl: queue.url,
      filter: { jobIds: ['cap-1'] },
      max: 5,
      now: () => Date.now() + 90_000,
      ...FAST,
    });
    expect(result.moved.map((m) => m.jobId)).toEqual(['cap-1']);
    expect(result.skipped.filter((s) => s.why === 'came-back').map((s) => s.jobId)).toEqual(['cap-1']);
  });
});

/** Waits (on the clock itself, not a guess) until this clock, which the emulator uses, is past `ms`. */
async function untilClockPasses(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe('refusals', () => {
  it('refuses a FIFO DLQ with a standard target, and the DLQ as its own target, before reading anything', async () => {
    const fifoDlq = await emulator.createQueue('booking-dlq', true);
    const standard = await emulator.createQueue('orders', false);
    await emulator.send(fifoDlq, envelope('orders.capture', 'x-1', 'o-1', 'u'), 'u');
    await expect(
      redriveDeadLetters({ sqs: emulator.sqs, dlqUrl: fifoDlq.url, targetUrl: standard.url, ...FAST }),
    ).rejects.toThrow(QueueMismatchError);
    await expect(
      redriveDeadLetters({ sqs: emulator.sqs, dlqUrl: fifoDlq.url, targetUrl: standard.url, ...FAST }),
    ).rejects.toThrow(/FIFO queue but the target .* is a standard queue/);
    await expect(
      redriveDeadLetters({ sqs: emulator.sqs, dlqUrl: fifoDlq.url, targetUrl: fifoDlq.url, ...FAST }),
    ).rejects.toMatchObject({ code: 'SameQueue' });
    expect(await depth(fifoDlq)).toEqual({ visible: 1, inFlight: 0 });
  });

  it('names a queue that does not exist, an invalid URL and an unreachable endpoint', async () => {
    const dlq = await emulator.createQueue('orders-dlq', false);
    const missing = dlq.url.replace(/orders-dlq-\d+$/, 'no-such-queue');
    await expect(readDeadLetters({ sqs: emulator.sqs, queueUrl: missing, ...FAST })).rejects.toThrow(
      QueueNotFoundError,
    );
    await expect(
      redriveDeadLetters({ sqs: emulator.sqs, dlqUrl: dlq.url, targetUrl: 'orders-queue', ...FAST }),
    ).rejects.toThrow(InvalidQueueUrlError);
    const nowhere = new SQSClient({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    await expect(
      readDeadLetters({ sqs: nowhere, queueUrl: 'http://127.0.0.1:9/000000000000/orders-dlq', ...FAST }),
    ).rejects.toThrow(SqsUnreachableError);
    nowhere.destroy();
  });
});

/**
 * Wraps a client so that SendMessageBatch entries matching `fails` come back in `Failed`
 * (InternalError, not a sender fault) while the others are really sent.
 */
function failingSends(
  sqs: SQSClient,
  fails: (entry: NonNullable<SendMessageBatchCommandInput['Entries']>[number]) => boolean,
): OpsSqs {
  return {
    async send(command: OpsSqsCommand) {
      if (!(command instanceof SendMessageBatchCommand)) return sqs.send(command as never);
      const entries = command.input.Entries ?? [];
      const failing = entries.filter(fails);
      const passing = entries.filter((e) => !fails(e));
      const out =
        passing.length === 0
          ? { Successful: [], Failed: [] }
          : await sqs.send(new SendMessageBatchCommand({ ...command.input, Entries: passing }));
      return {
        Successful: out.Successful ?? [],
        Failed: [
          ...(out.Failed ?? []),
          ...failing.map((e) => ({
            Id: e.Id,
            Code: 'InternalError',
            SenderFault: false,
            Message: 'injected',
          })),
        ],
      };
    },
  };
}
