/**
 * What a JSON message body can carry. A job's data travels as JSON (RFC 8259) inside the body,
 * so the worker sees `JSON.parse(JSON.stringify(data))`, not `data`. `JSON.stringify` does not
 * refuse what it cannot carry; it changes it silently (ECMA-262 `SerializeJSONProperty`):
 * `NaN`/`Infinity` → `null`, `undefined`/functions/symbols → left out of objects and `null` in
 * arrays, a `Map`/`Set`/class instance → its own enumerable properties (`{}` for a Map), an
 * invalid `Date` → `null`. This module finds those places so that the sender can refuse them,
 * naming the path, instead of sending something else.
 */

/** One value JSON cannot carry: `path` in `data.items[0].id` style. */
export interface JsonValueProblem {
  readonly path: string;
  readonly message: string;
}

/** Appends a key to a path: `.name` for identifiers, `["a b"]` otherwise, `[0]` for indexes. */
export function appendPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** A plain object of any realm: prototype `null` or an `Object.prototype`. */
export function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function describeInstance(value: object): string {
  if (value instanceof Map) return 'a Map';
  if (value instanceof Set) return 'a Set';
  const name = (value.constructor as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'a non-plain object';
}

/** Whether JSON would send what the object's `toJSON()` returns instead of the object. */
export function hasToJson(value: object): value is { toJSON: (key: string) => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/**
 * Finds every place in `value` that JSON would not carry as it is.
 *
 * Accepted: strings (lone surrogates included: JSON escapes them), booleans, `null`, finite
 * numbers, arrays without holes, plain objects (a property whose value is `undefined` is left out,
 * as an optional field), and any object with a `toJSON()` method (a `Date` becomes its ISO
 * string); the `toJSON()` result is checked in turn. Symbol-keyed properties are not data and are
 * ignored.
 *
 * Refused, each naming its path: `NaN`, `±Infinity`, `undefined` at the top or in an array, a
 * function, a symbol, a bigint, an invalid `Date`, a hole in an array, a `Map`, a `Set`, any other
 * non-plain object without `toJSON()` (class instances: JSON would keep their own enumerable
 * properties only, losing private fields, getters and methods), a `toJSON()` that throws, and a
 * circular reference. Data nested deeper than the call stack allows (tens of thousands of levels)
 * is one problem at `root`: neither this walk nor `JSON.stringify` can get through it.
 *
 * @param root the path of `value` itself. @default 'data'
 * @param options `undefinedFields: 'refuse'` also refuses a property whose value is `undefined`
 *   (data written once and sent unchanged, such as a recurring job's, has no optional fields: an
 *   `undefined` there is a value that went missing, an unset variable). @default 'omit'
 *   `toJSON: 'refuse'` also refuses an object with a `toJSON()` method (a `Date`, a class with
 *   `toJSON`): JSON sends what `toJSON()` returns (a string for a Date), not the object, so data
 *   that must be JSON as written, such as a recurring job's (compiled into the template), names
 *   it instead. @default 'apply'
 * @returns the problems, in document order; empty when `JSON.parse(JSON.stringify(value))` is
 *   the same value (deep-equal), with `toJSON` applied.
 */
export function jsonValueProblems(
  value: unknown,
  root = 'data',
  options: { readonly undefinedFields?: 'omit' | 'refuse'; readonly toJSON?: 'apply' | 'refuse' } = {},
): JsonValueProblem[] {
  const problems: JsonValueProblem[] = [];
  const ancestors: object[] = [];
  const ancestorPaths: string[] = [];

  const visit = (input: unknown, path: string, key: string, inArray: boolean): void => {
    let current = input;
    if (typeof current === 'object' && current !== null && hasToJson(current)) {
      if (current instanceof Date && Number.isNaN(current.getTime())) {
        problems.push({ path, message: 'an invalid Date has no JSON form: JSON would send null' });
        return;
      }
      if (options.toJSON === 'refuse') {
        problems.push({
          path,
          message:
            current instanceof Date
              ? `is a Date, which JSON sends as a string: write the string itself (e.g. '${current.toISOString()}')`
              : `is ${describeInstance(current)}, which JSON sends as its toJSON() result: write that value itself`,
        });
        return;
      }
      try {
        current = current.toJSON(key);
      } catch (error) {
        problems.push({
          path,
          message: `toJSON() threw: ${error instanceof Error ? error.message : String(error)}`,
        });
        return;
      }
    }
    switch (typeof current) {
      case 'string':
      case 'boolean':
        return;
      case 'number':
        if (!Number.isFinite(current))
          problems.push({ path, message: `${current} has no JSON form: JSON would send null` });
        return;
      case 'bigint':
        problems.push({ path, message: 'a bigint has no JSON form: send it as a string' });
        return;
      case 'undefined':
        if (path === root) problems.push({ path, message: 'undefined has no JSON form' });
        else if (inArray)
          problems.push({ path, message: 'undefined in an array has no JSON form: JSON would send null' });
        else if (options.undefinedFields === 'refuse')
          problems.push({
            path,
            message: 'is undefined: JSON would leave the field out (leave it out, or give it a value)',
          });
        return;
      case 'function':
        problems.push({ path, message: 'a function has no JSON form: JSON would leave it out' });
        return;
      case 'symbol':
        problems.push({ path, message: 'a symbol has no JSON form: JSON would leave it out' });
        return;
    }
    if (current === null) return;
    const obj = current as object;
    const cycle = ancestors.indexOf(obj);
    if (cycle >= 0) {
      problems.push({ path, message: `circular reference to ${ancestorPaths[cycle]}` });
      return;
    }
    if (!Array.isArray(obj) && !isPlainObject(obj)) {
      problems.push({
        path,
        message: `${describeInstance(obj)} has no JSON form of its own: JSON would send its own enumerable properties only${obj instanceof Map || obj instanceof Set ? ', {}' : ''}; send a plain object or array, or give the class a toJSON()`,
      });
      return;
    }
    ancestors.push(obj);
    ancestorPaths.push(path);
    try {
      if (Array.isArray(obj)) {
        for (let index = 0; index < obj.length; index++) {
          const itemPath = appendPath(path, index);
          if (!(index in obj)) {
            problems.push({
              path: itemPath,
              message: 'a hole in an array has no JSON form: JSON would send null',
            });
            continue;
          }
          visit(obj[index], itemPath, String(index), true);
        }
        return;
      }
      const record = obj as Record<string, unknown>;
      for (const name of Object.keys(record)) visit(record[name], appendPath(path, name), name, false);
    } finally {
      ancestors.pop();
      ancestorPaths.pop();
    }
  };

  try {
    visit(value, root, '', false);
  } catch (error) {
    // The walk recurses per level, as JSON.stringify does: data nested deeper than the call stack
    // allows cannot be checked, nor serialized for sending. A property of the data, so a problem.
    if (!(error instanceof RangeError)) throw error;
    problems.push({
      path: root,
      message:
        'is nested too deeply to check or serialize (the call stack ran out): send ids and let the worker reload the data, or flatten it',
    });
  }
  return problems;
}

/**
 * The value the receiver will see: `JSON.parse(JSON.stringify(value))`. Call it once
 * {@link jsonValueProblems} found nothing.
 * @throws {TypeError} when `value` has no JSON form at all (undefined, a function, a symbol, a bigint, a cycle).
 */
export function jsonFormOf(value: unknown): unknown {
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) throw new TypeError('the value has no JSON form');
  return JSON.parse(json);
}
