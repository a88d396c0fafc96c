/**
 * The worker's default logger: what a Powertools `Logger` built as the worker built it
 * (`new Logger({ serviceName })`, with `injectLambdaContext(logger, { resetKeys: true })`) writes,
 * byte for byte, without bundling @aws-lambda-powertools/logger (23 KB of a 190 KB minimal
 * worker, issue 21). test/unit/default-logger.test.ts drives both with the same environment,
 * Lambda contexts and calls and compares what they write.
 *
 * Reproduced from Powertools (logger 2.36, lib/esm/Logger.js), read from `process.env` as it
 * reads it:
 * - the level gate: `AWS_LAMBDA_LOG_LEVEL` (Advanced Logging Controls; `FATAL` is `CRITICAL`)
 *   wins and pins the level, else `POWERTOOLS_LOG_LEVEL`, else `LOG_LEVEL`, else `INFO`; names in
 *   capitals only (`debug` is ignored, as Powertools ignores it);
 * - debug sampling (`POWERTOOLS_LOGGER_SAMPLE_RATE`, 0 to 1, `crypto.randomInt` as Powertools
 *   draws): drawn when built and at every invocation but the first, with the same
 *   `Setting log level to DEBUG due to sampling rate` line and the same once-only warning when
 *   Advanced Logging Controls forbid DEBUG; a value that is not a number throws when built;
 * - `POWERTOOLS_LOGGER_LOG_EVENT=true` (the event at INFO, `Lambda invocation event`, each
 *   invocation; a value other than true/false throws when built);
 * - `POWERTOOLS_DEV` (indented JSON through the global `console`, stacks as arrays of lines);
 * - the Lambda context keys (the cold start is the first invocation's, in an on-demand
 *   environment), `xray_trace_id`, `tenant_id`, `service` (`service_undefined` for an empty name);
 * - extra keys (the reserved `level`, `message`, `sampling_rate`, `service`, `timestamp` dropped
 *   with Powertools' warning line), errors, timestamps and `TZ`: see log-format.ts;
 * - with `AWS_LAMBDA_MAX_CONCURRENCY` (Lambda Managed Instances), the Lambda context and the
 *   sampled level kept per invocation in Lambda's invoke store, as Powertools keeps them; without
 *   that store (outside Lambda) every call throws `InvokeStore is not available`, as Powertools'.
 *
 * Not reproduced, and why it does not show in what is written: Powertools in `POWERTOOLS_DEV`
 * replaces the global `console.trace` with `console.log` (this logger never calls it); the
 * worker's default logger has no appended, persistent or temporary keys, no log buffer, no
 * correlation id and no custom formatter (nobody else can reach it), so none of that is here.
 */
import { Console } from 'node:console';
import { randomInt } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { formatLine, type LineContext, Timestamps } from './log-format.ts';

/**
 * Powertools' level numbers (logger lib/esm/constants.js `LogLevelThreshold`): a line is written
 * when its level is at or above the logger's. A plain object looked up with `in`, as Powertools
 * looks names up.
 */
export const LOG_LEVEL_THRESHOLD: Readonly<Record<string, number>> = {
  TRACE: 6,
  DEBUG: 8,
  INFO: 12,
  WARN: 16,
  ERROR: 20,
  CRITICAL: 24,
  SILENT: 28,
};

/** Keys a call cannot set (logger lib/esm/constants.js `ReservedKeys`). */
const RESERVED_KEYS = ['level', 'message', 'sampling_rate', 'service', 'timestamp'];

/** The methods of a line's level, on the console Powertools uses. */
type ConsoleMethod = 'debug' | 'info' | 'warn' | 'error';

/** The values a summary line carries ({@link DefaultLogger.summary}). */
export type LineValue = string | number | boolean;

export class DefaultLogger {
  readonly #service: string;
  readonly #samplingRate: number;
  /** Advanced Logging Controls' level name, when `AWS_LAMBDA_LOG_LEVEL` names one. */
  readonly #alcLevel: string | undefined;
  readonly #logEvent: boolean;
  /** `POWERTOOLS_DEV` when built: the global console and indented JSON. */
  readonly #dev: boolean;
  readonly #console: Pick<Console, ConsoleMethod>;
  /** As Powertools' `Utility`: only an on-demand environment has a cold start. */
  readonly #onDemand: boolean;
  #coldStart = true;
  #initialLevel: number = LOG_LEVEL_THRESHOLD.INFO as number;
  #refreshes = 0;
  readonly #warnedOnce = new Set<string>();
  readonly #timestamps = new Timestamps();
  readonly #level = new InvocationScoped<number>(LOG_LEVEL_THRESHOLD.INFO as number);
  readonly #context = new InvocationScoped<LineContext | undefined>(undefined);
  /** The summary line's members from `service` to `sampling_rate`, for the context they were made of. */
  #summaryHead: { readonly context: LineContext | undefined; readonly members: string } | undefined;

