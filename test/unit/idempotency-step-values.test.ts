/**
 * Which step values and job results are stored whole: only those whose JSON text reads back the
 * same value (faithful-json.ts). Everything else gets the "not stored" marker with a sentence naming
 * the subject, the kind and the path, and a retry that needs a step's value stops with the
 * permanent StepValueNotStoredError carrying that sentence.
 */
import { describe, expect, it } from 'vitest';
import { classifyError, PermanentError } from '../../lib/core/errors.ts';
import { jsonValueProblems } from '../../lib/core/json-value.ts';
import { StepValueNotStoredError } from '../../lib/runtime/idempotency/errors.ts';
import { firstUnfaithfulPlace, unfaithfulJsonReason } from '../../lib/runtime/idempotency/faithful-json.ts';
import { stepValue } from '../../lib/runtime/idempotency/read-back.ts';
import {
  MAX_ERROR_BYTES,
  parseStepRecord,
  type StepRecord,
  stepRecordToItem,
} from '../../lib/runtime/idempotency/record.ts';
import { storable } from '../../lib/runtime/idempotency/storable.ts';
import type { JobContext } from '../../lib/runtime/job.ts';

class Money {
  constructor(readonly cents: number) {}
}
class Stamp {
  toJSON() {
    return 'stamp';
  }
}

/** Values JSON would change, with the kind and the path (root `value`) the sentence names. */
const UNFAITHFUL: ReadonlyArray<readonly [string, () => unknown, string, string]> = [
  ['a Map', () => ({ items: new Map([['a', 1]]) }), 'a Map', 'value.items'],
  ['a Set', () => [new Set([1])], 'a Set', 'value[0]'],
  ['a Date', () => new Date('2026-11-29T08:00:00.000Z'), 'a Date', 'value'],
  ['an invalid Date', () => ({ at: new Date(Number.NaN) }), 'a Date', 'value.at'],
  ['NaN', () => Number.NaN, 'NaN', 'value'],
  ['Infinity', () => ({ rate: Number.POSITIVE_INFINITY }), 'Infinity', 'value.rate'],
  ['-Infinity', () => ({ rate: Number.NEGATIVE_INFINITY }), '-Infinity', 'value.rate'],
  ['undefined in an array', () => [1, undefined], 'undefined in an array', 'value[1]'],
  [
    'a hole',
    () => {
      const sparse: unknown[] = [1];
      sparse[2] = 3;
      return sparse;
    },
    'a hole in an array',
    'value[1]',
  ],
  ['a bigint', () => ({ id: 10n }), 'a bigint', 'value.id'],
  ['a function', () => ({ cb: () => 1 }), 'a function', 'value.cb'],
  ['a symbol', () => ({ s: Symbol('x') }), 'a symbol', 'value.s'],
  ['a class instance', () => ({ price: new Money(5) }), 'an instance of Money', 'value.price'],
  ['a toJSON()', () => ({ s: new Stamp() }), 'an instance of Stamp with toJSON()', 'value.s'],
  ['a plain toJSON()', () => ({ toJSON: () => 1 }), 'an object with toJSON()', 'value'],
  ['a Buffer', () => Buffer.from('x'), 'an instance of Buffer with toJSON()', 'value'],
  [
    'a cycle',
    () => {
      const a: Record<string, unknown> = {};
      a.self = a;
      return a;
    },
    'a circular reference',
    'value.self',
  ],
  [
    'a throwing getter',
    () =>
      Object.defineProperty({}, 'x', {
        enumerable: true,
        get() {
          throw new Error('no');
        },
      }),
    'a property whose getter throws',
    'value.x',
  ],
  ['a key needing quotes', () => ({ 'a b': [{ when: new Date(0) }] }), 'a Date', 'value["a b"][0].when'],
];

