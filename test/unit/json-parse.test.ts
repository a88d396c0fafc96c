/**
 * parseJsonText keeps keys of one escaped character, which V8 13.6's JSON.parse fast path turns
 * into "\" once a key "\" was parsed in the process (lib/core/json-parse.ts).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import { parseJsonText } from '../../lib/core/json-parse.ts';

const ESCAPED_ONE_CHARACTER_KEYS = ['\n', '\t', '"', '/', 'A', '\uFFFE', '\u0000', '\\'];

describe('parseJsonText', () => {
  it('reads every key of one escaped character right, after a key "\\\\" went through JSON.parse (fresh process)', () => {
    // A fresh process: what else the test runner parsed before decides whether V8's fast path is
    // already poisoned or already holds the right keys. The trigger: a plain JSON.parse of the key "\".
    const script = `
      import { parseJsonText } from ${JSON.stringify(new URL('../../lib/core/json-parse.ts', import.meta.url).href)};
      JSON.parse('{"\\\\\\\\":1}');
      const keys = ${JSON.stringify(ESCAPED_ONE_CHARACTER_KEYS)}.map((key) =>
        Object.keys(parseJsonText('{' + JSON.stringify(key).replace('A', '\\\\u0041') + ':1}'))[0]);
      process.stdout.write(JSON.stringify(keys));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual(ESCAPED_ONE_CHARACTER_KEYS);
  });

  it('parses like JSON.parse otherwise, and throws its SyntaxError', () => {
    const text = '{"a":[1,"x",{"b":null}],"\\u00e9t\\u00e9":true}';
    expect(parseJsonText(text)).toEqual(JSON.parse(text));
    expect(() => parseJsonText('{"a":')).toThrow(SyntaxError);
  });

  it('the worker reads a job whose data has such keys as it was sent', () => {
    JSON.parse('{"\\\\":1}');
    const data = { '\n': 1, '\uFFFE': { '\t': 2 } };
    const body = JSON.stringify({
      specversion: '1.0',
      id: 'j-1',
      source: '/test',
      type: 't',
      time: '2026-11-30T12:00:00.000Z',
      datacontenttype: 'application/json',
      data,
    });
    expect(parseEnvelope(body).data).toEqual(data);
  });
});
