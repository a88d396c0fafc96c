/**
 * The key functions of a job definition (`idempotency.key`, `concurrency.key`): what makes one
 * usable, checked at definition, and what its result must be, checked per record.
 *
 * Why synchronous only: a key is computed from the validated data on every delivery, before the
 * lease or the slot is taken, and must be the same on every delivery of that data. A key that
 * needs to await (a lookup) would add a call per record in front of the limit, could fail
 * transiently where the worker classifies a key failure as permanent, and could answer differently
 * on a redelivery: the job would be counted under another key. Put what the key needs in the data.
 */

/** Whether `value` is an `async` function (its result is always a Promise). */
function isAsyncFunction(value: unknown): boolean {
  return typeof value === 'function' && Object.prototype.toString.call(value) === '[object AsyncFunction]';
}

/**
 * What is wrong with a key function given as `field` (`concurrency.key`); undefined when it is a
 * synchronous function. An `async` function is refused: see the module's note.
 */
export function keyFunctionProblem(value: unknown, field: string): string | undefined {
  if (typeof value !== 'function') return `${field} must be a function (data) => string`;
  if (isAsyncFunction(value)) {
    return `${field} must be a synchronous function (data) => string, got an async function: a key is computed from the job's data alone, the same on every delivery (put what it needs in the data)`;
  }
  return undefined;
}

/**
 * What is wrong with what `field(data)` returned, when it is not a non-empty string. A Promise (a
 * function that returns one without being declared `async`) is named as such.
 */
export function keyResultProblem(key: unknown, field: string): string {
  const got =
    key === ''
      ? 'an empty string'
      : key instanceof Promise
        ? 'a Promise: the key function must be synchronous (put what it needs in the data)'
        : typeof key;
  return `${field}(data) must return a non-empty string, got ${got}`;
}