/** Values that read back the same (deep-equal) from their JSON text. */
const FAITHFUL: ReadonlyArray<readonly [string, unknown]> = [
  ['undefined (nothing stored)', undefined],
  ['null', null],
  ['a string', 'ch_1'],
  ['a lone surrogate', '\ud800'],
  ['a number', 42.5],
  ['-0 (reads back 0, which === it)', -0],
  ['a boolean', false],
  ['a plain object', { chargeId: 'ch_1', amounts: [1, 2, { n: null }], at: '2026-11-29T08:00:00.000Z' }],
  ['an optional property left undefined', { chargeId: 'ch_1', note: undefined }],
  ['a null-prototype object', Object.assign(Object.create(null), { a: 1 })],
  [
    'shared (not circular) references',
    (() => {
      const shared = { id: 1 };
      return [shared, shared];
    })(),
  ],
];

describe('firstUnfaithfulPlace / unfaithfulJsonReason', () => {
  for (const [label, make, kind, path] of UNFAITHFUL) {
    it(`refuses ${label}, naming the kind and the path`, () => {
      expect(firstUnfaithfulPlace(make(), 'value')).toEqual({ path, kind });
      expect(unfaithfulJsonReason(make(), { kind: 'step', stepName: 'charge' })).toBe(
        `step 'charge' returned ${kind} at ${path}: step values must be JSON values (objects, arrays, strings, finite numbers, booleans, null) so a retry reads back the same`,
      );
    });
  }
  for (const [label, value] of FAITHFUL) {
    it(`accepts ${label}`, () => {
      expect(firstUnfaithfulPlace(value, 'value')).toBeUndefined();
      // -0 reads back as 0, which === it (toEqual tells them apart).
      if (value !== undefined)
        expect(JSON.parse(JSON.stringify(value))).toEqual(Object.is(value, -0) ? 0 : value);
    });
  }

  it('is at least as strict as the check of job data (lib/core/json-value.ts)', () => {
    for (const [, make] of UNFAITHFUL) {
      expect(firstUnfaithfulPlace(make(), 'value')).toBeDefined();
    }
    // Whatever the data check refuses, this refuses too (the top-level undefined aside, which a
    // step may return); it does not read a throwing getter, so that case is left out here.
    for (const [label, make] of UNFAITHFUL) {
      if (label === 'a throwing getter') continue;
      for (const value of [make(), { nested: [make()] }]) {
        if (jsonValueProblems(value, 'value').length > 0)
          expect(firstUnfaithfulPlace(value, 'value')).toBeDefined();
      }
    }
    for (const [, value] of FAITHFUL) {
      if (value !== undefined) expect(jsonValueProblems(value, 'value')).toEqual([]);
    }
    // And what it accepts but JSON changes: objects with toJSON().
    expect(jsonValueProblems(new Date(0), 'value')).toEqual([]);
    expect(firstUnfaithfulPlace(new Date(0), 'value')).toEqual({ path: 'value', kind: 'a Date' });
  });

  it('names a job result with its own sentence', () => {
    expect(unfaithfulJsonReason({ at: new Date(0) }, { kind: 'result', jobType: 'mail.send' })).toBe(
      "job 'mail.send' returned a Date at result.at: job results must be JSON values (objects, arrays, strings, finite numbers, booleans, null) so a duplicate delivery reads back the same",
    );
  });
});

describe('storable', () => {
  const step = { kind: 'step', stepName: 'charge' } as const;

  it('stores a faithful value whole, and undefined as nothing', () => {
    expect(storable({ id: 'ch_1' }, undefined, 1024, step)).toEqual({
      stored: true,
      json: '{"id":"ch_1"}',
      bytes: 13,
      reason: undefined,
    });
    expect(storable(undefined, undefined, 1024, step)).toMatchObject({
      stored: true,
      json: undefined,
      bytes: 0,
    });
  });

  it('writes the marker not-json with the reason for a value JSON would change, whatever its size', () => {
    for (const [, make, kind, path] of UNFAITHFUL) {
      const out = storable(make(), undefined, 1024, step);
      expect(out.stored).toBe(false);
      expect(out.json).toBeUndefined();
      expect(out.reason).toBe('not-json');
      expect(out.detail).toContain(`returned ${kind} at ${path}`);
    }
    // Judged before the size: a small Map is not stored as "{}".
    expect(storable(new Map(), undefined, 1024, step)).toMatchObject({
      stored: false,
      bytes: 2,
      reason: 'not-json',
    });
  });

  it('keeps the over-cap marker for faithful values over the cap', () => {
    const out = storable('x'.repeat(100), undefined, 16, step);
    expect(out).toMatchObject({ stored: false, reason: 'over-size-cap' });
    expect(out.detail).toBeUndefined();
  });
});

