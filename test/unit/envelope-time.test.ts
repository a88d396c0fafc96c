import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EnvelopeError, parseEnvelope } from '../../lib/core/envelope.ts';

// The worker reads `time` character by character (issue 10: the regular expression was a third
// of the envelope's checks per record). It must answer as the shipped schema's pattern plus the
// calendar check of RFC 3339 §5.7 does, for every string.
const schema = JSON.parse(
  readFileSync(new URL('../../lib/core/envelope.schema.json', import.meta.url), 'utf8'),
) as { properties: { time: { pattern: string } } };
const pattern = new RegExp(schema.properties.time.pattern);

function reference(time: string): boolean {
  if (!pattern.test(time)) return false;
  const year = Number(time.slice(0, 4));
  const month = Number(time.slice(5, 7));
  const day = Number(time.slice(8, 10));
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number;
  return day <= days;
}

function accepted(time: string): boolean {
  const body = JSON.stringify({
    specversion: '1.0',
    id: 'j-1',
    source: '/tests',
    type: 'orders.capture',
    time,
    datacontenttype: 'application/json',
    data: {},
  });
  try {
    parseEnvelope(body);
    return true;
  } catch (error) {
    if (error instanceof EnvelopeError && error.field === 'time') return false;
    throw error;
  }
}

// Valid timestamps with one to three characters replaced, cut or extended: near misses of every kind.
const alphabet = fc.constantFrom(...'0123456789-:.TtZz+ x2359'.split(''));
const validTimes = fc
  .record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.integer({ min: 0, max: 61 }),
    fraction: fc.option(fc.stringMatching(/^\d{0,9}$/), { nil: undefined }),
    offset: fc.constantFrom('Z', 'z', '+05:30', '-08:00', '+24:00', '-23:59', '+0100', ''),
    t: fc.constantFrom('T', 't', ' '),
  })
  .map(({ year, month, day, hour, minute, second, fraction, offset, t }) => {
    const p = (n: number, w = 2) => String(n).padStart(w, '0');
    const frac = fraction === undefined ? '' : `.${fraction}`;
    return `${p(year, 4)}-${p(month)}-${p(day)}${t}${p(hour)}:${p(minute)}:${p(second)}${frac}${offset}`;
  });
const nearMisses = fc
  .tuple(
    validTimes,
    fc.array(fc.tuple(fc.nat(40), alphabet, fc.constantFrom('replace', 'insert', 'cut')), { maxLength: 3 }),
  )
  .map(([time, edits]) =>
    edits.reduce((s, [at, ch, how]) => {
      const i = at % (s.length + 1);
      if (how === 'replace') return s.slice(0, i) + ch + s.slice(i + 1);
      if (how === 'insert') return s.slice(0, i) + ch + s.slice(i);
      return s.slice(0, i);
    }, time),
  );

describe('envelope time check', () => {
  it('accepts exactly what the schema pattern and the calendar accept', () => {
    fc.assert(
      fc.property(fc.oneof(validTimes, nearMisses, fc.string({ maxLength: 40 })), (time) => {
        expect(accepted(time)).toBe(reference(time));
      }),
      { numRuns: 20_000 },
    );
  });
});
