/**
 * The chain walk of `sqs-jobs job` and the console's job page (lib/ops/job-chain.ts): up through
 * `parentJob` links to the root, down through `childJobs`, statuses from the records, dead letters
 * from the DLQs read (only when a job of the chain is not done).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import { type ChainDeadLetterQueue, describeJobRef, walkJobChain } from '../../lib/ops/job-chain.ts';
import { renderJobChain } from '../../lib/ops/job-chain-format.ts';
import { defaultJobKey, jobRecordKey } from '../../lib/runtime/idempotency/keys.ts';

const T0 = Date.parse('2026-11-30T10:00:00.000Z');
const pkOf = (type: string, source: string, id: string) => jobRecordKey(type, defaultJobKey(source, id));

const RESERVE = pkOf('booking.reserve-inventory', '/workload', 'book-1');
const CONFIRM = pkOf('booking.confirm-reservation', '/sqs-jobs/booking', 'c-1');
const INVOICE = pkOf('booking.issue-invoice', '/sqs-jobs/booking', 'i-1');
const EMAIL = pkOf('notifications.send-email', '/sqs-jobs/booking', 'e-1');

type Item = Record<string, AttributeValue>;

function record(
  pk: string,
  status: string,
  at: number,
  links: { parent?: string; children?: string[] } = {},
  extra: Item = {},
): Item {
  return {
    pk: { S: pk },
    recordType: { S: 'job' },
    status: { S: status },
    attempt: { N: '1' },
    acquiredAtMs: { N: String(at) },
    leaseExpiresAtMs: { N: String(at + 30_000) },
    ...(status === 'IN_PROGRESS' ? {} : { endedAtMs: { N: String(at + 500) } }),
    ...(links.parent === undefined ? {} : { parentJob: { S: links.parent } }),
    ...(links.children === undefined ? {} : { childJobs: { SS: links.children } }),
    ...extra,
  };
}

function table(items: Item[]) {
  const byPk = new Map(items.map((i) => [i.pk?.S as string, i]));
  const reads: string[] = [];
  return {
    reads,
    readItem: async (_table: string, pk: string) => {
      reads.push(pk);
      return byPk.get(pk);
    },
  };
}

const doneChain = () => [
  record(RESERVE, 'COMPLETED', T0, { children: [CONFIRM] }, { result: { S: '{"status":"RESERVED"}' } }),
  record(CONFIRM, 'COMPLETED', T0 + 1_000, { parent: RESERVE, children: [INVOICE] }),
  record(INVOICE, 'COMPLETED', T0 + 2_000, { parent: CONFIRM, children: [EMAIL] }),
  record(EMAIL, 'COMPLETED', T0 + 3_000, { parent: INVOICE }),
];

function dlqMessage(body: object, reason = 'PermanentError', extra: Record<string, string> = {}) {
  const attrs = {
    ErrorReason: reason,
    ErrorName: 'PermanentError',
    ErrorMessage: 'mail refused',
    Attempts: '1',
    ...extra,
  };
  return toDeadLetterMessage({
    MessageId: `dlq-${Math.random()}`,
    ReceiptHandle: 'r',
    Body: JSON.stringify(body),
    MessageAttributes: Object.fromEntries(
      Object.entries(attrs).map(([k, v]) => [
        k,
        { DataType: k === 'Attempts' ? 'Number' : 'String', StringValue: v },
      ]),
    ),
    Attributes: { SentTimestamp: String(T0 + 5_000) },
  });
}

describe('walkJobChain', () => {
  it('from any job of a completed chain: up to the root, then every descendant, root first', async () => {
    const t = table(doneChain());
    let dlqReads = 0;
    const chain = await walkJobChain({
      tables: ['idem'],
      readItem: t.readItem,
      start: { type: 'booking.issue-invoice', key: defaultJobKey('/sqs-jobs/booking', 'i-1') },
      deadLetters: async () => {
        dlqReads++;
        return [];
      },
      now: () => T0 + 60_000,
    });
    expect(chain.root).toBe(RESERVE);
    expect(chain.jobs.map((j) => [j.type, j.depth, j.state, j.asked])).toEqual([
      ['booking.reserve-inventory', 0, 'done', false],
      ['booking.confirm-reservation', 1, 'done', false],
      ['booking.issue-invoice', 2, 'done', true],
      ['notifications.send-email', 3, 'done', false],
    ]);
    expect(chain.jobs[0]).toMatchObject({
      source: '/workload',
      id: 'book-1',
      attempts: 1,
      firstRunAt: '2026-11-30T10:00:00.000Z',
      endedAt: '2026-11-30T10:00:00.500Z',
      outcome: '{"status":"RESERVED"}',
    });
    // All done: no DLQ read; each record read once.
    expect(dlqReads).toBe(0);
    expect(new Set(t.reads).size).toBe(t.reads.length);
    const text = renderJobChain(chain);
    expect(text).toContain(
      'chain of booking.issue-invoice id i-1 (source /sqs-jobs/booking): 4 jobs (4 done)',
    );
    expect(text).toContain('└─ notifications.send-email  id e-1 (source /sqs-jobs/booking)');
    expect(text).toContain('← asked');
  });

  it('a child dead-lettered before its lease (no record) is found in the DLQ by its envelope, with its cause', async () => {
    const items = doneChain().slice(0, 3);
    const t = table(items);
    const dlq: ChainDeadLetterQueue = {
      name: 'notifications-dlq',
      fifo: false,
      notRead: 0,
      messages: [
        dlqMessage({
          specversion: '1.0',
          id: 'e-1',
          source: '/sqs-jobs/booking',
          type: 'notifications.send-email',
          causationid: 'i-1',
          rootid: 'book-1',
          parentjob: INVOICE,
        }),
      ],
    };
    const chain = await walkJobChain({
      tables: ['idem'],
      readItem: t.readItem,
      start: { type: 'booking.reserve-inventory', key: defaultJobKey('/workload', 'book-1') },
      deadLetters: async () => [dlq],
    });
    const email = chain.jobs.at(-1);
    expect(email).toMatchObject({
      type: 'notifications.send-email',
      depth: 3,
      state: 'dead-lettered',
      status: undefined,
    });
    expect(email?.where).toMatch(
      /^in DLQ notifications-dlq since 2026-11-30T10:00:05.000Z: PermanentError \(PermanentError: mail refused\)/,
    );
    expect(chain.deadLetterQueues).toEqual([{ name: 'notifications-dlq', read: 1, notRead: 0 }]);
  });

  it('a job in the DLQ whose parent never linked it (parent not completed) is found by its parentjob', async () => {
    const items = [
      record(RESERVE, 'COMPLETED', T0, { children: [CONFIRM] }),
      record(
        CONFIRM,
        'FAILED',
        T0 + 1_000,
        { parent: RESERVE },
        { lastError: { S: 'ChildEnqueueError: 1 of 2 not sent' } },
      ),
    ];
    const orphan = {
      specversion: '1.0',
      id: 'i-1',
      source: '/sqs-jobs/booking',
      type: 'booking.issue-invoice',
      parentjob: CONFIRM,
    };
    const chain = await walkJobChain({
      tables: ['idem'],
      readItem: table(items).readItem,
      start: { type: 'booking.reserve-inventory', key: defaultJobKey('/workload', 'book-1') },
      deadLetters: async () => [
        { name: 'booking-dlq.fifo', fifo: true, notRead: 2, messages: [dlqMessage(orphan)] },
      ],
    });
    expect(chain.jobs.map((j) => [j.type, j.state])).toEqual([
      ['booking.reserve-inventory', 'done'],
      ['booking.confirm-reservation', 'dead-lettered'],
      ['booking.issue-invoice', 'dead-lettered'],
    ]);
    expect(chain.jobs[1]?.where).toMatch(/dead-lettered .*ChildEnqueueError.*not found in the DLQs read/);
    expect(chain.notes.join('\n')).toContain('booking-dlq.fifo: about 2 messages could not be read');
  });

  it('says what it cannot know: running, waiting for a retry, not started', async () => {
    const items = [
      record(RESERVE, 'COMPLETED', T0, { children: [CONFIRM, INVOICE, EMAIL] }),
      record(CONFIRM, 'IN_PROGRESS', T0 + 1_000, { parent: RESERVE }),
      record(
        INVOICE,
        'RELEASED',
        T0 + 1_000,
        { parent: RESERVE },
        { lastError: { S: 'TransientError: 503' } },
      ),
    ];
    const chain = await walkJobChain({
      tables: ['idem'],
      readItem: table(items).readItem,
      start: { type: 'booking.reserve-inventory', key: defaultJobKey('/workload', 'book-1') },
      now: () => T0 + 2_000,
    });
    const byType = Object.fromEntries(chain.jobs.map((j) => [j.type, j]));
    expect(byType['booking.confirm-reservation']?.state).toBe('running');
    expect(byType['booking.issue-invoice']).toMatchObject({
      state: 'retrying',
      outcome: 'TransientError: 503',
    });
    expect(byType['notifications.send-email']?.state).toBe('queued-or-in-flight');
    expect(byType['notifications.send-email']?.where).toMatch(
      /sent by its parent by .*not started: queued or in flight/,
    );
    expect(chain.notes.join('\n')).toContain('dead-letter queues were not read');
  });

  it('a job without any record or dead letter is reported as not found, with why it may be', async () => {
    const chain = await walkJobChain({
      tables: ['idem'],
      readItem: table([]).readItem,
      start: { type: 'x.y', key: 'k' },
      deadLetters: async () => [],
    });
    expect(chain.jobs).toHaveLength(1);
    expect(chain.jobs[0]).toMatchObject({ asked: true, status: undefined, deadLetter: undefined });
    expect(chain.notes[0]).toContain('no idempotency record of x.y key k');
  });

  it('stops at --max-jobs and says so; refuses an empty key', async () => {
    const chain = await walkJobChain({
      tables: ['idem'],
      readItem: table(doneChain()).readItem,
      start: { type: 'booking.reserve-inventory', key: defaultJobKey('/workload', 'book-1') },
      maxJobs: 2,
    });
    expect(chain.jobs).toHaveLength(2);
    expect(chain.notes.join('\n')).toContain('stopped after reading 2 jobs');
    await expect(
      walkJobChain({ tables: ['t'], readItem: table([]).readItem, start: { type: 'x', key: '' } }),
    ).rejects.toThrow(RangeError);
  });

  it('names a job reference in words', () => {
    expect(describeJobRef(RESERVE)).toBe('booking.reserve-inventory id book-1 (source /workload)');
    expect(describeJobRef(jobRecordKey('payments.capture', 'order-42'))).toBe(
      'payments.capture key order-42',
    );
  });
});
