/**
 * Redrive against an in-memory SQS that, like SQS and unlike the emulator, returns several
 * messages of a FIFO group in one receive: order per group, one message per group per request,
 * failures blocking the rest of their group, chunking, delete failures and the release.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { runSqsJobsCli } from '../../lib/cli/index.ts';
import { jobKeyOf, toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import { DeadLetterReader } from '../../lib/ops/dlq-reader.ts';
import { renderRedrive } from '../../lib/ops/format.ts';
import type { OpsSqs, OpsSqsCommand } from '../../lib/ops/queue.ts';
import {
  type MovedItem,
  redriveDeadLetters,
  redriveDeduplicationId,
  returnMatcher,
} from '../../lib/ops/redrive/index.ts';

interface Stored {
  readonly id: string;
  readonly body: string;
  readonly group: string | undefined;
  receipt: string | undefined;
}

const DLQ = 'https://sqs.eu-west-1.amazonaws.com/1/jobs-dlq.fifo';
const TARGET = 'https://sqs.eu-west-1.amazonaws.com/1/jobs.fifo';
const STD_DLQ = 'https://sqs.eu-west-1.amazonaws.com/1/jobs-dlq';
const STD_TARGET = 'https://sqs.eu-west-1.amazonaws.com/1/jobs';

/** A tiny SQS: per queue an ordered list; a receive returns every visible message of unlocked groups. */
class MemorySqs implements OpsSqs {
  readonly queues = new Map<string, Stored[]>();
  readonly sendRequests: SendMessageBatchRequestEntry[][] = [];
  released: string[] = [];
  extended: string[] = [];
  failSend: (entry: SendMessageBatchRequestEntry) => boolean = () => false;
  failDelete: (id: string) => boolean = () => false;
  #n = 0;

  constructor(urls: string[]) {
    for (const url of urls) this.queues.set(url, []);
  }

  put(url: string, id: string, group?: string): void {
    this.queues
      .get(url)
      ?.push({ id, body: JSON.stringify({ id, source: '/t', type: 'jobs.run' }), group, receipt: undefined });
  }

  ids(url: string): string[] {
    return (this.queues.get(url) ?? []).map((m) => m.id);
  }

  async send(command: OpsSqsCommand): Promise<unknown> {
    if (command instanceof GetQueueAttributesCommand) {
      const url = command.input.QueueUrl as string;
      return {
        Attributes: {
          QueueArn: `arn:${url}`,
          FifoQueue: String(url.endsWith('.fifo')),
          ApproximateNumberOfMessages: String(this.queues.get(url)?.length ?? 0),
        },
      };
    }
    if (command instanceof ReceiveMessageCommand) {
      const list = this.queues.get(command.input.QueueUrl as string) ?? [];
      const locked = new Set(list.filter((m) => m.receipt !== undefined).map((m) => m.group));
      const out = list
        .filter((m) => m.receipt === undefined && (m.group === undefined || !locked.has(m.group)))
        .slice(0, command.input.MaxNumberOfMessages ?? 1);
      for (const m of out) m.receipt = `rh-${++this.#n}`;
      return {
        Messages: out.map((m) => ({
          MessageId: m.id,
          ReceiptHandle: m.receipt,
          Body: m.body,
          Attributes: m.group === undefined ? {} : { MessageGroupId: m.group },
        })),
      };
    }
    if (command instanceof SendMessageBatchCommand) {
      const entries = command.input.Entries ?? [];
      this.sendRequests.push(entries);
      const ok = entries.filter((e) => !this.failSend(e));
      for (const e of ok) {
        const id = `t-${JSON.parse(e.MessageBody ?? '{}').id}`;
        this.queues
          .get(command.input.QueueUrl as string)
          ?.push({ id, body: e.MessageBody ?? '', group: e.MessageGroupId, receipt: undefined });
      }
      return {
        Successful: ok.map((e) => ({ Id: e.Id, MessageId: `t-${JSON.parse(e.MessageBody ?? '{}').id}` })),
        Failed: entries
          .filter((e) => this.failSend(e))
          .map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false })),
      };
    }
    if (command instanceof DeleteMessageBatchCommand) {
      const list = this.queues.get(command.input.QueueUrl as string) ?? [];
      const successful: { Id?: string }[] = [];
      const failed: { Id?: string; Code: string; SenderFault: boolean }[] = [];
      for (const entry of command.input.Entries ?? []) {
        const index = list.findIndex((m) => m.receipt === entry.ReceiptHandle);
        if (index < 0 || this.failDelete(list[index]?.id ?? '')) {
          failed.push({ Id: entry.Id, Code: 'ReceiptHandleIsInvalid', SenderFault: true });
          continue;
        }
        list.splice(index, 1);
        successful.push({ Id: entry.Id });
      }
      return { Successful: successful, Failed: failed };
    }
    if (command instanceof ChangeMessageVisibilityBatchCommand) {
      const list = this.queues.get(command.input.QueueUrl as string) ?? [];
      for (const entry of command.input.Entries ?? []) {
        const m = list.find((s) => s.receipt === entry.ReceiptHandle);
        if (m && entry.VisibilityTimeout === 0) {
          m.receipt = undefined;
          this.released.push(m.id);
        } else if (m) {
          this.extended.push(m.id);
        }
      }
      return { Successful: (command.input.Entries ?? []).map((e) => ({ Id: e.Id })), Failed: [] };
    }
    throw new Error(`unexpected command ${(command as object).constructor.name}`);
  }
}

