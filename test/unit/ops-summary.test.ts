/** Reading a DLQ message's evidence, and grouping dead letters by cause. */
import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { PermanentError } from '../../lib/core/errors.ts';
import {
  jobKeyOf,
  NO_ERROR_NAME,
  NO_EVIDENCE_REASON,
  toDeadLetterMessage,
  UNKNOWN_JOB_TYPE,
} from '../../lib/ops/dead-letter-message.ts';
import { SAMPLE_BODY_MAX_CHARS, summarizeDeadLetters } from '../../lib/ops/summary.ts';
import { evidenceAttributes } from '../../lib/runtime/dead-letter.ts';

let counter = 0;

interface Input {
  readonly type?: string;
  readonly id?: string;
  readonly reason?: string;
  readonly error?: Error;
  readonly attempts?: number;
  readonly first?: string;
  readonly last?: string;
  readonly version?: string;
  readonly body?: string;
  readonly sentAt?: string;
  readonly evidence?: boolean;
}

/** A received DLQ message carrying the evidence exactly as the worker writes it. */
function dead(input: Input = {}) {
  counter += 1;
  const type = input.type ?? 'orders.capture';
  const body =
    input.body ??
    JSON.stringify({ specversion: '1.0', id: input.id ?? `job-${counter}`, source: '/shop', type });
  const raw: Message = {
    MessageId: `m-${counter}`,
    ReceiptHandle: `rh-${counter}`,
    Body: body,
    Attributes: {
      SentTimestamp: String(Date.parse(input.sentAt ?? '2026-11-29T10:00:00Z')),
      ApproximateReceiveCount: '2',
    },
    MessageAttributes:
      input.evidence === false
        ? undefined
        : evidenceAttributes(body, {
            jobType: type,
            error: input.error ?? new PermanentError('order not found'),
            reason: input.reason ?? 'PermanentError',
            attempts: input.attempts ?? 1,
            firstFailureAtMs: Date.parse(input.first ?? '2026-11-29T09:00:00Z'),
            lastFailureAtMs: Date.parse(input.last ?? '2026-11-29T09:00:00Z'),
            handlerVersion: input.version ?? '7',
            sourceMessageId: `src-${counter}`,
          }),
  };
  return toDeadLetterMessage(raw);
}

describe('toDeadLetterMessage', () => {
  it('reads every evidence attribute the worker writes, Attempts as a number', () => {
    const m = dead({ id: 'job-a', reason: 'HTTP 404', attempts: 3, version: '12' });
    expect(m.evidence).toMatchObject({
      jobType: 'orders.capture',
      errorName: 'PermanentError',
      errorMessage: 'order not found',
      errorReason: 'HTTP 404',
      attempts: 3,
      firstFailureAt: '2026-11-29T09:00:00.000Z',
      lastFailureAt: '2026-11-29T09:00:00.000Z',
      handlerVersion: '12',
    });
    expect(m.evidence.errorStack).toMatch(/^PermanentError: order not found/);
    expect(m.evidence.sourceMessageId).toMatch(/^src-/);
    expect(m.hasEvidence).toBe(true);
    expect(m.job).toEqual({ id: 'job-a', source: '/shop', type: 'orders.capture', partitionKey: undefined });
    expect(m.receiveCount).toBe(2);
    expect(m.sentAtMs).toBe(Date.parse('2026-11-29T10:00:00Z'));
  });

  it('marks a message without evidence and takes its job type from the body', () => {
    const m = dead({ evidence: false, type: 'orders.refund' });
    expect(m.hasEvidence).toBe(false);
    expect(m.reason).toBe(NO_EVIDENCE_REASON);
    expect(m.errorName).toBe(NO_ERROR_NAME);
    expect(m.jobType).toBe('orders.refund');
  });

  it('keeps a body that is not an envelope, and identifies it by a hash of the body', () => {
    const m = dead({ body: '{"not": "an envelope"', evidence: false });
    expect(m.job).toBeUndefined();
    expect(m.jobType).toBe(UNKNOWN_JOB_TYPE);
    expect(m.jobKey).toMatch(/^body:[0-9a-f]{64}$/);
    expect(jobKeyOf('{"not": "an envelope"')).toBe(m.jobKey);
    // The same job is recognised by source and id, whatever else changed in its body.
    expect(jobKeyOf('{"id":"x","source":"/a","time":"1"}')).toBe(
      jobKeyOf('{"id":"x","source":"/a","time":"2"}'),
    );
    expect(jobKeyOf('{"id":"x","source":"/a"}')).not.toBe(jobKeyOf('{"id":"x","source":"/b"}'));
  });
});

