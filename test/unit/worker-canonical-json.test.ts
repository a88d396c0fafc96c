/** Canonical JSON and the payload hash the worker gives the idempotency guard. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, payloadHash } from '../../lib/core/canonical-json.ts';

/** The rule written the obvious (recursive) way, as the oracle for shallow values. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${sortedJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('canonicalJson', () => {
  it.each([
    { name: 'sorts keys', value: { b: 1, a: 2 }, expected: '{"a":2,"b":1}' },
    {
      name: 'sorts nested keys, keeps array order',
      value: { z: [{ y: 1, x: 2 }, 3], a: null },
      expected: '{"a":null,"z":[{"x":2,"y":1},3]}',
    },
    {
      name: 'drops undefined in objects, nulls it in arrays',
      value: { a: undefined, b: [undefined] },
      expected: '{"b":[null]}',
    },
    {
      name: 'non-finite numbers become null',
      value: [Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21],
      expected: '[null,null,0,1e+21]',
    },
    {
      name: 'honours toJSON',
      value: { at: new Date('2026-11-29T07:00:00Z') },
      expected: '{"at":"2026-11-29T07:00:00.000Z"}',
    },
    { name: 'escapes strings like JSON', value: { 'k"': 'a\nb' }, expected: '{"k\\"":"a\\nb"}' },
    {
      name: 'sorts by UTF-16 code units (RFC 8785)',
      value: { é: 1, z: 2, Z: 3 },
      expected: '{"Z":3,"z":2,"é":1}',
    },
    { name: 'top-level undefined is null', value: undefined, expected: 'null' },
  ])('$name', ({ value, expected }) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('refuses a bigint and a cycle', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    expect(() => canonicalJson(cyclic)).toThrow(/circular/);
  });

  it('is the sorted-key JSON of any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(sortedJson(value));
      }),
    );
  });

  it('writes data nested as deep as a 1 MiB body can hold (the walk uses no stack per level)', () => {
    // 500,000 levels: a 1 MiB SQS body of nested arrays and objects, as JSON.parse hands it over.
    const depth = 250_000;
    const text = `${'[{"a":'.repeat(depth)}1${'}]'.repeat(depth)}`;
    expect(canonicalJson(JSON.parse(text))).toBe(text);
  });

  it('accepts the same object twice when it is not a cycle', () => {
    const shared = { a: 1 };
    expect(canonicalJson({ x: shared, y: shared })).toBe('{"x":{"a":1},"y":{"a":1}}');
  });
});

describe('payloadHash', () => {
  it('is the same for the same data in any key order, and 64 hex chars', () => {
    const one = payloadHash({ orderId: 'o1', lines: [{ sku: 'a', qty: 1 }] });
    const two = payloadHash({ lines: [{ qty: 1, sku: 'a' }], orderId: 'o1' });
    expect(one).toBe(two);
    expect(one).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs when a value differs', () => {
    expect(payloadHash({ orderId: 'o1' })).not.toBe(payloadHash({ orderId: 'o2' }));
  });
});
