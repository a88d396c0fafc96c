/**
 * DLQ evidence SQS takes, whatever the error says and however large the body is:
 * - String attribute values have the body's character rule (MessageAttributeValue API reference):
 *   raw error text (ANSI colour codes, NUL, lone surrogates) is escaped visibly, never sent raw;
 * - every value is bounded (docs/contracts.md, "DLQ evidence");
 * - body + attributes fit the message size limit: a legal body just under it keeps its bytes and
 *   the evidence shrinks (largest first), with a marker saying so, keeping the error name, reason
 *   and the job's identity as long as they fit.
 * The character rule and the size count are written out here on their own.
 */
import type { MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DeadLetterEvidence,
  evidenceAttributes,
  sendToDeadLetterQueue,
} from '../../lib/runtime/dead-letter.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { queueUrl, sqsRecord } from '../factories/sqs.ts';

const SQS_TAKES = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const ONE_MIB = 1_048_576;
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
/** Limits of docs/contracts.md, "DLQ evidence" (UTF-8 bytes of the value). */
const LIMITS: Record<string, number> = {
  JobType: 1_024,
  ErrorName: 256,
  ErrorMessage: 8_192,
  ErrorStack: 65_536,
  ErrorReason: 1_024,
  Attempts: 32,
  FirstFailureAt: 64,
  LastFailureAt: 64,
  HandlerVersion: 256,
  SourceMessageId: 256,
  EvidenceTruncated: 256,
};

function messageBytes(body: string, attributes: Record<string, MessageAttributeValue>): number {
  let total = bytes(body);
  for (const [name, value] of Object.entries(attributes)) {
    total += bytes(name) + bytes(value.DataType ?? '') + bytes(value.StringValue ?? '');
  }
  return total;
}

/** What SQS checks of the attributes of one message. */
function expectAcceptable(
  body: string,
  attributes: Record<string, MessageAttributeValue>,
  maxBytes = ONE_MIB,
) {
  expect(Object.keys(attributes).length).toBeLessThanOrEqual(10);
  expect(messageBytes(body, attributes)).toBeLessThanOrEqual(maxBytes);
  for (const [name, value] of Object.entries(attributes)) {
    expect(value.StringValue, name).toBeTruthy();
    expect(SQS_TAKES.test(value.StringValue ?? ''), `${name} holds a character SQS refuses`).toBe(true);
    expect(bytes(value.StringValue ?? ''), name).toBeLessThanOrEqual(LIMITS[name] ?? 0);
    if (value.DataType === 'Number') expect(value.StringValue).toMatch(/^-?\d+(\.\d+)?$/);
  }
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

const ESC = '\u001b';

describe('evidence attribute characters', () => {
  it('escapes ANSI colour codes and NUL in the error text visibly, instead of sending them raw', () => {
    const error = new TypeError(`${ESC}[31mexpected${ESC}[0m "a\u0000b"`);
    error.stack = `TypeError: ${error.message}\n    at ${ESC}[2mrun${ESC}[22m (job.ts:1:1)`;
    const attributes = evidenceAttributes('{}', evidence(error));
    expectAcceptable('{}', attributes);
    expect(attributes.ErrorMessage?.StringValue).toBe('\\u001b[31mexpected\\u001b[0m "a\\u0000b"');
    expect(attributes.ErrorStack?.StringValue).toContain('at \\u001b[2mrun\\u001b[22m (job.ts:1:1)');
  });

  it('escapes refused characters in every String attribute (name, reason, type, version, ids)', () => {
    const error = new Error('m');
    error.name = `Bad${ESC}Name\uFFFF`;
    const attributes = evidenceAttributes(
      '{}',
      evidence(error, {
        jobType: 'orders.\uD800capture',
        reason: `reason\u0007`,
        handlerVersion: 'v\u0000',
        sourceMessageId: 'id\uFFFE',
      }),
    );
    expectAcceptable('{}', attributes);
    expect(attributes.ErrorName?.StringValue).toBe('Bad\\u001bName\\uffff');
    expect(attributes.JobType?.StringValue).toBe('orders.\\ud800capture');
    expect(attributes.ErrorReason?.StringValue).toBe('reason\\u0007');
    expect(attributes.HandlerVersion?.StringValue).toBe('v\\u0000');
    expect(attributes.SourceMessageId?.StringValue).toBe('id\\ufffe');
  });

  it('bounds every value: a huge error name, type, reason or version is cut', () => {
    const error = new Error('m');
    error.name = 'N'.repeat(100_000);
    const attributes = evidenceAttributes(
      '{}',
      evidence(error, {
        jobType: 't'.repeat(100_000),
        reason: 'r'.repeat(100_000),
        handlerVersion: 'v'.repeat(100_000),
        sourceMessageId: 'i'.repeat(100_000),
      }),
    );
    expectAcceptable('{}', attributes);
    expect(attributes.ErrorName?.StringValue?.endsWith('…[truncated]')).toBe(true);
  });

  it('never writes an attribute SQS refuses: NaN attempts, invalid times, odd thrown values', () => {
    const attributes = evidenceAttributes(
      '{}',
      evidence(Object.assign(Object.create(null), { toString: undefined }), {
        attempts: Number.NaN,
        firstFailureAtMs: Number.NaN,
        lastFailureAtMs: 8.64e15 + 1,
      }),
    );
    expectAcceptable('{}', attributes);
    expect(attributes.Attempts).toBeUndefined();
    expect(attributes.FirstFailureAt).toBeUndefined();
  });

  it('gives attributes SQS takes for any error text (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.string({ unit: 'binary', maxLength: 30 }),
        fc.string({ unit: 'binary', maxLength: 30 }),
        (message, name, type) => {
          const error = new Error(message);
          error.name = name;
          const attributes = evidenceAttributes('{}', evidence(error, { jobType: type, reason: name }));
          expectAcceptable('{}', attributes);
        },
      ),
    );
  });
});

