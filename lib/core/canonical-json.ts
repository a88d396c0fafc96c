/**
 * Canonical JSON of job data and its hash, so that the same payload always hashes the same no
 * matter the key order the producer used. Key order and number form follow RFC 8785 (JSON
 * Canonicalization Scheme) §3.2.3 and §3.2.2.3: object keys sorted by UTF-16 code units, numbers
 * written the way ECMAScript `JSON.stringify` writes them.
 *
 * The walk keeps its own stack instead of recursing: job data comes from `JSON.parse` of an SQS
 * body, which nests as deep as the body allows (a 1 MiB body holds ~500,000 levels, and V8's
 * `JSON.parse` takes them all), while a recursive walk overflowed Lambda's main-thread stack at
 * about 2,000 levels (issue 22). Depth costs heap here, one small frame per open level, never stack.
 */
import { createHash } from 'node:crypto';

/**
 * Serializes a JSON-compatible value with object keys sorted (recursively), at any depth.
 *
 * Same value rules as `JSON.stringify`: `toJSON` is honoured, `undefined` / functions / symbols
 * are dropped from objects and become `null` in arrays, non-finite numbers become `null`.
 *
 * @throws {TypeError} on a `bigint` or a circular structure (neither has a JSON form).
 */
export function canonicalJson(value: unknown): string {
  const ancestors = new Set<object>();
  const stack: Frame[] = [];
  let text = open(value, stack, ancestors);
  for (;;) {
    let frame = stack[stack.length - 1];
    if (text !== OPENED) {
      // A finished value: the result, or the next member of the innermost open container.
      if (frame === undefined) return text ?? 'null';
      if (frame.keys === undefined) frame.parts.push(text ?? 'null');
      else if (text !== undefined) frame.parts.push(`${JSON.stringify(frame.keys[frame.index - 1])}:${text}`);
    }
    frame = stack[stack.length - 1] as Frame;
    if (frame.index < frame.length) {
      const at = frame.index++;
      const member =
        frame.keys === undefined
          ? (frame.value as unknown[])[at]
          : (frame.value as Record<string, unknown>)[frame.keys[at] as string];
      text = open(member, stack, ancestors);
    } else {
      stack.pop();
      ancestors.delete(frame.value);
      text = frame.keys === undefined ? `[${frame.parts.join(',')}]` : `{${frame.parts.join(',')}}`;
    }
  }
}

/**
 * SHA-256 hex (64 chars) of {@link canonicalJson}: the `payloadHash` the idempotency guard
 * compares to tell a duplicate delivery from a different job reusing the same key.
 * @throws {TypeError} as {@link canonicalJson} does (a `bigint` or a circular structure).
 */
export function payloadHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** An array or object being written: its members so far, and where the walk is in it. */
interface Frame {
  readonly value: object;
  /** Sorted keys of an object; undefined for an array. */
  readonly keys: string[] | undefined;
  readonly length: number;
  index: number;
  readonly parts: string[];
}

/** Returned by {@link open} when it pushed a container instead of finishing a value. */
const OPENED: unique symbol = Symbol('opened');

/**
 * The JSON text of a leaf (undefined for values JSON leaves out: undefined, functions, symbols),
 * or {@link OPENED} after pushing the frame of an array or object.
 */
function open(input: unknown, stack: Frame[], ancestors: Set<object>): string | undefined | typeof OPENED {
  let value = input;
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      throw new TypeError('canonicalJson: a bigint has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (ancestors.has(obj)) throw new TypeError('canonicalJson: circular structure');
  ancestors.add(obj);
  if (Array.isArray(obj)) {
    stack.push({ value: obj, keys: undefined, length: obj.length, index: 0, parts: [] });
  } else {
    // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 asks for.
    const keys = Object.keys(obj).sort();
    stack.push({ value: obj, keys, length: keys.length, index: 0, parts: [] });
  }
  return OPENED;
}
