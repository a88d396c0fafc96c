// How the page writes times, ages, JSON and counts.

/**
 * A date and time in the browser's locale, 24-hour; `–` when absent, as it is when not a time.
 * @param {unknown} value ISO 8601 or epoch ms (a record attribute may be anything)
 */
export function time(value) {
  if (value === undefined || value === null || value === '') return '–';
  const date = new Date(/** @type {string | number} */ (value));
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, { hour12: false });
}

/**
 * An age in s, min or h; `n/a` when unknown.
 * @param {number | null | undefined} seconds
 */
export function age(seconds) {
  if (seconds === null || seconds === undefined) return 'n/a';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/**
 * JSON text indented, other text as it is.
 * @param {string} text
 */
export function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * `1 message`, `2 messages`.
 * @param {number} n
 * @param {string} one
 * @param {string} [many]
 */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}