const FAST = { waitTimeSeconds: 0, emptyReceivesToStop: 1 } as const;

describe('redrive to a standard queue keeps the fair-queue tenant', () => {
  it('sends the DLQ MessageGroupId, else the envelope partitionkey, else no group', async () => {
    const sqs = new MemorySqs([STD_DLQ, STD_TARGET]);
    const put = (id: string, group: string | undefined, partitionkey?: string) =>
      sqs.queues.get(STD_DLQ)?.push({
        id,
        body: JSON.stringify({ id, source: '/t', type: 'jobs.run', partitionkey }),
        group,
        receipt: undefined,
      });
    put('grouped', 'tenant-a', 'tenant-a');
    put('envelope-only', undefined, 'tenant-b');
    put('plain', undefined);
    // Not a valid MessageGroupId (a space): SQS would refuse the entry, so it goes without a group.
    put('bad-key', undefined, 'tenant c');

    const result = await redriveDeadLetters({ sqs, dlqUrl: STD_DLQ, targetUrl: STD_TARGET, ...FAST });

    expect(result.failed).toEqual([]);
    const groups = Object.fromEntries(
      sqs.sendRequests.flat().map((e) => [JSON.parse(e.MessageBody ?? '{}').id, e.MessageGroupId]),
    );
    expect(groups).toEqual({
      grouped: 'tenant-a',
      'envelope-only': 'tenant-b',
      plain: undefined,
      'bad-key': undefined,
    });
    expect(sqs.sendRequests.flat().every((e) => e.MessageDeduplicationId === undefined)).toBe(true);
  });
});

