/**
 * lib/core/characters.ts: the one place of SQS's character rule (SendMessage API, MessageBody; the
 * same for String attribute values), and the escaping that keeps JSON lossless.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bodyToSendOn,
  escapeRefusedCharacters,
  firstRefusedCharacter,
  isValidSqsText,
  stringifyForSqs,
} from '../../lib/core/characters.ts';

/** The rule as the API reference writes it, code point by code point. */
function takenBySqs(codePoint: number): boolean {
  return (
    codePoint === 0x9 ||
    codePoint === 0xa ||
    codePoint === 0xd ||
    (codePoint >= 0x20 && codePoint <= 0xd7ff) ||
    (codePoint >= 0xe000 && codePoint <= 0xfffd) ||
    (codePoint >= 0x10000 && codePoint <= 0x10ffff)
  );
}

/** Code points of a string as SQS (UTF-8) sees them; a lone surrogate is its own, refused, unit. */
function codePoints(text: string): number[] {
  return [...text].map((c) => c.codePointAt(0) as number);
}

const anyText = fc.string({ unit: 'binary', maxLength: 60 });

describe('isValidSqsText', () => {
  it('agrees with the rule of the API reference for every BMP code unit and astral samples', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      expect(isValidSqsText(String.fromCharCode(unit))).toBe(takenBySqs(unit));
    }
    for (const astral of [0x10000, 0x1f600, 0x10ffff]) {
      expect(isValidSqsText(String.fromCodePoint(astral))).toBe(true);
    }
  });

  it('agrees with the rule on any text (property)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(isValidSqsText(text)).toBe(codePoints(text).every(takenBySqs));
      }),
    );
  });
});

describe('firstRefusedCharacter', () => {
  it('names the first refused character and where it is', () => {
    expect(firstRefusedCharacter('ok \u{1F600}')).toBeUndefined();
    expect(firstRefusedCharacter('ab\uFFFFc\u0000')).toEqual({ codePoint: 0xffff, index: 2, name: 'U+FFFF' });
    expect(firstRefusedCharacter('\u{1F600}\uD800')).toEqual({ codePoint: 0xd800, index: 2, name: 'U+D800' });
  });
});

describe('escapeRefusedCharacters', () => {
  it('writes each refused character as \\uXXXX and keeps the rest', () => {
    expect(escapeRefusedCharacters('\u001b[31mred\u001b[0m\u0000 \u{1F600} \uFFFE\uDC00')).toBe(
      '\\u001b[31mred\\u001b[0m\\u0000 \u{1F600} \\ufffe\\udc00',
    );
    const clean = 'tab\there é \u{1F600}';
    expect(escapeRefusedCharacters(clean)).toBe(clean);
  });

  it('always gives text SQS takes (property)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(isValidSqsText(escapeRefusedCharacters(text))).toBe(true);
      }),
    );
  });

  it('is lossless on JSON text: JSON.parse gives the same value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        // The same value as a plain JSON round trip gives (which writes -0 as 0).
        const expected = JSON.parse(JSON.stringify(value));
        const json = stringifyForSqs(value) as string;
        expect(isValidSqsText(json)).toBe(true);
        expect(JSON.parse(json)).toEqual(expected);
        // JSON text with raw refused characters (as another tool may write it) comes back the same too.
        // (an escape is one preceded by an even number of backslashes)
        const raw = JSON.stringify(value).replace(
          /(?<!\\)((?:\\\\)*)\\u(d[89a-f][0-9a-f]{2})/g,
          (_, before: string, hex: string) => before + String.fromCharCode(Number.parseInt(hex, 16)),
        );
        expect(JSON.parse(bodyToSendOn(raw))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe('bodyToSendOn', () => {
  it('returns a body SQS takes as the very same string', () => {
    const body = '{"a":"\\uffff\u{1F600}"}';
    expect(bodyToSendOn(body)).toBe(body);
  });
});