describe('summarizeDeadLetters', () => {
  it('groups by reason, then job type, largest first, with counts, times, attempts and samples', () => {
    const messages = [
      dead({
        reason: 'HTTP 404',
        error: new PermanentError('order o-1 not found'),
        first: '2026-11-29T08:00:00Z',
        last: '2026-11-29T08:00:00Z',
        attempts: 1,
      }),
      dead({
        reason: 'HTTP 404',
        error: new PermanentError('order o-2 not found'),
        first: '2026-11-29T07:00:00Z',
        last: '2026-11-29T09:30:00Z',
        attempts: 2,
        version: '8',
      }),
      dead({ reason: 'HTTP 404', type: 'orders.refund' }),
      dead({ reason: 'attempts-used-up: HTTP 503', type: 'orders.refund' }),
      dead({
        reason: 'HTTP 404',
        error: new PermanentError('order o-1 not found'),
        last: '2026-11-29T08:30:00Z',
        attempts: 5,
      }),
      dead({ evidence: false }),
    ];
    const summary = summarizeDeadLetters(messages);

    expect(summary.total).toBe(6);
    expect(summary.groups.map((g) => [g.key.reason, g.key.jobType, g.count])).toEqual([
      ['HTTP 404', 'orders.capture', 3],
      ['HTTP 404', 'orders.refund', 1],
      // Ties by name.
      ['attempts-used-up: HTTP 503', 'orders.refund', 1],
      [NO_EVIDENCE_REASON, 'orders.capture', 1],
    ]);
    const capture = summary.groups[0];
    expect(capture?.firstFailureAt).toBe('2026-11-29T07:00:00.000Z');
    expect(capture?.lastFailureAt).toBe('2026-11-29T09:30:00.000Z');
    expect(capture?.attempts).toEqual({ min: 1, max: 5 });
    expect(capture?.handlerVersions).toEqual(['7', '8']);
    // Most frequent message first, each once.
    expect(capture?.errorMessages).toEqual(['order o-1 not found', 'order o-2 not found']);
    // The sample is the message that failed last.
    expect(capture?.sample.errorMessage).toBe('order o-2 not found');
    expect(capture?.errorNames).toEqual([{ name: 'PermanentError', count: 3 }]);
    const bare = summary.groups[3];
    expect(bare?.attempts).toBeUndefined();
    expect(bare?.firstFailureAt).toBeUndefined();
    expect(bare?.oldestSentAt).toBe('2026-11-29T10:00:00.000Z');
  });

  it('groups by any keys, keeps at most `samples` messages and cuts long sample bodies', () => {
    const long = JSON.stringify({ id: 'big', type: 'orders.capture', data: 'x'.repeat(5_000) });
    const messages = [
      dead({ error: new PermanentError('a') }),
      dead({ error: new PermanentError('b') }),
      dead({ error: new PermanentError('c'), body: long, last: '2026-11-29T11:00:00Z' }),
      dead({ error: new TypeError('boom'), reason: 'TypeError' }),
    ];
    const summary = summarizeDeadLetters(messages, { groupBy: ['errorName'], samples: 2 });
    expect(summary.groups.map((g) => [g.key, g.count])).toEqual([
      [{ errorName: 'PermanentError' }, 3],
      [{ errorName: 'TypeError' }, 1],
    ]);
    expect(summary.groups[0]?.errorMessages).toHaveLength(2);
    expect(summary.groups[0]?.sample.body.length).toBeLessThan(SAMPLE_BODY_MAX_CHARS + 40);
    expect(summary.groups[0]?.sample.body).toMatch(/…\[\d+ more characters\]$/);
  });

  it('returns no groups for no messages and refuses unknown keys', () => {
    expect(summarizeDeadLetters([]).groups).toEqual([]);
    expect(() => summarizeDeadLetters([], { groupBy: [] })).toThrow(RangeError);
    expect(() => summarizeDeadLetters([], { groupBy: ['queue' as never] })).toThrow(
      /unknown group key "queue"/,
    );
  });
});