describe('redrive on FIFO queues when a receive returns several messages of a group', () => {
  it('moves each group in DLQ order, one message per group per request', async () => {
    const sqs = new MemorySqs([DLQ, TARGET]);
    for (const [id, g] of [
      ['a1', 'A'],
      ['b1', 'B'],
      ['a2', 'A'],
      ['a3', 'A'],
      ['b2', 'B'],
    ] as const)
      sqs.put(DLQ, id, g);

    const result = await redriveDeadLetters({ sqs, dlqUrl: DLQ, targetUrl: TARGET, ...FAST });

    expect(result.moved.map((m) => m.jobId)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
    expect(sqs.ids(TARGET)).toEqual(['t-a1', 't-b1', 't-a2', 't-b2', 't-a3']);
    expect(sqs.ids(DLQ)).toEqual([]);
    for (const request of sqs.sendRequests) {
      const groups = request.map((e) => e.MessageGroupId);
      expect(new Set(groups).size).toBe(groups.length);
    }
    const first = sqs.sendRequests[0]?.[0];
    expect(first?.MessageDeduplicationId).toBe(redriveDeduplicationId('a1'));
  });

  it('stops a group at a failed send: the later messages of the group stay in the DLQ, other groups move', async () => {
    const sqs = new MemorySqs([DLQ, TARGET]);
    for (const [id, g] of [
      ['a1', 'A'],
      ['a2', 'A'],
      ['a3', 'A'],
      ['b1', 'B'],
    ] as const)
      sqs.put(DLQ, id, g);
    sqs.failSend = (e) => e.MessageBody?.includes('"a2"') === true;

    const result = await redriveDeadLetters({ sqs, dlqUrl: DLQ, targetUrl: TARGET, ...FAST });

    expect(result.moved.map((m) => m.jobId)).toEqual(['a1', 'b1']);
    expect(result.failed.map((f) => [f.jobId, f.code])).toEqual([
      ['a2', 'InternalError'],
      ['a3', 'GroupBlocked'],
    ]);
    expect(sqs.sendRequests.flat().some((e) => e.MessageBody?.includes('"a3"'))).toBe(false);
    expect(sqs.ids(DLQ)).toEqual(['a2', 'a3']);
    expect(sqs.released.sort()).toEqual(['a2', 'a3']);
    expect(result.release).toEqual({ released: 2, failed: [] });
  });

  it('skips the rest of a group behind a message the filter does not select', async () => {
    const sqs = new MemorySqs([DLQ, TARGET]);
    for (const [id, g] of [
      ['a1', 'A'],
      ['a2', 'A'],
      ['b1', 'B'],
    ] as const)
      sqs.put(DLQ, id, g);

    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: DLQ,
      targetUrl: TARGET,
      filter: { jobIds: ['a2', 'b1'] },
      ...FAST,
    });

    expect(result.moved.map((m) => m.jobId)).toEqual(['b1']);
    expect(result.skipped.map((s) => [s.jobId, s.why])).toEqual([
      ['a1', 'not-selected'],
      ['a2', 'group-blocked'],
    ]);
    expect(sqs.ids(DLQ)).toEqual(['a1', 'a2']);
    // The operator reads that a2 matched and did not move, and why; the counts add up.
    const text = renderRedrive(result);
    expect(text).toContain(
      'selected 1, moved 1, failed 0; left in the DLQ: 1 not selected, 1 matched but stuck behind their group',
    );
    expect(text).toContain(
      'not moved: 1 matching message, each behind an earlier message of its FIFO group that stays in the DLQ',
    );
    // Messages locked behind such a first one cannot even be read (SQS hands out a group in
    // order): the note says that any of them the filter matches did not move either.
    expect(renderRedrive({ ...result, notRead: 2 })).toContain(
      "note: about 2 messages in the DLQ were not read: on a FIFO queue a group's later messages stay locked behind its first ones that stay in the DLQ (not selected, or failed), so any of them the filter matches was not moved",
    );
  });

  it('sqs-jobs dlq redrive exits 1 when a message the filter selects stays behind its group', async () => {
    const sqs = new MemorySqs([DLQ, TARGET]);
    for (const [id, g] of [
      ['a1', 'A'],
      ['a2', 'A'],
      ['b1', 'B'],
    ] as const)
      sqs.put(DLQ, id, g);
    let stdout = '';
    let stderr = '';
    const code = await runSqsJobsCli(
      ['dlq', 'redrive', '--dlq-url', DLQ, '--target-url', TARGET, '--job-id', 'a2', '--job-id', 'b1'].concat(
        ['--yes', '--any-source-queue', '--wait-seconds', '0'],
      ),
      {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        stdinIsTTY: false,
        env: {},
        createSqs: () => sqs,
      },
    );
    expect({ code, stderr: stderr.split('\n').filter((l) => l.startsWith('error')) }).toEqual({
      code: 1,
      stderr: [],
    });
    expect(stdout).toContain('not moved: 1 matching message');
  });

  it('dry run: reports the same selection and sends, deletes nothing', async () => {
    const sqs = new MemorySqs([DLQ, TARGET]);
    for (const [id, g] of [
      ['a1', 'A'],
      ['a2', 'A'],
      ['b1', 'B'],
    ] as const)
      sqs.put(DLQ, id, g);
    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: DLQ,
      targetUrl: TARGET,
      filter: { jobIds: ['a2', 'b1'] },
      dryRun: true,
      ...FAST,
    });
    expect(result.selected.map((s) => s.jobId)).toEqual(['b1']);
    expect(result.skipped.map((s) => s.why)).toEqual(['not-selected', 'group-blocked']);
    expect(sqs.sendRequests).toEqual([]);
    expect(sqs.ids(DLQ)).toEqual(['a1', 'a2', 'b1']);
    expect(sqs.released.sort()).toEqual(['a1', 'a2', 'b1']);
  });
});

