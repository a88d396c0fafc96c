/**
 * A value as an error message shows it: JSON (`"x"`, `{"a":1}`, `null`), except where JSON would
 * hide what was given: `NaN`, `Infinity` and `-Infinity` (JSON writes `null`), `undefined` and a
 * function (JSON writes nothing), a bigint (JSON throws). So `perSecond: NaN` is reported as
 * `got NaN`, not `got null`.
 */
export function shownValue(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value, (_key, inner: unknown) =>
      typeof inner === 'number' && !Number.isFinite(inner)
        ? String(inner)
        : typeof inner === 'bigint'
          ? `${inner}n`
          : inner,
    );
  } catch {
    return String(value);
  }
}
