/** Canonical JSON and the payload hash the worker gives the idempotency guard. */
import { describe, expect, it } from 'vitest';
import { canonicalJson, payloadHash } from '../../lib/runtime/canonical-json.ts';

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
