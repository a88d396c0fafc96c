/**
 * The producer checks what the worker will see: the JSON form of the data. A value that only the
 * in-memory object passes (`z.date()` given a `Date`) is refused at send time instead of being
 * dead-lettered by the worker; a value JSON cannot carry (NaN, a Map, a class instance, a cycle...)
 * is refused naming its path instead of being sent as `null` or `{}`. Same for ctx.enqueue children.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import type { JobEnvelope } from '../../lib/core/envelope.ts';
import type { JobLogger } from '../../lib/core/logger.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, queueUrl, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

const quiet: JobLogger = { debug() {}, info() {}, warn() {}, error() {} };
const STD_URL = queueUrl('anything');

const anyData = defineJob({ type: 'any.data', queue: 'any', schema: z.any(), run: async () => {} });
const meeting = defineJob({
  type: 'calendar.meeting',
  queue: 'any',
  schema: z.object({ when: z.date() }),
  run: async () => {},
});
const meetingIso = defineJob({
  type: 'calendar.meeting-iso',
  queue: 'any',
  schema: z.object({ when: z.iso.datetime() }),
  run: async () => {},
});

function client(sqs: FakeSqs): JobClient {
  return new JobClient({ source: '/tests/json', queueUrls: { any: STD_URL }, sqs, logger: quiet });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobClientError);
  return (error as JobClientError).problems.map((p) => p.message).join('\n');
}

class Point {
  readonly x = 1;
  #secret = 2;
  get secret() {
    return this.#secret;
  }
}

const inner: Record<string, unknown> = {};
const cyclic = { a: { b: inner } };
inner.back = cyclic;

describe('JobClient validates the JSON form of the data', () => {
  it('refuses a Date for a z.date() schema at send time: the worker would get a string', async () => {
    const sqs = new FakeSqs();
    const message = await refusal(client(sqs).send(meeting, { when: new Date('2026-11-29T07:00:00Z') }));
    expect(message).toMatch(/^data\.when: .*expected date/i);
    expect(message).toContain('a Date travels as "2026-11-29T07:00:00.000Z"');
    expect(sqs.calls).toHaveLength(0);
  });

  it('sends a Date as its ISO string where the schema expects that string, which the worker then accepts', async () => {
    const sqs = new FakeSqs();
    await client(sqs).send(meetingIso, { when: new Date('2026-11-29T07:00:00Z') as unknown as string });
    const body = sqs.batchEntries()[0]?.MessageBody as string;
    expect((JSON.parse(body) as JobEnvelope<{ when: string }>).data.when).toBe('2026-11-29T07:00:00.000Z');
  });

  it.each<[string, unknown, RegExp]>([
    ['NaN', { n: Number.NaN }, /data\.n: NaN has no JSON form/],
    [
      'Infinity',
      { deep: [{ n: Number.POSITIVE_INFINITY }] },
      /data\.deep\[0\]\.n: Infinity has no JSON form/,
    ],
    ['-Infinity', [Number.NEGATIVE_INFINITY], /data\[0\]: -Infinity has no JSON form/],
    ['NaN at the top', Number.NaN, /data: NaN has no JSON form/],
    ['undefined in an array', { list: [1, undefined] }, /data\.list\[1\]: undefined in an array/],
    [
      'a hole in an array',
      { list: Object.assign([], { 0: 1, 2: 3, length: 3 }) },
      /data\.list\[1\]: a hole in an array/,
    ],
    ['a function', { run: () => 1 }, /data\.run: a function has no JSON form/],
    ['a function at the top', () => 1, /data: a function has no JSON form/],
    ['a symbol', { s: Symbol('x') }, /data\.s: a symbol has no JSON form/],
    ['a BigInt', { n: 10n }, /data\.n: a bigint has no JSON form/],
    ['a Map', { m: new Map([['a', 1]]) }, /data\.m: a Map has no JSON form of its own/],
    ['a Set', { s: new Set([1]) }, /data\.s: a Set has no JSON form of its own/],
    ['a class instance', { p: new Point() }, /data\.p: an instance of Point has no JSON form of its own/],
    ['an invalid Date', { d: new Date(Number.NaN) }, /data\.d: an invalid Date has no JSON form/],
    ['a cycle', cyclic, /data\.a\.b\.back: circular reference to data/],
    ['a key that is not an identifier', { 'a b': [Number.NaN] }, /data\["a b"\]\[0\]: NaN/],
    [
      'a toJSON that throws',
      {
        t: {
          toJSON() {
            throw new Error('nope');
          },
        },
      },
      /data\.t: toJSON\(\) threw: nope/,
    ],
  ])('refuses %s, naming the path, and sends nothing', async (_, data, expected) => {
    const sqs = new FakeSqs();
    const message = await refusal(client(sqs).send(anyData, data));
    expect(message).toMatch(/^data is not JSON-serializable \(/);
    expect(message).toMatch(expected);
    expect(sqs.calls).toHaveLength(0);
  });

  it('lists every bad place of one entry', async () => {
    const message = await refusal(client(new FakeSqs()).send(anyData, { a: Number.NaN, b: [new Set()] }));
    expect(message).toMatch(/data\.a: NaN.*; data\.b\[0\]: a Set/);
  });

  it('takes what JSON carries as it is: nested plain data, undefined properties (left out), toJSON, shared references', async () => {
    const shared = { id: 's' };
    const data = {
      a: [shared, shared],
      optional: undefined,
      plain: Object.assign(Object.create(null), { x: 1 }),
      custom: { toJSON: () => ({ kind: 'custom' }) },
    };
    const sqs = new FakeSqs();
    await client(sqs).send(anyData, data);
    const sent = JSON.parse(sqs.batchEntries()[0]?.MessageBody as string) as JobEnvelope;
    expect(sent.data).toEqual({ a: [{ id: 's' }, { id: 's' }], plain: { x: 1 }, custom: { kind: 'custom' } });
  });

  it('sends any JSON value as it is, and refuses it with one bad leaf put anywhere, naming that path (property)', async () => {
    const bad = fc.constantFrom<unknown>(
      Number.NaN,
      Number.POSITIVE_INFINITY,
      1n,
      new Map(),
      new Set(),
      () => 0,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 }),
        bad,
        async (data, leaf) => {
          const ok = new FakeSqs();
          await client(ok).send(anyData, data);
          // (as a plain JSON round trip gives it: -0 travels as 0)
          expect(JSON.parse(ok.batchEntries()[0]?.MessageBody as string).data).toEqual(
            JSON.parse(JSON.stringify(data)),
          );

          const key = Object.keys(data)[0] as string;
          const message = await refusal(client(new FakeSqs()).send(anyData, { ...data, [key]: [leaf] }));
          expect(message).toContain(`data.${key}[0]: `);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('ctx.enqueue checks the child data as JSON', () => {
  const child = defineJob({
    type: 'calendar.invite',
    queue: 'any',
    schema: z.object({ tags: z.array(z.string()) }),
    run: async () => {},
  });
  const childWithDate = defineJob({
    type: 'calendar.remind',
    queue: 'any',
    schema: z.object({ at: z.date() }),
    run: async () => {},
  });

  function parent(
    enqueue: (ctx: Parameters<Parameters<typeof defineJob>[0]['run']>[1]) => void,
    effects: string[],
  ) {
    return defineJob({
      type: 'calendar.plan',
      queue: 'any',
      schema: z.object({ id: z.string() }),
      run: async (_, ctx) => {
        enqueue(ctx);
        effects.push('after enqueue');
      },
    });
  }

  it('refuses a child whose data JSON cannot carry at the ctx.enqueue call: the parent is dead-lettered, nothing sent', async () => {
    const effects: string[] = [];
    const h = workerHarness({
      queueUrls: { any: STD_URL },
      jobs: [parent((ctx) => ctx.enqueue(child, { tags: new Set(['a']) as unknown as string[] }), effects)],
    });
    const { response } = await h.invoke([sqsRecord({ body: jobBody('calendar.plan', { id: 'p-1' }) })]);
    expect(response.batchItemFailures).toEqual([]);
    expect(effects).toEqual([]);
    expect(h.sqs.batchEntries()).toEqual([]);
    const attributes = h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.ErrorName?.StringValue).toBe('ChildRejectedError');
    expect(attributes?.ErrorMessage?.StringValue).toMatch(/data\.tags: a Set has no JSON form/);
  });

  it('refuses a child whose schema only the in-memory value passes (z.date() given a Date)', async () => {
    const effects: string[] = [];
    const h = workerHarness({
      queueUrls: { any: STD_URL },
      jobs: [parent((ctx) => ctx.enqueue(childWithDate, { at: new Date() }), effects)],
    });
    const { response } = await h.invoke([sqsRecord({ body: jobBody('calendar.plan', { id: 'p-2' }) })]);
    expect(response.batchItemFailures).toEqual([]);
    expect(h.sqs.batchEntries()).toEqual([]);
    const attributes = h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.ErrorName?.StringValue).toBe('ChildRejectedError');
    expect(attributes?.ErrorMessage?.StringValue).toMatch(/data\.at: .*expected date/i);
  });

  it('sends the child data as it was at the ctx.enqueue call', async () => {
    const h = workerHarness({
      queueUrls: { any: STD_URL },
      jobs: [
        parent((ctx) => {
          const data = { tags: ['a'] };
          ctx.enqueue(child, data);
          data.tags.push('changed later');
        }, []),
      ],
    });
    await h.invoke([sqsRecord({ body: jobBody('calendar.plan', { id: 'p-3' }) })]);
    const sent = JSON.parse(h.sqs.batchEntries()[0]?.MessageBody as string) as JobEnvelope;
    expect(sent.data).toEqual({ tags: ['a'] });
  });
});

describe('JobClient.sendEnvelope of an object', () => {
  it('refuses values JSON would change, naming the path, instead of sending null', async () => {
    const sqs = new FakeSqs();
    const envelope = {
      specversion: '1.0',
      id: 'e-1',
      source: '/s',
      type: 'any.data',
      time: '2026-11-29T07:00:00Z',
      datacontenttype: 'application/json',
      data: { amount: Number.NaN, seen: new Set(['a']) },
    };
    const message = await refusal(client(sqs).sendEnvelope('any', envelope));
    expect(message).toBe(
      'envelope is not JSON-serializable (envelope.data.amount: NaN has no JSON form: JSON would send null; envelope.data.seen: a Set has no JSON form of its own: JSON would send its own enumerable properties only, {}; send a plain object or array, or give the class a toJSON())',
    );
    expect(sqs.calls).toHaveLength(0);
  });
});