describe('the DLQ MessageGroupId of a record without one', () => {
  it('is the job type only when it is a valid MessageGroupId', async () => {
    for (const [jobType, expected] of [
      ['orders.capture', 'orders.capture'],
      ['orders capture', 'dead-letter'],
      ['pedidos.ação', 'dead-letter'],
      ['x'.repeat(129), 'dead-letter'],
    ] as const) {
      const sqs = new FakeSqs();
      const dlqUrl = queueUrl('jobs-dlq.fifo');
      await sendToDeadLetterQueue({
        sqs,
        dlqUrl,
        record: sqsRecord({ body: '{}' }),
        evidence: evidence(new Error('e'), { jobType }),
      });
      expect(sqs.sentTo(dlqUrl)[0]?.MessageGroupId).toBe(expected);
    }
  });
});

/** A JSON body of exactly `size` bytes. */
const bodyOf = (size: number) => `{"pad":"${'x'.repeat(size - 10)}"}`;
/** An error whose message (20 kB) and stack (~100 kB) are over their caps. */
const bigError = () => {
  const error = new Error('m'.repeat(20_000));
  error.stack = `Error: ${error.message}\n${'    at frame (file.ts:1:1)\n'.repeat(3_000)}`;
  return error;
};

describe('a legal body near the size limit', () => {
  it.each([0, 1, 20, 40, 56, 57, 80, 150, 300, 700, 5_000, 70_000])(
    'keeps the body intact and fits the evidence: %i bytes left',
    (room) => {
      const body = bodyOf(ONE_MIB - room);
      expect(bytes(body)).toBe(ONE_MIB - room);
      const attributes = evidenceAttributes(body, evidence(bigError()));
      expectAcceptable(body, attributes);
    },
  );

  it('says the evidence was cut, and keeps error name, reason and identity, when there is room for them', () => {
    const body = bodyOf(ONE_MIB - 700);
    const attributes = evidenceAttributes(body, evidence(bigError()));
    expectAcceptable(body, attributes);
    expect(attributes.EvidenceTruncated?.StringValue?.split(',')).toEqual(
      expect.arrayContaining(['ErrorStack', 'ErrorMessage']),
    );
    expect(attributes.ErrorName?.StringValue).toBe('Error');
    expect(attributes.ErrorReason?.StringValue).toBe('PermanentError');
    expect(attributes.JobType?.StringValue).toBe('orders.capture');
    expect(attributes.SourceMessageId?.StringValue).toBe('b1a7c0de-0000-4000-8000-000000000001');
  });

  it('cuts the largest attribute first: a short stack stays whole while a long message is cut', () => {
    const error = new Error('m'.repeat(8_000));
    error.stack = 'Error: short';
    const body = bodyOf(ONE_MIB - 4_000);
    const attributes = evidenceAttributes(body, evidence(error));
    expectAcceptable(body, attributes);
    expect(attributes.ErrorStack?.StringValue).toBe('Error: short');
    expect(attributes.ErrorMessage?.StringValue?.endsWith('…[truncated]')).toBe(true);
    expect(attributes.EvidenceTruncated?.StringValue).toContain('ErrorMessage');
  });

  it('fits any body size up to the limit and any error size (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 30_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (room, messageBytes, stackBytes) => {
          const body = bodyOf(ONE_MIB - room);
          const error = new Error('m'.repeat(messageBytes));
          error.stack = 's'.repeat(stackBytes);
          const attributes = evidenceAttributes(body, evidence(error));
          expectAcceptable(body, attributes);
          if (room >= 400) {
            for (const name of ['ErrorName', 'ErrorReason', 'JobType', 'SourceMessageId']) {
              expect(attributes[name], name).toBeDefined();
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('a DLQ whose MaximumMessageSize is below 1 MiB', () => {
  it('sends again with the evidence fitted to the limit the DLQ names, body unchanged', async () => {
    const limit = 262_144;
    const sqs = new FakeSqs().failWhen((call) => {
      if (call.action !== 'SendMessage') return undefined;
      const size = messageBytes(call.input.MessageBody ?? '', call.input.MessageAttributes ?? {});
      return size > limit
        ? Object.assign(
            new Error(
              `One or more parameters are invalid. Reason: Message must be shorter than ${limit} bytes.`,
            ),
            { name: 'InvalidParameterValue', $fault: 'client' },
          )
        : undefined;
    });
    const body = bodyOf(limit - 300);
    const dlqUrl = queueUrl('jobs-dlq');
    await sendToDeadLetterQueue({ sqs, dlqUrl, record: sqsRecord({ body }), evidence: evidence(bigError()) });
    const sent = sqs.sentTo(dlqUrl);
    expect(sent).toHaveLength(2);
    const last = sent[1] as ConstructorParameters<typeof SendMessageCommand>[0];
    expect(last.MessageBody).toBe(body);
    expectAcceptable(body, last.MessageAttributes ?? {}, limit);
    expect(last.MessageAttributes?.EvidenceTruncated).toBeDefined();
  });
});
