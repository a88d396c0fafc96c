/**
 * "What SQS accepts, we send": every body we send — producer (JobClient.send, sendEnvelope with an
 * object), children of ctx.enqueue, dead letters, redrives — holds only characters SQS takes
 * (SendMessage API, MessageBody: #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD |
 * #x10000–#x10FFFF) and carries the data losslessly. The rule is written out here on its own, so
 * the tests do not trust the code they check.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import type { JobLogger } from '../../lib/core/logger.ts';
import type { OpsSqs, OpsSqsCommand } from '../../lib/ops/queue.ts';
import { redriveDeadLetters } from '../../lib/ops/redrive/index.ts';
import { createJobClientChildSender } from '../../lib/runtime/child-sender.ts';
import { ChildCollector, sendChildren } from '../../lib/runtime/children.ts';
import { sendToDeadLetterQueue } from '../../lib/runtime/dead-letter.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { queueUrl, sqsRecord } from '../factories/sqs.ts';

/** SQS's body rule, independently of lib/core/characters.ts. */
const SQS_TAKES = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const takes = (body: string | undefined) => body !== undefined && SQS_TAKES.test(body);

const quiet: JobLogger = { debug() {}, info() {}, warn() {}, error() {} };
const STD_URL = queueUrl('anything');
const FIFO_URL = queueUrl('anything.fifo');

const anyData = defineJob({ type: 'any.data', queue: 'any', schema: z.any(), run: async () => {} });
const anyFifo = defineJob({ type: 'any.fifo', queue: 'anyfifo', schema: z.any(), run: async () => {} });

function client(sqs: FakeSqs): JobClient {
  return new JobClient({
    source: '/tests/characters',
    queueUrls: { any: STD_URL, anyfifo: FIFO_URL },
    sqs,
    logger: quiet,
    payloadWarnBytes: Number.MAX_SAFE_INTEGER,
  });
}