  /**
   * Reads `process.env` as Powertools' Logger does when built.
   * @param serviceName the `service` key; empty: `service_undefined`, as Powertools names it
   * @throws Error when `POWERTOOLS_LOGGER_LOG_EVENT` is neither `true` nor `false`, TypeError
   *   when `POWERTOOLS_LOGGER_SAMPLE_RATE` is not a number (Powertools' messages)
   */
  constructor(serviceName: string) {
    const env = process.env;
    this.#service = serviceName || env.POWERTOOLS_SERVICE_NAME?.trim() || 'service_undefined';
    this.#onDemand = env.AWS_LAMBDA_INITIALIZATION_TYPE?.trim() === 'on-demand';
    this.#dev = isDevMode();
    this.#console = this.#dev ? console : new Console({ stdout: process.stdout, stderr: process.stderr });
    const lambdaLevel = env.AWS_LAMBDA_LOG_LEVEL?.trim() ?? '';
    const alcLevel = lambdaLevel === 'FATAL' ? 'CRITICAL' : lambdaLevel;
    this.#alcLevel = isLevelName(alcLevel) ? alcLevel : undefined;
    const logEvent = (env.POWERTOOLS_LOGGER_LOG_EVENT?.trim() ?? 'false').toLowerCase();
    if (logEvent !== 'true' && logEvent !== 'false') {
      throw new Error('Environment variable POWERTOOLS_LOGGER_LOG_EVENT must be a boolean');
    }
    this.#logEvent = logEvent === 'true';
    // The initial level, as Powertools' setInitialLogLevel (no level nor config service given).
    if (this.#alcShortCircuit(undefined)) {
      this.#initialLevel = this.#level.getShared();
    } else {
      const name = env.POWERTOOLS_LOG_LEVEL?.trim() || env.LOG_LEVEL?.trim() || '';
      if (isLevelName(name)) {
        this.#level.setShared(LOG_LEVEL_THRESHOLD[name] as number);
        this.#initialLevel = this.#level.getShared();
      }
    }
    const rate = Number(env.POWERTOOLS_LOGGER_SAMPLE_RATE?.trim() ?? '0');
    if (Number.isNaN(rate)) {
      throw new TypeError('Environment variable POWERTOOLS_LOGGER_SAMPLE_RATE must be a number');
    }
    this.#samplingRate = 0 <= rate && rate <= 1 ? rate : 0;
    if (
      0 <= rate &&
      rate <= 1 &&
      this.#sampled() &&
      this.#level.getShared() > (LOG_LEVEL_THRESHOLD.TRACE as number)
    ) {
      this.#setLevel('DEBUG');
      this.debug('Setting log level to DEBUG due to sampling rate');
    }
  }

  /** The current level's number (see {@link LOG_LEVEL_THRESHOLD}); read per invocation, sampling changes it. */
  get level(): number {
    return this.#level.get();
  }

  /**
   * What Powertools' `injectLambdaContext` does before the handler: debug sampling drawn again
   * (not at the first invocation, drawn when built), the Lambda context kept for the lines, and
   * the event logged when `POWERTOOLS_LOGGER_LOG_EVENT` is true. Call it at the start of every
   * invocation.
   */
  begin(event: unknown, context: Context): void {
    this.#refreshSampling();
    const coldStart = this.#onDemand && this.#coldStart;
    if (this.#onDemand) this.#coldStart = false;
    this.#context.set({
      invokedFunctionArn: context.invokedFunctionArn,
      coldStart,
      awsRequestId: context.awsRequestId,
      memoryLimitInMB: context.memoryLimitInMB,
      functionName: context.functionName,
      tenantId: (context as { tenantId?: unknown }).tenantId,
    });
    if (this.#logEvent) this.info('Lambda invocation event', { event });
  }

  debug(message: string, extra?: unknown): void {
    this.#log(LOG_LEVEL_THRESHOLD.DEBUG as number, 'DEBUG', 'debug', message, extra);
  }
  info(message: string, extra?: unknown): void {
    this.#log(LOG_LEVEL_THRESHOLD.INFO as number, 'INFO', 'info', message, extra);
  }
  warn(message: string, extra?: unknown): void {
    this.#log(LOG_LEVEL_THRESHOLD.WARN as number, 'WARN', 'warn', message, extra);
  }
  error(message: string, extra?: unknown): void {
    this.#log(LOG_LEVEL_THRESHOLD.ERROR as number, 'ERROR', 'error', message, extra);
  }

