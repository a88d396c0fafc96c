/**
 * "What we accept, we can send on": an envelope the worker accepts never fails later because a
 * field cannot become an SQS parameter. `partitionkey` becomes the MessageGroupId of the job's
 * children (and of its FIFO dead letter): parseEnvelope and envelope.schema.json hold it to the
 * MessageGroupId rule (SendMessage API: 1–128 of a-z, A-Z, 0-9 and punctuation), so a bad one is
 * malformed — dead-lettered with evidence before any side effect. `source` and `id` only reach SQS
 * hashed, so any accepted value gives a valid MessageDeduplicationId.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { childJobId, deduplicationIdOf, EnvelopeError, parseEnvelope } from '../../lib/core/envelope.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { queueUrl, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

const schema = JSON.parse(
  readFileSync(new URL('../../lib/core/envelope.schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const validateWithSchema = ajv.compile(schema);

/** SendMessage API, MessageGroupId (and MessageDeduplicationId): written out here on its own. */
const GROUP_ID_CHARS =
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const isGroupId = (value: string) =>
  value.length >= 1 && value.length <= 128 && [...value].every((c) => GROUP_ID_CHARS.includes(c));

const base = {
  specversion: '1.0',
  id: 'job-1',
  source: '/services/checkout',
  type: 'orders.capture',
  time: '2026-11-29T07:00:00.000Z',
  datacontenttype: 'application/json',
  data: { orderId: 'o-1' },
};

function parserAccepts(value: unknown): boolean {
  try {
    parseEnvelope(JSON.stringify(value));
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(EnvelopeError);
    return false;
  }
}

const partitionKeys = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 130 }),
  fc.string({
    unit: fc.constantFrom(...GROUP_ID_CHARS, ' ', 'ã', '\u007f', '\t'),
    minLength: 0,
    maxLength: 130,
  }),
  fc.constantFrom('joão', 'user 9', 'x'.repeat(128), 'x'.repeat(129), '\u{1F600}', 'a\u00a0b'),
);

describe('partitionkey is a MessageGroupId wherever it appears', () => {
  it('parseEnvelope and the JSON Schema accept exactly the valid MessageGroupIds (property)', () => {
    fc.assert(
      fc.property(partitionKeys, (partitionkey) => {
        const envelope = { ...base, partitionkey };
        expect(parserAccepts(envelope)).toBe(isGroupId(partitionkey));
        expect(validateWithSchema(envelope)).toBe(isGroupId(partitionkey));
      }),
      { numRuns: 500 },
    );
  });

  it('names the field and the rule', () => {
    expect(() => parseEnvelope(JSON.stringify({ ...base, partitionkey: 'joão' }))).toThrow(
      'invalid job envelope: partitionkey must be 1-128 characters of a-z, A-Z, 0-9 and punctuation (printable ASCII, no space): it becomes the MessageGroupId (SendMessage API)',
    );
  });

  it('dead-letters an envelope with partitionkey "joão" with evidence, before its job runs', async () => {
    const ran: string[] = [];
    const capture = defineJob({
      type: 'orders.capture',
      queue: 'orders',
      schema: z.object({ orderId: z.string() }),
      run: async ({ orderId }, ctx) => {
        ran.push(orderId);
        ctx.enqueue(capture, { orderId: 'next' });
      },
    });
    const h = workerHarness({ jobs: [capture], queueUrls: { orders: queueUrl('orders.fifo') } });
    const record = sqsRecord({ body: JSON.stringify({ ...base, partitionkey: 'joão' }) });
    const { response } = await h.invoke([record]);
    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual([]);
    expect(h.sqs.batchEntries()).toEqual([]);
    const [dead] = h.sqs.sentTo(h.dlqUrl);
    expect(dead?.MessageBody).toBe(record.body);
    expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('EnvelopeError');
    expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(
      /partitionkey must be 1-128 characters/,
    );
  });
});

describe('source and id reach SQS only hashed', () => {
  it('give a valid MessageDeduplicationId and child id for any accepted value (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }),
        (source, id) => {
          const envelope = { ...base, source, id };
          fc.pre(parserAccepts(envelope));
          expect(isGroupId(deduplicationIdOf(envelope))).toBe(true);
          expect(isGroupId(childJobId(envelope, 'orders.next', 0))).toBe(true);
        },
      ),
    );
  });
});
