/**
 * `ctx.logger`: a job's logger over the record's logger (lib/runtime/record/record-run.ts, which
 * adds the job's identity and lineage keys to every line). It takes the extra input Powertools
 * Logger takes (an Error, a string, or objects of keys; `JobLogger` in lib/core/logger.ts) and
 * hands the record's logger one object built as Powertools builds its line's keys (logger 2.36,
 * lib/esm/Logger.js `#processExtraInput`): so an Error is written under `error` as Powertools
 * formats it (name, location, message, stack, cause) and a string under `extra`, whichever logger
 * writes (the worker's default or a given Powertools Logger). Without this an Error, which has no
 * own enumerable keys, was spread into nothing and the line had no error at all.
 *
 * Keys the line already carries (the record's identity and lineage, the Lambda context keys) are
 * the runtime's: operators find a job's lines by them, so a job can neither forge nor erase them.
 * They are dropped as Powertools drops its reserved keys, with its warning line, once per key
 * given at each call whose line is written; the warning goes through the record's logger, so it
 * carries the job's keys.
 */
import type { JobLogger } from '../core/logger.ts';
import { LOG_LEVEL_THRESHOLD } from './default-logger.ts';
import { describeLogFailure, type WorkerLogger } from './telemetry.ts';

/** Keys Powertools Logger reserves (logger 2.36, lib/esm/constants.js `ReservedKeys`). */
const POWERTOOLS_RESERVED_KEYS = ['level', 'message', 'sampling_rate', 'service', 'timestamp'] as const;

/**
 * The keys the runtime puts on a job's lines: its identity (record-run.ts), its lineage
 * (lineage.ts `lineageLogKeys`) and the Lambda context keys the logger adds (log-format.ts).
 */
export const RUNTIME_LOG_KEYS = [
  'messageId',
  'jobType',
  'jobId',
  'attempt',
  'parentJobId',
  'rootJobId',
  'correlationId',
  'traceId',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'xray_trace_id',
  'tenant_id',
] as const;

/**
 * The key of the runtime's record-outcome lines (`completed`, `retry`, `dead-lettered`...;
 * docs/contracts.md, "Logs"). Reserved too, so that no job line can pass for one: `sqs-jobs
 * local` prints a job event for each such line (lib/local/job-lines.ts).
 */
export const OUTCOME_LOG_KEY = 'outcome';

/** What a job's keys cannot be: Powertools' reserved keys and the runtime's. */
const RESERVED = new Set<string>([...POWERTOOLS_RESERVED_KEYS, ...RUNTIME_LOG_KEYS, OUTCOME_LOG_KEY]);

/** Powertools' warning for a reserved key (logger 2.36, Logger.js `#checkReservedKeyAndWarn`). */
export function reservedKeyWarning(key: string): string {
  return `The key "${key}" is a reserved key and will be dropped.`;
}

/**
 * The keys of one call's extra input, in Powertools' order: an Error as `error`, a string as
 * `extra`, an object's own enumerable keys (a reserved one passed to `onReserved` instead, at its
 * turn), `null` and `undefined` skipped. Undefined when nothing was given.
 */
export function jobLogKeys(
  extra: readonly unknown[],
  onReserved: (key: string) => void,
): Record<string, unknown> | undefined {
  if (extra.length === 0) return undefined;
  const keys: Record<string, unknown> = {};
  for (const item of extra) {
    if (item === undefined || item === null) continue;
    if (item instanceof Error) keys.error = item;
    else if (typeof item === 'string') keys.extra = item;
    else {
      for (const [key, value] of Object.entries(item)) {
        if (RESERVED.has(key)) onReserved(key);
        else keys[key] = value;
      }
    }
  }
  return keys;
}

/** Each method's level number, as the record's logger compares it with its `level`. */
const THRESHOLD = {
  debug: LOG_LEVEL_THRESHOLD.DEBUG as number,
  info: LOG_LEVEL_THRESHOLD.INFO as number,
  warn: LOG_LEVEL_THRESHOLD.WARN as number,
  error: LOG_LEVEL_THRESHOLD.ERROR as number,
};

/** `ctx.logger` over the record's logger `logger`. */
export function jobLogger(logger: WorkerLogger): JobLogger {
  return new GuardedJobLogger(logger);
}

/**
 * The methods are bound (arrow properties): a job may pass them around detached
 * (`const { info } = ctx.logger`, `items.forEach(ctx.logger.warn)`), as it may Powertools'.
 */
class GuardedJobLogger implements JobLogger {
  readonly #logger: WorkerLogger;
  constructor(logger: WorkerLogger) {
    this.#logger = logger;
  }
  #write(level: keyof typeof THRESHOLD, message: string, extra: readonly unknown[]): void {
    // As Powertools: the warnings only for a line that is written (a DEBUG line at INFO gives none).
    const written = (this.#logger.level ?? 0) <= THRESHOLD[level];
    let keys: Record<string, unknown> | undefined;
    try {
      keys = jobLogKeys(extra, (key) => {
        if (written) this.#logger.warn(reservedKeyWarning(key));
      });
    } catch (error) {
      // A getter that throws: the line is still written, as the worker's logger writes it
      // (telemetry.ts `fromPowertools`), and the job goes on; a log call never throws.
      keys = { logFailed: describeLogFailure(error) };
    }
    if (keys === undefined) this.#logger[level](message);
    else this.#logger[level](message, keys);
  }
  readonly debug = (message: string, ...extra: unknown[]): void => this.#write('debug', message, extra);
  readonly info = (message: string, ...extra: unknown[]): void => this.#write('info', message, extra);
  readonly warn = (message: string, ...extra: unknown[]): void => this.#write('warn', message, extra);
  readonly error = (message: string, ...extra: unknown[]): void => this.#write('error', message, extra);
}