describe('redrive on standard queues', () => {
  it('sends in requests of at most 10, in DLQ order, without a message group', async () => {
    const sqs = new MemorySqs([STD_DLQ, STD_TARGET]);
    for (let i = 0; i < 25; i++) sqs.put(STD_DLQ, `j${i}`);
    const result = await redriveDeadLetters({ sqs, dlqUrl: STD_DLQ, targetUrl: STD_TARGET, ...FAST });
    expect(result.moved).toHaveLength(25);
    expect(sqs.sendRequests.map((r) => r.length)).toEqual([10, 10, 5]);
    expect(
      sqs.sendRequests
        .flat()
        .every((e) => e.MessageGroupId === undefined && e.MessageDeduplicationId === undefined),
    ).toBe(true);
    expect(sqs.ids(STD_TARGET)).toEqual(Array.from({ length: 25 }, (_, i) => `t-j${i}`));
  });

  it('reports a message sent but not deleted from the DLQ, and makes it visible again', async () => {
    const sqs = new MemorySqs([STD_DLQ, STD_TARGET]);
    for (const id of ['j1', 'j2']) sqs.put(STD_DLQ, id);
    sqs.failDelete = (id) => id === 'j2';
    const result = await redriveDeadLetters({ sqs, dlqUrl: STD_DLQ, targetUrl: STD_TARGET, ...FAST });
    expect(result.moved.map((m) => m.jobId)).toEqual(['j1']);
    expect(result.notDeleted.map((m) => [m.jobId, m.code])).toEqual([['j2', 'ReceiptHandleIsInvalid']]);
    expect(result.notDeleted[0]?.message).toMatch(/sent to the target as t-j2, but not deleted from the DLQ/);
    expect(sqs.ids(STD_TARGET)).toEqual(['t-j1', 't-j2']);
    expect(sqs.ids(STD_DLQ)).toEqual(['j2']);
    expect(sqs.released).toEqual(['j2']);
  });

  it('asks confirm with the plan and reads nothing when it says no', async () => {
    const sqs = new MemorySqs([STD_DLQ, STD_TARGET]);
    sqs.put(STD_DLQ, 'j1');
    let asked = '';
    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: STD_DLQ,
      targetUrl: STD_TARGET,
      filter: { jobTypes: ['jobs.*'] },
      confirm: (plan) => {
        asked = `${plan.filter} ${plan.dlq.approximateVisible}`;
        return false;
      },
      ...FAST,
    });
    expect(asked).toBe('job type jobs.* 1');
    expect(result.stoppedBy).toBe('declined');
    expect(result.read).toBe(0);
    expect(sqs.ids(STD_DLQ)).toEqual(['j1']);
  });

  it('stops after the current batch when aborted and releases what it holds', async () => {
    const sqs = new MemorySqs([STD_DLQ, STD_TARGET]);
    for (let i = 0; i < 30; i++) sqs.put(STD_DLQ, `j${i}`);
    const controller = new AbortController();
    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: STD_DLQ,
      targetUrl: STD_TARGET,
      filter: { jobIds: ['j0'] },
      signal: controller.signal,
      onProgress: () => controller.abort(),
      ...FAST,
    });
    expect(result.stoppedBy).toBe('aborted');
    expect(result.read).toBe(10);
    expect(result.moved.map((m) => m.jobId)).toEqual(['j0']);
    expect(sqs.released).toHaveLength(9);
    expect(sqs.ids(STD_DLQ)).toHaveLength(29);
  });
});

