/**
 * `sqs-jobs dlq show` (text): the body is shown as received. It is indented only when parsing and
 * re-serialising it changes nothing but whitespace; a number binary64 cannot hold, a respelled
 * number, an escape or a duplicate key keeps the raw text.
 */
import { describe, expect, it } from 'vitest';
import { toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import { prettyBody, renderMessage } from '../../lib/ops/format.ts';

function bodyLines(body: string): string {
  const text = renderMessage(toDeadLetterMessage({ MessageId: 'm-1', ReceiptHandle: 'r-1', Body: body }));
  return text
    .slice(text.indexOf('\nbody:\n') + '\nbody:\n'.length)
    .split('\n')
    .map((line) => line.replace(/^ {2}/, ''))
    .join('\n')
    .trimEnd();
}

const ENVELOPE = (data: string) =>
  `{"specversion":"1.0","id":"job-1","source":"/php","type":"payments.capture","data":${data}}`;

describe('dlq show: the body as received', () => {
  it.each([
    ['an integer beyond binary64 precision', '{"ref":12345678901234567890}'],
    ['a number beyond binary64 range', '{"amount":1e400}'],
    ['a respelled number', '{"amount":10.50}'],
    ['an exponent', '{"amount":1E3}'],
    ['an escape', '{"name":"caf\\u00e9"}'],
    ['a duplicate key', '{"a":1,"a":2}'],
  ])('%s: the raw text, not the re-serialised value', (_, data) => {
    const body = ENVELOPE(data);
    expect(bodyLines(body)).toBe(body);
    expect(prettyBody(body)).toBe(body);
  });

  it('a body that re-serialises to itself is indented (whitespace is all that changes)', () => {
    const body = `{ "specversion": "1.0",\n "id": "job-1", "data": {"ids": [1, 2], "note": "a \\"b\\" {c}  d", "x": null} }`;
    const shown = bodyLines(body);
    expect(shown).toBe(JSON.stringify(JSON.parse(body), null, 2));
    expect(shown.split('\n').length).toBeGreaterThan(3);
  });

  it('a body that is not JSON is shown as it is', () => {
    expect(bodyLines('not json {')).toBe('not json {');
  });
});