  /**
   * An INFO line with flat keys (the batch summary), the same bytes as {@link info} at a fraction
   * of the CPU: one string, what stays the same for the invocation serialized once (issue 21:
   * through Powertools one such line cost about 20 µs, a third of the worker's CPU at a batch of
   * 10). `extra`'s keys are none of the line's base keys nor integers (which JSON objects put
   * first). Outside the plain case (indented output, a `TZ` zone) it is {@link info}. Throws
   * what {@link info} throws.
   */
  summary(message: string, extra: Readonly<Record<string, LineValue>>): void {
    const tz = process.env.TZ?.trim();
    if (this.#dev || (tz !== undefined && tz !== '' && !tz.includes('UTC'))) {
      this.info(message, extra);
      return;
    }
    if (!((LOG_LEVEL_THRESHOLD.INFO as number) >= this.#level.get())) return;
    const context = this.#context.get();
    let head = this.#summaryHead;
    if (head === undefined || head.context !== context) {
      head = {
        context,
        members:
          member('service', this.#service) +
          member('cold_start', context?.coldStart) +
          member('function_arn', context?.invokedFunctionArn) +
          member('function_memory_size', context?.memoryLimitInMB) +
          member('function_name', context?.functionName) +
          member('function_request_id', context?.awsRequestId) +
          member('sampling_rate', this.#samplingRate),
      };
      this.#summaryHead = head;
    }
    let line = '{"level":"INFO"';
    if (message !== '') line += `,"message":${JSON.stringify(message)}`;
    line += `,"timestamp":"${new Date().toISOString()}"${head.members}`;
    line += member('xray_trace_id', xrayTraceId());
    line += member('tenant_id', context?.tenantId);
    for (const key in extra) line += member(key, extra[key]);
    this.#console.info(`${line}}`);
  }

  #log(level: number, name: string, method: ConsoleMethod, input: unknown, extra: unknown): void {
    // Negated: a level that is not a number (a name such as `toString`) lets nothing through.
    if (!(level >= this.#level.get())) return;
    const date = new Date();
    const xray = xrayTraceId();
    const context = this.#context.get();
    const keys: Record<string, unknown> = {};
    let message = input;
    if (typeof input !== 'string') {
      // A message given as an object (JavaScript callers): its `message`, the rest as keys.
      const { message: text, ...rest } = input as { message?: unknown };
      message = text;
      this.#addKeys(rest, keys);
    }
    if (extra !== undefined && extra !== null) {
      if (extra instanceof Error) keys.error = extra;
      else if (typeof extra === 'string') keys.extra = extra;
      else this.#addKeys(extra, keys);
    }
    const line = formatLine({
      level: name,
      message,
      timestamp: this.#timestamps.format(date, process.env.TZ),
      service: this.#service,
      context,
      samplingRate: this.#samplingRate,
      xrayTraceId: xray,
      extra: keys,
      dev: isDevMode(),
    });
    this.#console[method](line);
  }

  /** Copies `source`'s own keys into `keys`, a reserved one dropped with Powertools' warning line. */
  #addKeys(source: object, keys: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(source)) {
      if (RESERVED_KEYS.includes(key)) this.warn(`The key "${key}" is a reserved key and will be dropped.`);
      else keys[key] = value;
    }
  }

  /** Powertools' `refreshSampleRateCalculation`. */
  #refreshSampling(): void {
    if (this.#refreshes === 0) {
      this.#refreshes += 1;
      return;
    }
    if (this.#sampled() && this.#level.get() > (LOG_LEVEL_THRESHOLD.TRACE as number)) {
      this.#setLevel('DEBUG');
      this.debug('Setting log level to DEBUG due to sampling rate');
    } else {
      this.#setLevel(levelName(this.#initialLevel));
    }
  }

  /** Powertools' draw: the rate against a whole percentage from `crypto.randomInt`. */
  #sampled(): boolean {
    return this.#samplingRate !== 0 && randomInt(0, 100) / 100 <= this.#samplingRate;
  }

  /** Powertools' `setLogLevel`: Advanced Logging Controls keep their level. */
  #setLevel(name: string | undefined): void {
    if (this.#alcShortCircuit(name)) return;
    if (!isLevelName(name)) throw new Error(`Invalid log level: ${name}`);
    this.#level.set(LOG_LEVEL_THRESHOLD[name] as number);
  }

  /** Powertools' `awsLogLevelShortCircuit`: true when Advanced Logging Controls set the level. */
  #alcShortCircuit(selected: string | undefined): boolean {
    if (this.#alcLevel === undefined) return false;
    this.#level.setShared(LOG_LEVEL_THRESHOLD[this.#alcLevel] as number);
    if (isLevelName(selected) && this.#level.getShared() > (LOG_LEVEL_THRESHOLD[selected] as number)) {
      const warning = `Current log level (${selected}) does not match AWS Lambda Advanced Logging Controls minimum log level (${this.#alcLevel}). This can lead to data loss, consider adjusting them.`;
      if (!this.#warnedOnce.has(warning)) {
        this.#warnedOnce.add(warning);
        this.warn(warning);
      }
    }
    return true;
  }
}

/** `in`, as Powertools checks a name (so an inherited name such as `toString` passes, as there). */
function isLevelName(name: unknown): name is string {
  return typeof name === 'string' && name in LOG_LEVEL_THRESHOLD;
}

function levelName(level: number): string | undefined {
  for (const [name, value] of Object.entries(LOG_LEVEL_THRESHOLD)) if (value === level) return name;
  return undefined;
}

/** Powertools' `isDevMode`: `POWERTOOLS_DEV` one of 1, y, yes, t, true, on (any case). */
function isDevMode(): boolean {
  const value = process.env.POWERTOOLS_DEV?.trim().toLowerCase();
  return value !== undefined && ['1', 'y', 'yes', 't', 'true', 'on'].includes(value);
}

/** Lambda's invoke store (set by the runtime), as Powertools reads it. */
interface InvokeStore {
  hasContext(): boolean;
  get(key: symbol): unknown;
  set(key: symbol, value: unknown): void;
  getXRayTraceId?(): string | undefined;
}

function invokeStore(): InvokeStore | undefined {
  return (globalThis as { awslambda?: { InvokeStore?: InvokeStore } }).awslambda?.InvokeStore;
}

/**
 * The store of the current invocation when invocations share the process (Powertools' rule:
 * `AWS_LAMBDA_MAX_CONCURRENCY` set and inside an invocation), else undefined.
 * @throws Error `InvokeStore is not available` when the variable is set but Lambda's store is not
 */
function scopedStore(): InvokeStore | undefined {
  const concurrency = process.env.AWS_LAMBDA_MAX_CONCURRENCY?.trim() ?? '';
  if (concurrency === '') return undefined;
  const store = invokeStore();
  if (store === undefined) throw new Error('InvokeStore is not available');
  return store.hasContext() ? store : undefined;
}

/** A value kept per invocation when invocations share the process, else one for all (Powertools' `InvocationScoped`). */
class InvocationScoped<T> {
  readonly #key = Symbol('sqs-jobs.logger');
  #shared: T;
  constructor(initial: T) {
    this.#shared = initial;
  }
  get(): T {
    const box = scopedStore()?.get(this.#key) as [T] | undefined;
    return box === undefined ? this.#shared : box[0];
  }
  set(value: T): void {
    const store = scopedStore();
    if (store === undefined) this.#shared = value;
    else store.set(this.#key, [value]);
  }
  getShared(): T {
    return this.#shared;
  }
  setShared(value: T): void {
    this.#shared = value;
  }
}

/** `,"key":value`, or nothing for a value Powertools leaves out (undefined, '', null). */
function member(key: string, value: unknown): string {
  if (value === undefined || value === '' || value === null) return '';
  return `,${keyJson(key)}:${JSON.stringify(value)}`;
}

/** Keys as JSON strings, made once per key: a summary's keys are the same few every time. */
const KEY_JSON = new Map<string, string>();

function keyJson(key: string): string {
  let json = KEY_JSON.get(key);
  if (json === undefined) {
    json = JSON.stringify(key);
    // Bounded: a caller with ever new keys gets them escaped each time instead.
    if (KEY_JSON.size < 100) KEY_JSON.set(key, json);
  }
  return json;
}

/**
 * The `Root` of the invocation's X-Ray trace header, as Powertools reads it: Lambda's invoke
 * store first, else `_X_AMZN_TRACE_ID`; a header without `=` is the root itself.
 */
function xrayTraceId(): string | undefined {
  const header = invokeStore()?.getXRayTraceId?.() ?? process.env._X_AMZN_TRACE_ID?.trim() ?? '';
  if (header === '') return undefined;
  if (!header.includes('=')) return header;
  let root: string | undefined;
  for (const field of header.split(';')) {
    const [key, value] = field.split('=');
    if (key === 'Root') root = value;
  }
  return root;
}