describe('DeadLetterReader', () => {
  it('renews holds past half their time so that a long read does not see its messages come back', async () => {
    const sqs = new MemorySqs([STD_DLQ]);
    for (let i = 0; i < 12; i++) sqs.put(STD_DLQ, `j${i}`);
    let now = 1_000_000;
    const reader = new DeadLetterReader({
      sqs,
      queueUrl: STD_DLQ,
      holdSeconds: 10,
      waitTimeSeconds: 0,
      now: () => now,
    });
    expect(await reader.receive()).toHaveLength(10);
    now += 4_000;
    expect(await reader.receive()).toHaveLength(2);
    expect(sqs.extended).toEqual([]);
    now += 2_000;
    expect(await reader.receive()).toEqual([]);
    // The first ten were held 6 s of 10: renewed; the last two (2 s) not yet.
    expect(sqs.extended).toEqual(Array.from({ length: 10 }, (_, i) => `j${i}`));
    expect(reader.heldCount).toBe(12);
    const release = await reader.releaseAll();
    expect(release).toEqual({ released: 12, failed: [] });
    expect(reader.heldCount).toBe(0);
  });
});

describe('returnMatcher: a redriven message come back, by identity and SQS timestamps only', () => {
  const body = (id: string) => JSON.stringify({ specversion: '1.0', id, source: '/t', type: 'jobs.run' });
  /** Redriven as `tgt-1`, sent after SQS time 5,000. */
  const moved: MovedItem = {
    messageId: 'dlq-1',
    jobId: 'j1',
    jobType: 'jobs.run',
    reason: 'PermanentError',
    errorName: 'PermanentError',
    messageGroupId: undefined,
    jobKey: jobKeyOf(body('j1')),
    targetMessageId: 'tgt-1',
    deduplicationId: undefined,
    sentAfterMs: 5_000,
  };
  const dlqMessage = (input: { id: string; job: string; sentAtMs?: number; sourceMessageId?: string }) =>
    toDeadLetterMessage({
      MessageId: input.id,
      ReceiptHandle: 'rh',
      Body: body(input.job),
      Attributes: input.sentAtMs === undefined ? {} : { SentTimestamp: String(input.sentAtMs) },
      MessageAttributes:
        input.sourceMessageId === undefined
          ? {}
          : { SourceMessageId: { DataType: 'String', StringValue: input.sourceMessageId } },
    });
  const returnOf = returnMatcher([moved]);
  const match = (input: Parameters<typeof dlqMessage>[0]) => {
    const found = returnOf(dlqMessage(input));
    return found === undefined ? undefined : [found.item.messageId, found.matchedBy];
  };

  it('the worker dead-lettered the copy: its SourceMessageId is the target message id, whatever the times', () => {
    expect(match({ id: 'new-1', job: 'j1', sentAtMs: 1, sourceMessageId: 'tgt-1' })).toEqual([
      'dlq-1',
      'source-message-id',
    ]);
  });

  it('the redrive policy moved the copy: same message id, no evidence, whatever the times', () => {
    expect(match({ id: 'tgt-1', job: 'j1', sentAtMs: 1 })).toEqual(['dlq-1', 'message-id']);
  });

  it('evidence naming another source message is another delivery of the job, not a return', () => {
    expect(match({ id: 'new-2', job: 'j1', sentAtMs: 9_000, sourceMessageId: 'src-other' })).toBeUndefined();
  });

  it('without identity: the same job entered the DLQ no earlier than the copy was sent, on SQS clock', () => {
    expect(match({ id: 'new-3', job: 'j1', sentAtMs: 4_999 })).toBeUndefined();
    expect(match({ id: 'new-3', job: 'j1', sentAtMs: 5_000 })).toEqual(['dlq-1', 'job-key']);
    expect(match({ id: 'new-3', job: 'j1', sentAtMs: 9_000 })).toEqual(['dlq-1', 'job-key']);
    // No SentTimestamp: it cannot be ruled out.
    expect(match({ id: 'new-3', job: 'j1' })).toEqual(['dlq-1', 'job-key']);
    expect(match({ id: 'new-4', job: 'j2', sentAtMs: 9_000 })).toBeUndefined();
  });
});
