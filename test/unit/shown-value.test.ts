/** How error messages show a value (lib/core/shown-value.ts): JSON, except where JSON would hide what was given. */
import { describe, expect, it } from 'vitest';
import { shownValue } from '../../lib/core/shown-value.ts';

describe('shownValue', () => {
  it('is JSON for JSON values', () => {
    expect(shownValue('x')).toBe('"x"');
    expect(shownValue(null)).toBe('null');
    expect(shownValue({ a: [1, true] })).toBe('{"a":[1,true]}');
  });

  it('keeps what JSON turns into null or nothing: NaN, Infinity, undefined, functions, bigints', () => {
    expect(shownValue(Number.NaN)).toBe('NaN');
    expect(shownValue(Number.NEGATIVE_INFINITY)).toBe('-Infinity');
    expect(shownValue(undefined)).toBe('undefined');
    expect(shownValue(() => 1)).toBe('a function');
    expect(shownValue(10n)).toBe('10n');
    expect(shownValue({ limit: Number.NaN, n: 2n })).toBe('{"limit":"NaN","n":"2n"}');
  });
});
