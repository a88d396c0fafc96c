/**
 * The event source mapping's FIFO receive mode for emulators whose group lock does not hold
 * (`serializeFifoReceives`, used by the soak and npm start against an external SQS endpoint such
 * as moto): receives of a FIFO queue go one call at a time across the pollers, one message per
 * call, short polls standing in for the long poll; standard queues keep their long polls.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { EventSourceMappingPoller, emptyStats } from '../../lib/local/event-source-mapping.ts';
import type { FunctionHost } from '../../lib/local/function-host.ts';

interface ReceiveCall {
  readonly max: number | undefined;
  readonly wait: number | undefined;
}

/** A fake SQS: hands out `messages` one receive at a time, records every receive and how many overlapped. */
function fakeSqs(messages: Message[], receiveMs = 5) {
  const calls: ReceiveCall[] = [];
  let inFlight = 0;
  let maxOverlap = 0;
  const deleted: string[] = [];
  const client = {
    async send(command: { input: Record<string, unknown>; constructor: { name: string } }) {
      if (command.constructor.name === 'ReceiveMessageCommand') {
        const max = command.input.MaxNumberOfMessages as number | undefined;
        const wait = command.input.WaitTimeSeconds as number | undefined;
        calls.push({ max, wait });
        inFlight += 1;
        maxOverlap = Math.max(maxOverlap, inFlight);
        await new Promise((r) => setTimeout(r, receiveMs));
        inFlight -= 1;
        return { Messages: messages.splice(0, max ?? 1) };
      }
      if (command.constructor.name === 'DeleteMessageBatchCommand') {
        const entries = command.input.Entries as { ReceiptHandle: string }[];
        deleted.push(...entries.map((e) => e.ReceiptHandle));
        return { Successful: entries.map((_, i) => ({ Id: String(i) })) };
      }
      throw new Error(`unexpected ${command.constructor.name}`);
    },
  };
  return { client, calls, deleted, maxOverlap: () => maxOverlap };
}

const message = (i: number, group: string): Message => ({
  MessageId: `m-${i}`,
  ReceiptHandle: `r-${i}`,
  Body: '{}',
  MD5OfBody: '',
  Attributes: {
    MessageGroupId: group,
    SequenceNumber: String(i),
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    ApproximateFirstReceiveTimestamp: '0',
    SenderId: 'x',
  },
});

const host = {
  invoke: async () => ({
    kind: 'success',
    payload: { batchItemFailures: [] },
    durationMs: 1,
    coldStart: false,
  }),
} as unknown as FunctionHost;

const pollers: EventSourceMappingPoller[] = [];
afterEach(async () => {
  await Promise.all(pollers.splice(0).map((p) => p.stop()));
});

function poller(url: string, sqs: ReturnType<typeof fakeSqs>, serializeFifoReceives: boolean) {
  const p = new EventSourceMappingPoller({
    mappingLogicalId: 'Mapping',
    functionLogicalId: 'Fn',
    queue: { url, arn: `arn:aws:sqs:us-east-1:000000000000:${url.split('/').pop()}` },
    host,
    sqs: sqs.client as never,
    region: 'us-east-1',
    batchSize: 10,
    maximumBatchingWindowSeconds: 0,
    reportBatchItemFailures: true,
    concurrency: 5,
    stats: emptyStats(),
    waitTimeSeconds: 1,
    serializeFifoReceives,
  });
  pollers.push(p);
  return p;
}

async function until(done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('serialized FIFO receives', () => {
  it('receives a FIFO queue one call and one message at a time across five pollers, with short polls', async () => {
    const messages = Array.from({ length: 12 }, (_, i) => message(i, `g-${i % 3}`));
    const sqs = fakeSqs(messages);
    poller('http://127.0.0.1:1/000000000000/jobs.fifo', sqs, true).start();
    await until(() => sqs.deleted.length === 12);
    expect(sqs.maxOverlap()).toBe(1);
    expect(sqs.calls.every((c) => c.max === 1 && c.wait === 0)).toBe(true);
  });

  it('leaves standard queues (and FIFO queues without the option) to concurrent long polls of up to 10', async () => {
    for (const [url, serialize] of [
      ['http://127.0.0.1:1/000000000000/jobs', true],
      ['http://127.0.0.1:1/000000000000/jobs.fifo', false],
    ] as const) {
      const sqs = fakeSqs(
        Array.from({ length: 30 }, (_, i) => message(i, `g-${i}`)),
        50,
      );
      poller(url, sqs, serialize).start();
      await until(() => sqs.deleted.length === 30);
      expect(sqs.maxOverlap()).toBeGreaterThan(1);
      expect(sqs.calls.every((c) => c.max === 10 && c.wait === 1)).toBe(true);
    }
  });
});
