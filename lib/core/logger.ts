/**
 * The structured logger shape shared by jobs (`ctx.logger`), the worker and `JobClient`: four
 * levels, a message and optional keys. The worker adapts Powertools Logger to it
 * (lib/runtime/telemetry.ts, `fromPowertools`); `console` satisfies it too.
 */

/** Structured logger handed to jobs and taken by `JobClient`. */
export interface JobLogger {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}
