/**
 * Whether a job result or a `ctx.once` step value reads back the same after the store kept it as
 * JSON text. The first run gets the value itself; a retry (a step) or a duplicate delivery (a
 * result) gets `JSON.parse` of what was stored. `JSON.stringify` does not refuse what it cannot
 * carry, it changes it (ECMA-262 `SerializeJSONProperty`): a `Date` becomes its ISO string (its
 * `toJSON()`), a `Map` or `Set` `{}`, `NaN` and `±Infinity` `null`, `undefined` in an array `null`.
 * Stored like that, `d.getTime()` would work on the first run and throw only on a retry. Such a
 * value is not stored as if it were faithful: the store writes the "not stored" marker with the
 * reason built here (storable.ts), and the worker logs that reason at WARN on the run that
 * produced it.
 *
 * Stricter than what a job's `data` may hold (lib/core/json-value.ts, {@link jsonValueProblems}):
 * everything refused there is refused here too, and also any object with a `toJSON()` method
 * (a `Date`, a `Buffer`, a class with `toJSON()`), because what reads back is what `toJSON()`
 * returned, not the object.
 */
import { appendPath, hasToJson, isPlainObject } from '../../core/json-value.ts';

/** The first place in a value that would not read back the same: `path` in `value.items[0]` style. */
export interface UnfaithfulPlace {
  /** Where, from the root (`value` for a step value, `result` for a job result). */
  readonly path: string;
  /** What is there, as an article and a noun: `a Map`, `a Date`, `NaN`, `undefined in an array`. */
  readonly kind: string;
}

/** What the kinds of value allowed are, in the words of the messages. */
const JSON_VALUES = 'objects, arrays, strings, finite numbers, booleans, null';

function describeObject(value: object): string {
  if (value instanceof Date) return 'a Date';
  if (value instanceof Map) return 'a Map';
  if (value instanceof Set) return 'a Set';
  if (isPlainObject(value)) return 'an object';
  const name = (value.constructor as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'a non-plain object';
}

/**
 * The first place (in document order) where `JSON.parse(JSON.stringify(value))` would not give the
 * same value back; undefined when it would.
 *
 * Faithful: strings, booleans, `null`, finite numbers (`-0` reads back as `0`, which `===` it),
 * arrays without holes, plain objects of these (a property holding `undefined` is left out, reading
 * back `undefined` as well; symbol-keyed properties are not data and are ignored), and `undefined`
 * itself at the top (nothing is stored, `undefined` reads back).
 *
 * Not faithful, each with its path: `NaN`, `Infinity`, `-Infinity`, a bigint, a symbol or a function
 * (also as an object property, which JSON would drop), `undefined` or a hole in an array, any object
 * with `toJSON()` (a `Date`, valid or not, a `Buffer`), a `Map`, a `Set`, a class instance, a
 * circular reference, a property whose getter throws.
 *
 * @param root the path of `value` itself, e.g. `value` or `result`.
 */
export function firstUnfaithfulPlace(value: unknown, root: string): UnfaithfulPlace | undefined {
  // The common cases, without a walk.
  if (value === undefined || value === null) return undefined;
  const type = typeof value;
  if (type === 'string' || type === 'boolean') return undefined;
  const ancestors: object[] = [];

  const visit = (input: unknown, path: string, inArray: boolean): UnfaithfulPlace | undefined => {
    switch (typeof input) {
      case 'string':
      case 'boolean':
        return undefined;
      case 'number':
        return Number.isFinite(input) ? undefined : { path, kind: String(input) };
      case 'bigint':
        return { path, kind: 'a bigint' };
      case 'symbol':
        return { path, kind: 'a symbol' };
      case 'function':
        return { path, kind: 'a function' };
      case 'undefined':
        return inArray ? { path, kind: 'undefined in an array' } : undefined;
    }
    if (input === null) return undefined;
    const obj = input as object;
    if (ancestors.includes(obj)) return { path, kind: 'a circular reference' };
    if (hasToJson(obj)) {
      const what = describeObject(obj);
      return { path, kind: obj instanceof Date ? what : `${what} with toJSON()` };
    }
    if (!Array.isArray(obj) && !isPlainObject(obj)) return { path, kind: describeObject(obj) };
    ancestors.push(obj);
    try {
      if (Array.isArray(obj)) {
        for (let index = 0; index < obj.length; index++) {
          const itemPath = appendPath(path, index);
          if (!(index in obj)) return { path: itemPath, kind: 'a hole in an array' };
          const found = visit(obj[index], itemPath, true);
          if (found) return found;
        }
        return undefined;
      }
      for (const name of Object.keys(obj)) {
        const propertyPath = appendPath(path, name);
        let property: unknown;
        try {
          property = (obj as Record<string, unknown>)[name];
        } catch {
          return { path: propertyPath, kind: 'a property whose getter throws' };
        }
        const found = visit(property, propertyPath, false);
        if (found) return found;
      }
      return undefined;
    } finally {
      ancestors.pop();
    }
  };

  return visit(value, root, false);
}

/** Whose value it is: a `once` step's, or a job's result. */
export type StoredValueSubject =
  | { readonly kind: 'step'; readonly stepName: string }
  | { readonly kind: 'result'; readonly jobType: string };

/**
 * Why `value` is not stored, as one sentence naming the subject, the kind and the path, e.g.
 * `step 'charge' returned a Map at value.items: step values must be JSON values (objects, arrays,
 * strings, finite numbers, booleans, null) so a retry reads back the same`; undefined when the
 * value reads back the same ({@link firstUnfaithfulPlace}).
 */
export function unfaithfulJsonReason(value: unknown, subject: StoredValueSubject): string | undefined {
  const root = subject.kind === 'step' ? 'value' : 'result';
  const place = firstUnfaithfulPlace(value, root);
  if (place === undefined) return undefined;
  return subject.kind === 'step'
    ? `step '${subject.stepName}' returned ${place.kind} at ${place.path}: step values must be JSON values (${JSON_VALUES}) so a retry reads back the same`
    : `job '${subject.jobType}' returned ${place.kind} at ${place.path}: job results must be JSON values (${JSON_VALUES}) so a duplicate delivery reads back the same`;
}
