/**
 * Option objects checked for keys the client does not know. From plain JavaScript a misspelled
 * key (`{ delay: 30 }` for `delaySeconds`) is not a compile error; ignored, it would send the job
 * at once. Every unknown key is refused, naming the known keys and the nearest one.
 */

/** Edit distance of two short strings (Levenshtein), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[y.length] as number;
}

/** The known key `key` was most likely meant to be, or undefined when none is close. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const bare = lower.replace(/[-_\s]/g, '');
  const byPrefix = known.find((k) => {
    const candidate = k.toLowerCase();
    return (
      (bare.length >= 3 && (candidate.startsWith(bare) || bare.startsWith(candidate))) ||
      (bare.length >= 4 && candidate.includes(bare))
    );
  });
  if (byPrefix !== undefined) return byPrefix;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = distance(bare, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(key.length / 3)) ? best : undefined;
}

/** A short description of a value that is not what was expected: `an array`, `a string ("x")`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Map) return 'a Map';
  if (value instanceof Set) return 'a Set';
  if (typeof value === 'string')
    return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}${typeof value === 'number' || typeof value === 'boolean' ? ` (${String(value)})` : ''}`;
}

/** Whether `value` is a plain object (a literal `{...}`, `Object.create(null)`), not an array, Map or class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * One problem per key of `value` that is not in `known`.
 *
 * @param where how the caller spelled the object: `options` gives `options.delay`.
 * @param noun what a key is: `${name} is not <noun>`. @default 'an option'
 * @param hints lower-cased unknown key → what to write instead (`messagegroupid` →
 *   `partitionKey (it becomes the MessageGroupId)`); wins over the nearest known key.
 * @returns e.g. `options.delay is not an option (known: delaySeconds, id, partitionKey); did you mean delaySeconds?`
 */
export function unknownKeyProblems(
  value: object,
  known: readonly string[],
  where: string,
  hints: Readonly<Record<string, string>> = {},
  noun = 'an option',
): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const hint = hints[key.toLowerCase()] ?? nearestKey(key, known);
    const name = where === '' ? key : `${where}.${key}`;
    problems.push(
      `${name} is not ${noun} (known: ${[...known].sort().join(', ')})${hint === undefined ? '' : `; did you mean ${hint}?`}`,
    );
  }
  return problems;
}
