/**
 * `ctx.logger` of `runJob`: the worker's own `ctx.logger` (lib/runtime/job-logger.ts) over the
 * worker's own guard (telemetry.ts `fromPowertools`), writing to a recorder instead of stdout. The
 * recorder keeps each line's keys as the worker's default logger writes them (log-format.ts
 * `formatLine`, read back from its JSON). One path, so what a test sees of a job's log calls is
 * what the worker writes, and the two cannot drift: a call that would fail or be dropped in the
 * worker does the same here, a key that cannot be read gives `logFailed` here as there.
 */
import type { JobLogger } from '../core/logger.ts';
import { LOG_LEVEL_THRESHOLD } from '../runtime/default-logger.ts';
import { jobLogger } from '../runtime/job-logger.ts';
import { formatLine } from '../runtime/log-format.ts';
import { fromPowertools } from '../runtime/telemetry.ts';

/**
 * One line `ctx.logger` wrote, as the worker writes it. `extra` holds the line's own keys as they
 * read back from the worker's JSON line, undefined when it has none: an Error given is under
 * `error` as `{ name, location, message, stack, cause, ...its own keys }`, a string under
 * `extra`, an object's keys as `JSON.stringify` writes them (a bigint as its digits, an object met
 * again inside itself left out, `undefined` and top-level `null` and `''` left out); a key the
 * runtime owns (`jobId`...; `JobLogger`) is dropped, after a `warn` line
 * `The key "jobId" is a reserved key and will be dropped.`; keys that cannot be read or written
 * (a getter or `toJSON` that throws) are replaced by `logFailed` (`RangeError: why`).
 */
export interface LoggedLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly extra: Record<string, unknown> | undefined;
}

/** The levels `runJob` can record at, as Powertools names them (`POWERTOOLS_LOG_LEVEL`). */
export type RecordedLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** The levels a log level name may be given as. */
export const RECORDED_LOG_LEVELS: readonly RecordedLogLevel[] = ['DEBUG', 'INFO', 'WARN', 'ERROR'];

/**
 * A `ctx.logger` that appends to `logs` what a worker at log level `level` writes: lines below
 * the level are not recorded, nor their reserved-key warnings (as Powertools).
 */
export function recordingJobLogger(logs: LoggedLine[], level: RecordedLogLevel): JobLogger {
  const threshold = LOG_LEVEL_THRESHOLD[level] as number;
  const record =
    (lineLevel: LoggedLine['level']) =>
    (message: string, extra?: unknown): void => {
      if ((LOG_LEVEL_THRESHOLD[lineLevel.toUpperCase()] as number) < threshold) return;
      // Throws what the worker's logger throws for these keys: fromPowertools then records the
      // line with `logFailed`, as the worker writes it.
      logs.push({ level: lineLevel, message, extra: writtenKeys(extra) });
    };
  return jobLogger(
    fromPowertools({
      level: threshold,
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    }),
  );
}

/** The line's own keys as the worker's default logger writes them, read back; undefined for none. */
function writtenKeys(extra: unknown): Record<string, unknown> | undefined {
  if (extra === undefined || extra === null) return undefined;
  // Base keys given as '' or undefined are left out of the line, as Powertools leaves them out;
  // `sampling_rate` (a number) is the one left, and no job key has its name (reserved).
  const line = JSON.parse(
    formatLine({
      level: '',
      message: '',
      timestamp: '',
      service: '',
      context: undefined,
      samplingRate: 0,
      xrayTraceId: undefined,
      extra: extra as Record<string, unknown>,
      dev: false,
    }),
  ) as Record<string, unknown>;
  delete line.sampling_rate;
  return Object.keys(line).length === 0 ? undefined : line;
}