/** Strings of any code point: lone surrogates, U+FFFE/U+FFFF, C0 controls and astral characters included. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom(
      '\uFFFE',
      '\uFFFF',
      '\uD800',
      '\uDFFF',
      '\u0000',
      '\u001b',
      '\u{1F600}',
      'a',
      '"',
      '\\',
    ),
    maxLength: 20,
  }),
);
/** JSON values whose strings (values and keys) hold any code point. */
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyText,
    fc.boolean(),
    fc.constant(null),
    fc.integer(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(anyText, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const STRICT_CASES: [string, string][] = [
  ['U+FFFF', 'a\uFFFFb'],
  ['U+FFFE', '\uFFFE'],
  ['a lone high surrogate', 'x\uD800'],
  ['a lone low surrogate', '\uDC00y'],
  ['NUL', '\u0000'],
  ['an ANSI colour code', '\u001b[31mred\u001b[0m'],
  ['an emoji (astral)', 'ok \u{1F600}'],
];

describe('JobClient bodies', () => {
  it.each(STRICT_CASES)('sends data holding %s in a body SQS takes, losslessly', async (_, text) => {
    const sqs = new FakeSqs();
    const data = { text, [`key ${text}`]: [text] };
    await client(sqs).send(anyData, data);
    const body = sqs.batchEntries()[0]?.MessageBody;
    expect(takes(body)).toBe(true);
    expect(JSON.parse(body as string).data).toEqual(data);
  });

  it('sends any Unicode data in a body SQS takes and the worker parses back to the same data (property)', async () => {
    await fc.assert(
      fc.asyncProperty(anyJson, anyText, async (data, id) => {
        const sqs = new FakeSqs();
        await client(sqs).send(anyData, data, { id: id === '' ? 'x' : id.slice(0, 200) });
        const body = sqs.batchEntries()[0]?.MessageBody;
        expect(takes(body)).toBe(true);
        // Read as the worker reads it (JSON.parse itself mangles some keys on Node 24: lib/core/json-parse.ts).
        expect(parseEnvelope(body as string).data).toEqual(data);
      }),
      { numRuns: 300 },
    );
  });

  it('sends an envelope given as an object with U+FFFF in a body SQS takes (sendEnvelope)', async () => {
    const sqs = new FakeSqs();
    const envelope = {
      specversion: '1.0',
      id: 'id-\uFFFF',
      source: '/s\uFFFE',
      type: 'any.data',
      time: '2026-11-29T07:00:00.000Z',
      datacontenttype: 'application/json',
      data: { text: '\uFFFF\uD800' },
    };
    await client(sqs).sendEnvelope('any', envelope);
    const body = sqs.batchEntries()[0]?.MessageBody;
    expect(takes(body)).toBe(true);
    expect(JSON.parse(body as string)).toEqual(envelope);
  });

  it('refuses an envelope given as text with a raw U+FFFF (sent as given), naming the escape to write', async () => {
    const sqs = new FakeSqs();
    const text = `{"specversion":"1.0","id":"a","source":"/s","type":"t","time":"2026-11-29T07:00:00Z","datacontenttype":"application/json","data":"\uFFFF"}`;
    await expect(client(sqs).sendEnvelope('any', text)).rejects.toThrow(
      /body has the character U\+FFFF at index \d+, .*write it as the JSON escape \\uffff/,
    );
    expect(sqs.calls).toHaveLength(0);
  });
});

describe('ctx.enqueue children', () => {
  it('sends child data holding U+FFFF / U+FFFE in a body SQS takes, losslessly (FIFO child)', async () => {
    const sqs = new FakeSqs();
    const sender = createJobClientChildSender({
      source: '/tests/parent',
      queueUrls: { any: STD_URL, anyfifo: FIFO_URL },
      env: {},
      sqs,
      logger: quiet,
    });
    const collector = new ChildCollector({ source: '/tests', id: 'parent-\uFFFF', partitionKey: 'user-1' });
    const data = { note: 'x\uFFFFy\uFFFE \u{1F600}', nested: ['\uD83D'] };
    collector.add(anyFifo, data, undefined);
    collector.add(anyData, data, undefined);
    await sendChildren(sender, collector.entries);
    const bodies = sqs.batchEntries().map((entry) => entry.MessageBody);
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      expect(takes(body)).toBe(true);
      expect(JSON.parse(body as string).data).toEqual(data);
    }
  });
});

describe('dead letters', () => {
  const evidence = {
    jobType: 'any.data',
    error: new Error('no'),
    reason: 'PermanentError',
    attempts: 1,
    firstFailureAtMs: 0,
    lastFailureAtMs: 0,
    handlerVersion: '1',
    sourceMessageId: 'm-1',
  };

  it('sends a body SQS delivered untouched, byte for byte (escapes, astral characters and all)', async () => {
    const sqs = new FakeSqs();
    const body = '{"type":"any.data","data":"\\uffff \\ud800 \u{1F600} é\\u0000"}';
    await sendToDeadLetterQueue({ sqs, dlqUrl: queueUrl('dlq'), record: sqsRecord({ body }), evidence });
    expect(sqs.sentTo(queueUrl('dlq'))[0]?.MessageBody).toBe(body);
  });

  it('sends a body SQS would refuse (U+FFFF, a lone surrogate, NUL) with those characters escaped, same JSON', async () => {
    const sqs = new FakeSqs();
    const value = { type: 'any.data', data: 'a\uFFFF\uD800\u{1F600}' };
    const body = JSON.stringify(value).replace('a', 'a\u0000').replace('\\ud800', '\uD800');
    await sendToDeadLetterQueue({ sqs, dlqUrl: queueUrl('dlq'), record: sqsRecord({ body }), evidence });
    const sent = sqs.sentTo(queueUrl('dlq'))[0]?.MessageBody;
    expect(takes(sent)).toBe(true);
    expect(sent).toBe(
      body.replace('\u0000', '\\u0000').replace('\uFFFF', '\\uffff').replace('\uD800', '\\ud800'),
    );
  });
});

describe('redrive', () => {
  const DLQ = queueUrl('jobs-dlq');
  const TARGET = queueUrl('jobs');

  /** A DLQ holding given bodies; records what the redrive sends. */
  class BodiesSqs implements OpsSqs {
    readonly sent: SendMessageBatchRequestEntry[] = [];
    readonly #messages: { id: string; body: string; receipt?: string; gone?: boolean }[];
    constructor(bodies: string[]) {
      this.#messages = bodies.map((body, i) => ({ id: `m-${i}`, body }));
    }
    async send(command: OpsSqsCommand): Promise<unknown> {
      if (command instanceof GetQueueAttributesCommand) {
        const url = command.input.QueueUrl as string;
        return {
          Attributes: {
            QueueArn: `arn:aws:sqs:us-east-1:123456789012:${url.split('/').at(-1)}`,
            FifoQueue: 'false',
            ApproximateNumberOfMessages: String(url === DLQ ? this.#messages.length : 0),
            ...(url === TARGET
              ? {
                  RedrivePolicy: JSON.stringify({
                    deadLetterTargetArn: 'arn:aws:sqs:us-east-1:123456789012:jobs-dlq',
                    maxReceiveCount: 5,
                  }),
                }
              : {}),
          },
        };
      }
      if (command instanceof ReceiveMessageCommand) {
        const out = this.#messages.filter((m) => !m.gone && m.receipt === undefined).slice(0, 10);
        for (const m of out) m.receipt = `rh-${m.id}`;
        return { Messages: out.map((m) => ({ MessageId: m.id, ReceiptHandle: m.receipt, Body: m.body })) };
      }
      if (command instanceof SendMessageBatchCommand) {
        const entries = command.input.Entries ?? [];
        this.sent.push(...entries);
        return { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `t-${e.Id}` })), Failed: [] };
      }
      if (command instanceof DeleteMessageBatchCommand) {
        for (const entry of command.input.Entries ?? []) {
          const m = this.#messages.find((x) => x.receipt === entry.ReceiptHandle);
          if (m) m.gone = true;
        }
        return { Successful: (command.input.Entries ?? []).map((e) => ({ Id: e.Id })), Failed: [] };
      }
      if (command instanceof ChangeMessageVisibilityBatchCommand) {
        return { Successful: (command.input.Entries ?? []).map((e) => ({ Id: e.Id })), Failed: [] };
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    }
  }

  it('sends bodies SQS takes untouched, and escapes characters SQS would refuse (same JSON value)', async () => {
    const clean = '{"id":"a","type":"t","data":"\\uffff\u{1F600}"}';
    const dirtyValue = { id: 'b', type: 't', data: 'x\uFFFFy\uFFFE' };
    const dirty = JSON.stringify(dirtyValue);
    const sqs = new BodiesSqs([clean, dirty]);
    const result = await redriveDeadLetters({
      sqs,
      dlqUrl: DLQ,
      targetUrl: TARGET,
      waitTimeSeconds: 0,
      emptyReceivesToStop: 1,
    });
    expect(result.moved).toHaveLength(2);
    const bodies = sqs.sent.map((entry) => entry.MessageBody);
    expect(bodies[0]).toBe(clean);
    expect(takes(bodies[1])).toBe(true);
    expect(JSON.parse(bodies[1] as string)).toEqual(dirtyValue);
  });
});
