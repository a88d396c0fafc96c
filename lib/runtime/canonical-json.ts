/**
 * Canonical JSON of job data and its hash, so that the same payload always hashes the same no
 * matter the key order the producer used. Key order and number form follow RFC 8785 (JSON
 * Canonicalization Scheme) §3.2.3 and §3.2.2.3: object keys sorted by UTF-16 code units, numbers
 * written the way ECMAScript `JSON.stringify` writes them.
 */
import { createHash } from 'node:crypto';

/**
 * Serializes a JSON-compatible value with object keys sorted (recursively).
 *
 * Same value rules as `JSON.stringify`: `toJSON` is honoured, `undefined` / functions / symbols
 * are dropped from objects and become `null` in arrays, non-finite numbers become `null`.
 *
 * @throws {TypeError} on a `bigint` or a circular structure (neither has a JSON form).
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, new Set()) ?? 'null';
}

/**
 * SHA-256 hex (64 chars) of {@link canonicalJson}: the `payloadHash` the idempotency guard
 * compares to tell a duplicate delivery from a different job reusing the same key.
 * @throws {TypeError} as {@link canonicalJson} does (a `bigint` or a circular structure).
 */
export function payloadHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** Returns undefined for values JSON leaves out (undefined, functions, symbols). */
function serialize(input: unknown, ancestors: Set<object>): string | undefined {
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
  try {
    if (Array.isArray(obj)) {
      return `[${obj.map((item) => serialize(item, ancestors) ?? 'null').join(',')}]`;
    }
    const record = obj as Record<string, unknown>;
    // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 asks for.
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const text = serialize(record[key], ancestors);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    ancestors.delete(obj);
  }
}
