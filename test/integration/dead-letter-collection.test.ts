/**
 * The report's read of the dead-letter queues (lib/sample/workload/dead-letters.ts) on the embedded
 * SQS emulator (fauxqs): it sees every dead letter and leaves every one of them in its DLQ,
 * visible, with its body and evidence: the standard DLQ's messages released, the FIFO DLQ's
 * groups rotated through, each in its order. Afterwards `readDeadLetters` / `sqs-jobs dlq list`
 * see them all, and a failure between a copy and its delete leaves a duplicate, never a loss.
 */
import type { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDeadLetters } from '../../lib/ops/dlq-reader.ts';
import type { OpsSqs, OpsSqsCommand } from '../../lib/ops/queue.ts';
import { collectDeadLetters, readFifoQueueThrough } from '../../lib/sample/workload/dead-letters.ts';
import { runCli } from '../factories/cli.ts';
import {
  attributeMap,
  byGroup,
  drainQueue,
  queueCounts,
  type SeededDeadLetter,
  seedDeadLetters,
} from '../factories/dead-letters.ts';
import { type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

/** Short polls on the emulator; two empty receives end a read. */
const FAST = { waitTimeSeconds: 0, emptyReceivesToStop: 2, holdSeconds: 60 } as const;
const GROUPS = { 'user-1': 4, 'user-2': 3, 'user-3': 1 } as const;

async function queues() {
  const fifo = await emulator.createQueue('booking-dlq', true);
  const standard = await emulator.createQueue('payments-dlq', false);
  return { fifoUrl: fifo.url, standardUrl: standard.url };
}

/** The same messages (bodies and evidence), each group in its order. */
function expectSameFifo(found: readonly SeededDeadLetter[], sent: readonly SeededDeadLetter[]): void {
  expect(found.length).toBe(sent.length);
  expect(byGroup(found)).toEqual(byGroup(sent));
}

describe('collectDeadLetters', () => {
  it.each([
    ['with the expected counts', true],
    ['without counts (until receives bring nothing new)', false],
  ])(
    'reads every dead letter and leaves all of them there, visible, each FIFO group in order (%s)',
    async (_, withCounts) => {
      const { sqs } = emulator;
      const urls = await queues();
      const sent = await seedDeadLetters(sqs, urls, GROUPS, 5);

      const collection = await collectDeadLetters(
        sqs,
        { booking: urls.fifoUrl, payments: urls.standardUrl },
        withCounts ? { booking: 8, payments: 5 } : {},
        FAST,
      );
      // The report saw everything: bodies and evidence, the FIFO groups in order.
      const seen = (queue: string) =>
        collection.deadLetters
          .filter((d) => d.queue === queue)
          .map((d) => ({ body: d.body, attributes: d.attributes }));
      const values = (list: readonly SeededDeadLetter[]) =>
        list.map((m) => ({
          body: m.body,
          attributes: Object.fromEntries(
            Object.entries(m.attributes).map(([k, v]) => [k, v.replace(/^\w+:/, '')]),
          ),
        }));
      expect(seen('booking').sort(byBody)).toEqual(values(sent.fifo).sort(byBody));
      expect(groupOrder(seen('booking'))).toEqual(groupOrder(values(sent.fifo)));
      expect(seen('payments').sort(byBody)).toEqual(values(sent.standard).sort(byBody));
      expect(collection.deadLetters.filter((d) => d.queue === 'booking').every((d) => d.copyMessageId)).toBe(
        true,
      );
      expect(collection.notes.join('\n')).toMatch(
        /booking DLQ \(FIFO\): read through by rotation: each of its 8 dead letters/,
      );

      // Left as an operator finds them: every message visible, none in flight.
      expect(await queueCounts(sqs, urls.fifoUrl)).toEqual({ visible: 8, inFlight: 0 });
      expect(await queueCounts(sqs, urls.standardUrl)).toEqual({ visible: 5, inFlight: 0 });
      // `dlq list` reads the whole standard DLQ, and the FIFO DLQ's groups (their first messages: SQS
      // locks the rest of a group while one is held), every message counted.
      const list = await runCli(
        ['dlq', 'list', '--dlq-url', urls.standardUrl, '--json', '--wait-seconds', '0'],
        emulator.endpoint,
      );
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toMatchObject({ read: 5, notRead: 0, total: 5 });
      const standardRead = await readDeadLetters({ sqs, queueUrl: urls.standardUrl, ...FAST });
      expect(
        standardRead.messages
          .map((m) => ({ body: m.body, attributes: attributeMap(m.messageAttributes) }))
          .sort(byBody),
      ).toEqual(sent.standard.map((m) => ({ body: m.body, attributes: m.attributes })).sort(byBody));
      const fifoList = await runCli(
        ['dlq', 'list', '--dlq-url', urls.fifoUrl, '--json', '--wait-seconds', '0'],
        emulator.endpoint,
      );
      expect(fifoList.code).toBe(0);
      const fifoJson = JSON.parse(fifoList.stdout) as { read: number; notRead: number };
      expect(fifoJson.read).toBeGreaterThanOrEqual(Object.keys(GROUPS).length);
      expect(fifoJson.read + fifoJson.notRead).toBe(8);

      // A second collection (another report) reads the same again.
      const again = await collectDeadLetters(sqs, { booking: urls.fifoUrl }, {}, FAST);
      expect(groupOrder(again.deadLetters)).toEqual(groupOrder(sent.fifo));
      expect(again.deadLetters).toHaveLength(8);

      // What the FIFO DLQ holds, taken off in order: the same messages, same evidence (data types
      // included), each group in the order it was dead-lettered.
      expectSameFifo(await drainQueue(sqs, urls.fifoUrl), sent.fifo);
      expect((await drainQueue(sqs, urls.standardUrl)).sort(byBody)).toEqual([...sent.standard].sort(byBody));
    },
  );

  it('a queue expected to hold nothing is not read', async () => {
    const urls = await queues();
    const collection = await collectDeadLetters(
      emulator.sqs,
      { booking: urls.fifoUrl },
      { booking: 0 },
      FAST,
    );
    expect(collection).toEqual({ deadLetters: [], notes: [] });
  });
});

/** An SQS client whose n-th call of a kind fails (before reaching SQS). */
function failing(
  sqs: SQSClient,
  kind: 'SendMessageBatchCommand' | 'DeleteMessageBatchCommand',
  nth: number,
): OpsSqs {
  let calls = 0;
  return {
    send(command: OpsSqsCommand) {
      if (command.constructor.name === kind && ++calls === nth) {
        return Promise.reject(
          Object.assign(new Error('injected'), { name: 'InternalError', $fault: 'server' }),
        );
      }
      return sqs.send(command as SendMessageBatchCommand);
    },
  };
}

describe('readFifoQueueThrough when a call fails', () => {
  it('a delete that fails after its copy was sent leaves a duplicate, never a loss', async () => {
    const urls = await queues();
    const sent = await seedDeadLetters(emulator.sqs, urls, GROUPS, 0);
    const read = await readFifoQueueThrough({
      sqs: failing(emulator.sqs, 'DeleteMessageBatchCommand', 2),
      queueUrl: urls.fifoUrl,
      ...FAST,
    });
    expect(read.problems).toHaveLength(1);
    expect(read.problems[0]).toMatch(
      /could not be deleted after its copy .* was sent .*it is in the queue twice, and the group's later messages were not read/,
    );
    // Every group but that one was read through.
    expect(read.messages.length).toBeLessThan(sent.fifo.length);
    expect(read.groupsReadThrough).toBe(Object.keys(GROUPS).length - 1);
    const left = await drainQueue(emulator.sqs, urls.fifoUrl);
    expect(left).toHaveLength(sent.fifo.length + 1);
    expect(new Set(left.map((m) => m.body))).toEqual(new Set(sent.fifo.map((m) => m.body)));
    // The other groups kept their order.
    const failedGroup = /group (\S+):/.exec(read.problems[0] ?? '')?.[1];
    for (const [group, messages] of Object.entries(byGroup(left))) {
      if (group !== failedGroup) expect(messages).toEqual(byGroup(sent.fifo)[group]);
    }
  });

  it('a copy that cannot be sent leaves the message (and the rest of its group) where it was', async () => {
    const urls = await queues();
    const sent = await seedDeadLetters(emulator.sqs, urls, GROUPS, 0);
    const read = await readFifoQueueThrough({
      sqs: failing(emulator.sqs, 'SendMessageBatchCommand', 1),
      queueUrl: urls.fifoUrl,
      ...FAST,
    });
    expect(read.problems.join('\n')).toMatch(
      /the copy of message \S+ could not be sent .*stay where they were/,
    );
    expect(await queueCounts(emulator.sqs, urls.fifoUrl)).toEqual({ visible: 8, inFlight: 0 });
    const left = await drainQueue(emulator.sqs, urls.fifoUrl);
    expect(left.map((m) => m.body).sort()).toEqual(sent.fifo.map((m) => m.body).sort());
    // The group whose first copy failed was not touched: still in its order.
    const failedGroup = /group (\S+):/.exec(read.problems[0] ?? '')?.[1] ?? '';
    expect(byGroup(left)[failedGroup]).toEqual(byGroup(sent.fifo)[failedGroup]);
  });
});

/** Per FIFO group (the job id's prefix), the bodies in the order given. */
function groupOrder(list: readonly { body: string }[]): Record<string, string[]> {
  const groups: Record<string, string[]> = {};
  for (const { body } of list) {
    const id = (JSON.parse(body) as { id: string }).id;
    const group = id.replace(/-\d+$/, '');
    groups[group] = [...(groups[group] ?? []), id];
  }
  return groups;
}

function byBody(a: { body: string }, b: { body: string }): number {
  return a.body < b.body ? -1 : a.body > b.body ? 1 : 0;
}
