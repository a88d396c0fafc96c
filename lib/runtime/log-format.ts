/**
 * The JSON line of Powertools' `PowertoolsLogFormatter` (@aws-lambda-powertools/logger 2.36,
 * lib/esm/formatter/ and Logger.js `createAndPopulateLogItem`/`printLog`), written without the
 * package, for the worker's default logger (default-logger.ts): the same bytes for the same
 * inputs, proven against the package in test/unit/default-logger.test.ts.
 *
 * What makes a line, in Powertools' order: the base keys (`level`, `message`, `timestamp`,
 * `service`, `cold_start`, `function_arn`, `function_memory_size`, `function_name`,
 * `function_request_id`, `sampling_rate`, `xray_trace_id`, `tenant_id`); the line's own keys
 * merged over them as Powertools' `deepMerge` does (plain objects and arrays copied, `__proto__`
 * and `constructor` keys skipped, a plain object or array met again inside itself left out, an
 * `undefined` never replacing a value); top-level `undefined`, `''` and `null` dropped; then
 * `JSON.stringify` with Powertools' replacer (an `Error` as `{ name, location, message, stack,
 * cause, ...its own keys }`, a `bigint` as its digits, an object met again inside itself left out).
 */

/** The Lambda context keys a line carries, as Powertools' `addContext` keeps them. */
export interface LineContext {
  readonly invokedFunctionArn?: unknown;
  readonly coldStart: boolean;
  readonly awsRequestId?: unknown;
  readonly memoryLimitInMB?: unknown;
  readonly functionName?: unknown;
  readonly tenantId?: unknown;
}

/** What one line is made of before it is written. */
export interface LineParts {
  readonly level: string;
  readonly message: unknown;
  readonly timestamp: string;
  readonly service: string;
  readonly context: LineContext | undefined;
  readonly samplingRate: number;
  readonly xrayTraceId: string | undefined;
  /** The line's own keys (the call's extra keys), in the order they were given. */
  readonly extra: Record<string, unknown>;
  /** `POWERTOOLS_DEV`: indented by 4 and stacks split into lines. */
  readonly dev: boolean;
}

/** The line as Powertools writes it, without the trailing newline. Throws what `JSON.stringify` throws. */
export function formatLine(parts: LineParts): string {
  const { context } = parts;
  const base: Record<string, unknown> = {
    level: parts.level,
    message: parts.message,
    timestamp: parts.timestamp,
    service: parts.service,
    cold_start: context?.coldStart,
    function_arn: context?.invokedFunctionArn,
    function_memory_size: context?.memoryLimitInMB,
    function_name: context?.functionName,
    function_request_id: context?.awsRequestId,
    sampling_rate: parts.samplingRate,
    xray_trace_id: parts.xrayTraceId,
    tenant_id: context?.tenantId,
  };
  mergeObject(base, parts.extra, [base, parts.extra]);
  const kept: Record<string, unknown> = {};
  for (const key in base) {
    const value = base[key];
    if (value !== undefined && value !== '' && value !== null) kept[key] = value;
  }
  return JSON.stringify(kept, replacer(parts.dev), parts.dev ? 4 : 0);
}

/** Keys `deepMerge` never copies (prototype pollution). */
const SKIPPED_KEYS = new Set(['__proto__', 'constructor']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Copies `source`'s keys into `target` as Powertools' `deepMerge` does. The only target with
 * values of its own is the line's base (strings, numbers, booleans); every deeper target is a fresh
 * copy, so merging into it is copying. `ancestors`: what is being copied, outermost first.
 */
function mergeObject(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  ancestors: unknown[],
): void {
  for (const key of Object.keys(source)) {
    if (SKIPPED_KEYS.has(key)) continue;
    const value = source[key];
    if (Array.isArray(value) || isPlainObject(value)) {
      if (ancestors.includes(value)) continue;
      target[key] = copy(value, ancestors);
    } else if (value !== undefined || target[key] === undefined) {
      // An undefined never replaces a value, the base's or one the prototype gives (`toString`).
      target[key] = value;
    }
  }
}

/** A copy of a plain object or array not among `ancestors` (its own ancestors included). */
function copy(
  value: Record<string, unknown> | unknown[],
  ancestors: unknown[],
): Record<string, unknown> | unknown[] {
  ancestors.push(value);
  let result: Record<string, unknown> | unknown[];
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      // An item met again inside itself leaves a hole: null inside the array, nothing at its end.
      if (Array.isArray(item) || isPlainObject(item)) {
        if (!ancestors.includes(item)) items[i] = copy(item, ancestors);
      } else {
        items[i] = item;
      }
    }
    result = items;
  } else {
    const object: Record<string, unknown> = {};
    mergeObject(object, value, ancestors);
    result = object;
  }
  ancestors.pop();
  return result;
}

