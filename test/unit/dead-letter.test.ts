/**
 * DLQ evidence: the contract attributes, cut so body + attributes fit the 1 MiB SQS limit, and
 * the FIFO dedup id of a dead-lettered record.
 */
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import {
  type DeadLetterEvidence,
  deadLetterDeduplicationId,
  evidenceAttributes,
  MAX_ERROR_STACK_BYTES,
  MAX_MESSAGE_BYTES,
  truncateUtf8,
} from '../../lib/runtime/dead-letter.ts';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Message size as SQS counts it: body plus name, type and value of every attribute. */
function messageBytes(body: string, attributes: Record<string, MessageAttributeValue>): number {
  let total = bytes(body);
  for (const [name, value] of Object.entries(attributes)) {
    total += bytes(name) + bytes(value.DataType ?? '') + bytes(value.StringValue ?? '');
  }
  return total;
}

function evidence(error: unknown, overrides: Partial<DeadLetterEvidence> = {}): DeadLetterEvidence {
  return {
    jobType: 'orders.capture',
    error,
    reason: 'PermanentError',
    attempts: 3,
    firstFailureAtMs: Date.parse('2026-11-29T06:00:00Z'),
    lastFailureAtMs: Date.parse('2026-11-29T07:00:00Z'),
    handlerVersion: '7',
    sourceMessageId: 'b1a7c0de-0000-4000-8000-000000000001',
    ...overrides,
  };
}

function errorWithStack(message: string, stackBytes: number): Error {
  const error = new Error(message);
  error.stack = `Error: ${message}\n${'    at frame (file.ts:1:1)\n'.repeat(Math.ceil(stackBytes / 28))}`;
  return error;
}

describe('evidenceAttributes', () => {
  it('writes the ten contract attributes for a normal failure', () => {
    const attributes = evidenceAttributes('{"small":true}', evidence(new TypeError('boom')));
    expect(Object.keys(attributes)).toHaveLength(10);
    expect(attributes).toMatchObject({
      JobType: { DataType: 'String', StringValue: 'orders.capture' },
      ErrorName: { DataType: 'String', StringValue: 'TypeError' },
      ErrorMessage: { DataType: 'String', StringValue: 'boom' },
      ErrorReason: { DataType: 'String', StringValue: 'PermanentError' },
      Attempts: { DataType: 'Number', StringValue: '3' },
      FirstFailureAt: { DataType: 'String', StringValue: '2026-11-29T06:00:00.000Z' },
      LastFailureAt: { DataType: 'String', StringValue: '2026-11-29T07:00:00.000Z' },
      HandlerVersion: { DataType: 'String', StringValue: '7' },
      SourceMessageId: { DataType: 'String', StringValue: 'b1a7c0de-0000-4000-8000-000000000001' },
    });
  });

  it('leaves out what has no value instead of sending an empty attribute (SQS refuses them)', () => {
    const attributes = evidenceAttributes('x', evidence('a plain string was thrown', { jobType: undefined }));
    expect(attributes.JobType).toBeUndefined();
    expect(attributes.ErrorStack).toBeUndefined();
    expect(attributes.ErrorName?.StringValue).toBe('NonErrorThrown');
    expect(attributes.ErrorMessage?.StringValue).toBe('a plain string was thrown');
    for (const value of Object.values(attributes)) expect(value.StringValue).not.toBe('');
  });

  it('caps a huge stack even when the message would fit', () => {
    const attributes = evidenceAttributes('{}', evidence(errorWithStack('deep', 500_000)));
    const stack = attributes.ErrorStack?.StringValue ?? '';
    expect(bytes(stack)).toBeLessThanOrEqual(MAX_ERROR_STACK_BYTES);
    expect(stack.endsWith('…[truncated]')).toBe(true);
  });

  const sizes = [
    { name: 'body near the limit', bodyBytes: MAX_MESSAGE_BYTES - 20_000, keepsStack: true },
    {
      name: 'body leaving room for little more than the fixed attributes',
      bodyBytes: MAX_MESSAGE_BYTES - 700,
      keepsStack: false,
    },
    { name: 'body leaving almost nothing', bodyBytes: MAX_MESSAGE_BYTES - 80, keepsStack: false },
  ];
  it.each(sizes)('fits body + attributes into 1 MiB: $name', ({ bodyBytes, keepsStack }) => {
    const body = `{"pad":"${'x'.repeat(bodyBytes - 10)}"}`;
    const attributes = evidenceAttributes(body, evidence(errorWithStack('m'.repeat(20_000), 60_000)));
    expect(messageBytes(body, attributes)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(attributes.ErrorStack !== undefined).toBe(keepsStack);
    // The id that ties the evidence to the original message is the last thing to go.
    expect(attributes.SourceMessageId?.StringValue).toBe('b1a7c0de-0000-4000-8000-000000000001');
  });

  it('returns the attributes whole when the body alone is over the limit (the send then fails)', () => {
    const body = 'x'.repeat(MAX_MESSAGE_BYTES + 1);
    const attributes = evidenceAttributes(body, evidence(new Error('e')));
    expect(Object.keys(attributes)).toHaveLength(10);
  });
});

describe('truncateUtf8', () => {
  it.each([
    { text: 'short', max: 100, expected: 'short' },
    // The marker "…[truncated]" takes 14 bytes of the budget.
    { text: 'abcdefghijklmnopqrstuvwxyz', max: 20, expected: 'abcdef…[truncated]' },
    // "é" is 2 bytes: never cut in half.
    { text: 'éééééééééééé', max: 21, expected: 'ééé…[truncated]' },
    // "😀" is 4 bytes (a surrogate pair in UTF-16): never cut in half.
    { text: '😀😀😀😀😀😀', max: 21, expected: '😀…[truncated]' },
    { text: '😀😀😀😀😀😀', max: 22, expected: '😀😀…[truncated]' },
    { text: 'abcdefghijklmnopqrstuvwxyz', max: 5, expected: '' },
  ])('$text in $max bytes → $expected', ({ text, max, expected }) => {
    const cut = truncateUtf8(text, max);
    expect(cut).toBe(expected);
    expect(bytes(cut)).toBeLessThanOrEqual(max);
  });
});

describe('deadLetterDeduplicationId', () => {
  it('is stable for one delivery, new for another message id, and within 128 chars', () => {
    const id = deadLetterDeduplicationId('m-1');
    expect(deadLetterDeduplicationId('m-1')).toBe(id);
    expect(deadLetterDeduplicationId('m-2')).not.toBe(id);
    expect(id).toMatch(/^[0-9a-f]{64}$/);
  });
});
