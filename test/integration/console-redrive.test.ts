/**
 * A redrive from the console and one from `sqs-jobs dlq redrive` move the same messages (both run
 * lib/ops/redrive/ with the same filter): on a FIFO DLQ with several messages per group, where
 * a dry run sees only the first message of each group, both move every message of every group,
 * in group order. The console's dry run says so before the operator confirms. On the embedded SQS
 * emulator (fauxqs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleBackend } from '../../lib/console/backend.ts';
import { runCli } from '../factories/cli.ts';
import {
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

/** Three users' bookings dead-lettered, several per user (message group). */
const PER_GROUP = { 'user-1': 3, 'user-2': 3, 'user-3': 2 } as const;
const TOTAL = 8;
const FILTER = { jobTypes: ['booking.reserve-inventory'] };

/** A FIFO queue whose FIFO DLQ holds {@link PER_GROUP}'s dead letters. */
async function seededPair() {
  const pair = await emulator.createQueuePair('booking', true);
  const { fifo } = await seedDeadLetters(
    emulator.sqs,
    { fifoUrl: pair.dlq.url, standardUrl: pair.dlq.url },
    PER_GROUP,
    0,
  );
  return { ...pair, seeded: fifo };
}

/** Bodies per group, in order. */
function bodies(messages: readonly SeededDeadLetter[]): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(byGroup(messages)).map(([g, list]) => [g, list.map((m) => m.body)]),
  );
}

describe('a FIFO redrive: the console moves what the CLI moves', () => {
  it('moves every message of every group, also those its dry run could not see, and says so first', async () => {
    const fromConsole = await seededPair();
    const backend = new ConsoleBackend({
      mode: 'endpoint',
      title: 'test',
      region: 'us-east-1',
      sqs: emulator.sqs,
      dynamodb: undefined,
      queues: [{ id: 'booking', url: fromConsole.queue.url, dlqUrl: fromConsole.dlq.url }],
      idempotencyTables: [],
      dlqWaitSeconds: 0,
    });
    const plan = await backend.redrive('booking', { dryRun: true, filter: FILTER });
    if (!plan.dryRun) throw new Error('expected a dry run');
    // A dry run holds what it reads: a group's later messages stay locked behind its first.
    expect(plan.selected).toBe(3);
    expect(plan.scope).toMatchObject({ selected: 3, groups: 3, behindGroupHeads: TOTAL - 3 });
    expect(plan.scope.text).toContain(
      'Moves the 3 messages selected, each the first of its message group (3 groups)',
    );
    expect(plan.scope.text).toContain(`about ${TOTAL - 3} messages more`);
    expect(plan.scope.text).toContain('those behind the selected ones move too, in group order');

    const done = await backend.redrive('booking', { dryRun: false, planId: plan.planId });
    if (done.dryRun) throw new Error('expected a redrive');
    expect(done.moved).toHaveLength(TOTAL);
    expect(done.dryRunSelected).toBe(3);
    expect(done.failed).toEqual([]);

    const fromCli = await seededPair();
    const cli = await runCli(
      [
        'dlq',
        'redrive',
        '--dlq-url',
        fromCli.dlq.url,
        '--target-url',
        fromCli.queue.url,
        '--job-type',
        'booking.reserve-inventory',
        '--yes',
        '--endpoint',
        emulator.endpoint,
        '--wait-seconds',
        '0',
      ],
      emulator.endpoint,
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`selected ${TOTAL}, moved ${TOTAL}`);

    // Both DLQs are empty; both targets hold every dead letter, each group in its order.
    for (const run of [fromConsole, fromCli]) {
      expect(await queueCounts(emulator.sqs, run.dlq.url)).toEqual({ visible: 0, inFlight: 0 });
      expect(bodies(await drainQueue(emulator.sqs, run.queue.url))).toEqual(bodies(run.seeded));
    }
  });

  it('on a standard DLQ says that a confirmed run moves whatever matches when it runs', async () => {
    const pair = await emulator.createQueuePair('payments', false);
    await seedDeadLetters(emulator.sqs, { fifoUrl: pair.dlq.url, standardUrl: pair.dlq.url }, {}, 2);
    const backend = new ConsoleBackend({
      mode: 'endpoint',
      title: 'test',
      region: 'us-east-1',
      sqs: emulator.sqs,
      dynamodb: undefined,
      queues: [{ id: 'payments', url: pair.queue.url, dlqUrl: pair.dlq.url }],
      idempotencyTables: [],
      dlqWaitSeconds: 0,
    });
    const plan = await backend.redrive('payments', { dryRun: true, filter: {} });
    if (!plan.dryRun) throw new Error('expected a dry run');
    expect(plan.scope.text).toBe(
      'Moves every message when it runs: the 2 messages selected now, and any that arrive meanwhile.',
    );
  });
});
