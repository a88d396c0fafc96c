/**
 * `JSON.parse` that gives the right keys on Node 24 too.
 *
 * V8 13.6 (Node 24.21, checked 2026-11-30; Node 20 is not affected): once an object key that is a
 * single backslash (`"\\"`) has been parsed by `JSON.parse`'s fast path in a process, every later
 * object whose key at the same place in its shape is one character written as an escape (`"\n"`,
 * `"\""`, `"\u0041"`, `"\ufffe"` …) gets the key `"\"` instead. A job with such a key would run
 * with other data than it was sent with. `JSON.parse` with a reviver takes another path that
 * parses those keys right, and parsing them there also never poisons the fast path. It is taken
 * only for texts that hold a key of one escaped character (rare), so the common path keeps its
 * speed. Reproduction: test/unit/json-parse.test.ts.
 */

/** A key that is exactly one character written as a JSON escape (RFC 8259 §7). */
const ONE_ESCAPED_CHARACTER_KEY = /"\\(?:u[0-9A-Fa-f]{4}|["\\/bfnrt])"\s*:/;

const keepValue = (_key: string, value: unknown): unknown => value;

/**
 * Parses JSON text as `JSON.parse` does.
 * @throws {SyntaxError} as `JSON.parse` does.
 */
export function parseJsonText(text: string): unknown {
  // Most texts hold no backslash at all: one indexOf instead of the pattern's scan (the pattern
  // scan was 6 % of the worker's CPU per record, issue 10 profile).
  if (text.indexOf('\\') === -1) return JSON.parse(text);
  return ONE_ESCAPED_CHARACTER_KEY.test(text) ? JSON.parse(text, keepValue) : JSON.parse(text);
}