describe('a step record with the not-json marker', () => {
  function stepRecord(over: Partial<StepRecord> = {}): StepRecord {
    return {
      pk: 'payments.capture#/checkout\no-1#step#charge',
      recordType: 'step',
      status: 'COMPLETED',
      generation: 'g-1',
      stepName: 'charge',
      valueStored: false,
      value: undefined,
      valueBytes: 2,
      valueOmittedReason: 'not-json',
      valueOmittedDetail:
        "step 'charge' returned a Map at value.items: step values must be JSON values (objects, arrays, strings, finite numbers, booleans, null) so a retry reads back the same",
      expiresAt: 2_000_000_000,
      completedAtMs: 1,
      attempt: 1,
      leaseToken: 't',
      writeId: 'w',
      ...over,
    };
  }

  it('round-trips its reason through the item, cut to MAX_ERROR_BYTES', () => {
    const record = stepRecord();
    expect(parseStepRecord(stepRecordToItem(record))).toEqual(record);
    const long = stepRecord({ valueOmittedDetail: `step '${'s'.repeat(5000)}' returned a Map at value` });
    expect(Buffer.byteLength(stepRecordToItem(long).valueOmittedDetail?.S ?? '')).toBe(MAX_ERROR_BYTES);
  });

  it('answers a retry with the permanent StepValueNotStoredError naming the step, the kind and the path', () => {
    let error: unknown;
    try {
      stepValue(stepRecord(), 1024);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(StepValueNotStoredError);
    expect(error).toBeInstanceOf(PermanentError);
    expect(classifyError(error).kind).toBe('permanent');
    const message = (error as Error).message;
    expect(message).toContain("step 'charge' returned a Map at value.items: step values must be JSON values");
    expect(message).toContain('does not run the step again');
    expect((error as StepValueNotStoredError).context).toMatchObject({
      reason: 'not-json',
      stepName: 'charge',
    });
  });

  it('still explains a record written before the reason was kept', () => {
    expect(() => stepValue(stepRecord({ valueOmittedDetail: undefined }), 1024)).toThrow(
      /was not stored \(it has no JSON form that reads back the same\)/,
    );
    expect(() =>
      stepValue(
        stepRecord({ valueOmittedReason: 'over-size-cap', valueOmittedDetail: undefined, valueBytes: 99 }),
        16,
      ),
    ).toThrow(/99 bytes, over-size-cap.*keep step values small/);
  });
});

describe('the type of ctx.once (checked by tsc --noEmit)', () => {
  it('takes JSON value types and refuses what types can tell JSON would change', async () => {
    const ctx = { once: async (_step: string, fn: () => Promise<unknown>) => fn() } as unknown as JobContext;
    interface Charge {
      readonly chargeId: string;
      readonly amounts: readonly number[];
      readonly note?: string;
    }
    const charge: Charge = await ctx.once(
      'charge',
      async (): Promise<Charge> => ({ chargeId: 'c', amounts: [1] }),
    );
    const nothing = await ctx.once('mail', async () => {});
    const id: string | null = await ctx.once('id', async () => (Math.random() > 2 ? 'x' : null));
    const loose: unknown = await ctx.once('loose', async (): Promise<unknown> => new Date(0));
    expect([charge.chargeId, nothing, id, loose instanceof Date]).toEqual(['c', undefined, null, true]);
    // @ts-expect-error a Date reads back as its ISO string
    await ctx.once('date', async () => new Date(0));
    // @ts-expect-error a Map reads back as {}
    await ctx.once('map', async () => ({ items: new Map<string, number>() }));
    // @ts-expect-error a Set reads back as {}
    await ctx.once('set', async () => [new Set<number>()]);
    // @ts-expect-error a bigint has no JSON form
    await ctx.once('big', async () => ({ id: 1n }));
    // @ts-expect-error a function is dropped
    await ctx.once('fn', async () => ({ cb: () => 1 }));
  });
});