/**
 * Powertools' `JSON.stringify` replacer: errors formatted, bigints as strings, and an object met
 * again among the objects that hold it left out. One per line (it keeps the chain of holders).
 */
function replacer(dev: boolean): (this: unknown, key: string, value: unknown) => unknown {
  const holders: unknown[] = [];
  return function (this: unknown, _key: string, value: unknown): unknown {
    const replaced = value instanceof Error ? formatError(value, dev) : value;
    if (typeof replaced === 'bigint') return replaced.toString();
    if (typeof replaced === 'object' && replaced !== null) {
      while (holders.length > 0 && holders[holders.length - 1] !== this) holders.pop();
      if (holders.includes(replaced)) return undefined;
      holders.push(replaced);
    }
    return replaced;
  };
}

/**
 * An error as Powertools' `LogFormatter.formatError` writes it: `name`, `location` (the first
 * `(file:line:column)` of the stack, as `file:line`), `message`, `stack` (split into lines under
 * `POWERTOOLS_DEV`), `cause` (formatted the same way when it is an Error), then every other
 * enumerable key, its own value or undefined for an inherited one.
 */
export function formatError(error: Error, dev: boolean): Record<string, unknown> {
  const { name, message, stack, cause, ...own } = error as Error & { cause?: unknown };
  const formatted: Record<string, unknown> = {
    name,
    location: codeLocation(error.stack),
    message,
    stack: dev && typeof stack === 'string' ? stack.split('\n') : stack,
    cause: cause instanceof Error ? formatError(cause, dev) : cause,
  };
  for (const key in error) {
    if (key !== 'name' && key !== 'message' && key !== 'stack' && key !== 'cause') {
      formatted[key] = (own as Record<string, unknown>)[key];
    }
  }
  return formatted;
}

/** `(file:line:column)` at the end of a stack line, as Powertools matches it. */
const LOCATION = /\(([^()]*?):(\d+?):(\d+?)\)\\?$/;

function codeLocation(stack: string | undefined): string {
  if (!stack) return '';
  for (const line of stack.split('\n')) {
    const match = LOCATION.exec(line);
    if (match !== null) return `${match[1]}:${Number(match[2])}`;
  }
  return '';
}

/**
 * The timestamp as Powertools' `LogFormatter.formatTimestamp` writes it: ISO 8601 in UTC, unless
 * `TZ` is set to something without `UTC` in it; then the local time of that zone with its offset
 * (`2026-12-01T11:20:30.456+01:00`). An unknown zone is written as UTC with `+00:00`, after one
 * warning on the console per logger (`onUnknownZone`). Powertools computes the offset's hours
 * with `Math.floor`, so a negative offset with minutes is written an hour off (`-03:30` as
 * `-04:30`); so is it here.
 */
export class Timestamps {
  #warned = false;
  /** Per `TZ` value: the zone used and its formatter (Powertools builds one per line). */
  readonly #zones = new Map<string, { readonly zone: string; readonly format: Intl.DateTimeFormat }>();

  format(date: Date, tz: string | undefined): string {
    const configured = tz?.trim() ?? '';
    if (configured === '' || configured.includes('UTC')) return date.toISOString();
    let zone = this.#zones.get(configured);
    if (zone === undefined) {
      // Resolved once per value: the warning for an unknown zone is given once anyway.
      const resolved = this.#resolve(configured);
      zone = {
        zone: resolved,
        format: new Intl.DateTimeFormat('en', {
          hourCycle: 'h23',
          year: 'numeric',
          month: '2-digit',
          day: '2-digit',
          hour: '2-digit',
          minute: '2-digit',
          second: '2-digit',
          timeZone: resolved,
        }),
      };
      if (this.#zones.size < 10) this.#zones.set(configured, zone);
    }
    const parts: Record<string, string> = {};
    for (const part of zone.format.formatToParts(date)) parts[part.type] = part.value;
    const offset = zone.zone === configured ? -date.getTimezoneOffset() : 0;
    const hours = Math.abs(Math.floor(offset / 60))
      .toString()
      .padStart(2, '0');
    const minutes = Math.abs(offset % 60)
      .toString()
      .padStart(2, '0');
    const millis = date.getMilliseconds().toString().padStart(3, '0');
    return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${millis}${offset >= 0 ? '+' : '-'}${hours}:${minutes}`;
  }

  /** The zone itself when Intl knows it, else UTC after the one warning Powertools gives. */
  #resolve(zone: string): string {
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
      return zone;
    } catch {
      if (!this.#warned) {
        this.#warned = true;
        console.warn(`Invalid or unresolvable time zone: "${zone}" - falling back to UTC.`);
      }
      return 'UTC';
    }
  }
}
