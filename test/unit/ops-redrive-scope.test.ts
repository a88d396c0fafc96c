/**
 * `redriveScope` (lib/ops/redrive/scope.ts): what a confirmed redrive moves, as its dry run can tell, in
 * the words the console shows before the operator confirms. The runs themselves (console and CLI
 * moving the same messages) are in test/integration/console-redrive.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { describeFilter } from '../../lib/ops/filters.ts';
import type { QueueInfo } from '../../lib/ops/queue.ts';
import { type RedriveItem, type RedriveResult, redriveScope } from '../../lib/ops/redrive/index.ts';

function queue(name: string, fifo: boolean, approximateVisible: number): QueueInfo {
  return {
    url: `http://sqs.local/000000000000/${name}`,
    name,
    arn: undefined,
    fifo,
    contentBasedDeduplication: false,
    visibilityTimeoutSeconds: 30,
    approximateVisible,
    approximateNotVisible: 0,
    approximateDelayed: 0,
    redrivePolicy: undefined,
  };
}

function item(n: number, group: string | undefined): RedriveItem {
  return {
    messageId: `m-${n}`,
    jobId: `job-${n}`,
    jobType: 'booking.reserve-inventory',
    reason: 'OutOfStockError',
    errorName: 'OutOfStockError',
    messageGroupId: group,
    jobKey: `["test","job-${n}"]`,
  };
}

/** A dry run's result that selected `groups` (one message each on FIFO) of a DLQ reporting `visible`. */
function dryRun(options: {
  fifo: boolean;
  visible: number;
  groups: readonly (string | undefined)[];
  filter?: Parameters<typeof describeFilter>[0];
  max?: number;
  dryRun?: boolean;
}): RedriveResult {
  const selected = options.groups.map((g, i) => item(i, g));
  return {
    dryRun: options.dryRun ?? true,
    plan: {
      dlq: queue('dlq', options.fifo, options.visible),
      target: queue('queue', options.fifo, 0),
      filter: describeFilter(options.filter ?? {}),
      max: options.max,
      warnings: [],
    },
    selected,
    moved: [],
    failed: [],
    notDeleted: [],
    skipped: [],
    read: selected.length,
    stoppedBy: 'end',
    notRead: Math.max(0, options.visible - selected.length),
    release: { released: selected.length, failed: [] },
    seenMessageIds: selected.map((s) => s.messageId),
    startedAtMs: 0,
  };
}

describe('redriveScope', () => {
  it('FIFO: names the messages behind each selected group head, which the dry run could not read', () => {
    const scope = redriveScope(
      dryRun({ fifo: true, visible: 7, groups: ['u1', 'u2'], filter: { reasons: ['OutOfStockError'] } }),
    );
    expect(scope).toEqual({
      selected: 2,
      groups: 2,
      behindGroupHeads: 5,
      text:
        'Moves the 2 messages selected, each the first of its message group (2 groups). The DLQ holds about ' +
        '5 messages more that a dry run cannot read (a FIFO group shows one message at a time): those behind ' +
        'the selected ones move too, in group order, each that matches reason OutOfStockError; a group stops ' +
        'at its first message that does not.',
    });
  });

  it('FIFO without a filter, nothing unread, and a limit', () => {
    expect(redriveScope(dryRun({ fifo: true, visible: 1, groups: ['u1'], max: 4 })).text).toBe(
      'Moves the 1 message selected, each the first of its message group (1 group) (at most 4 in all). ' +
        'Any message behind them when it runs moves too, in group order.',
    );
  });

  it('standard: whatever matches when it runs', () => {
    const scope = redriveScope(
      dryRun({
        fifo: false,
        visible: 3,
        groups: [undefined, undefined, undefined],
        filter: { jobIds: ['a'] },
      }),
    );
    expect(scope).toEqual({
      selected: 3,
      groups: 0,
      behindGroupHeads: 0,
      text: 'Moves every message that matches job id a when it runs: the 3 messages selected now, and any that arrive meanwhile.',
    });
  });

  it('refuses a result that is not a dry run', () => {
    expect(() => redriveScope(dryRun({ fifo: true, visible: 1, groups: ['u1'], dryRun: false }))).toThrow(
      RangeError,
    );
  });
});
