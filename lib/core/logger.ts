/**
 * The structured logger shapes: {@link JobLogger}, what jobs get (`ctx.logger`: four levels, a
 * message and extra input as Powertools Logger takes it), and {@link LogWriter}, what the worker
 * and `JobClient` write to (keys as one object). The worker adapts Powertools Logger to them
 * (lib/runtime/telemetry.ts, `fromPowertools`); `console` satisfies both.
 */

/**
 * What a level method takes after the message, as Powertools Logger 2.x takes it (docs: Logger,
 * "Appending additional keys" and "Logging errors"): an object, whose own enumerable keys are
 * written as they are; an Error, written under the key `error` (`name`, `location`, `message`,
 * `stack`, `cause`, then the error's own keys); or a string, written under the key `extra`.
 * Several may be given (`info('x', { a: 1 }, { b: 2 })`), as Powertools takes them, merged in
 * order; `undefined` (and, from JavaScript, `null`) is skipped.
 */
export type JobLogExtra = Record<string, unknown> | Error | string;

/**
 * Structured logger handed to jobs (`ctx.logger`): each method takes a message and, as
 * Powertools Logger's methods take it, an object of keys, an Error or a string
 * ({@link JobLogExtra}), written as a Powertools Logger writes them, by the worker's default
 * logger or by the Powertools Logger given to `createWorker`. A log call never throws: keys that
 * cannot be read or written give the line a `logFailed` key saying why instead.
 *
 * Every line carries the record's keys, which a job cannot set: the job's identity
 * (`messageId`, `jobType`, `jobId`, `attempt`), its lineage (`parentJobId`, `rootJobId`,
 * `correlationId`, `traceId`) and the Lambda context keys (`cold_start`, `function_arn`,
 * `function_memory_size`, `function_name`, `function_request_id`, `xray_trace_id`,
 * `tenant_id`). Nor can it set `outcome`, the key of the runtime's own record-outcome lines
 * (`retry`, `dead-lettered`...: `sqs-jobs local` and log queries read those as the record's fate,
 * so a job's line must not pass for one). A job's key of one of those names is dropped, after a WARN line
 * `The key "jobId" is a reserved key and will be dropped.` (carrying the record's keys), one per
 * such key at each call whose line is written: as Powertools Logger treats its own reserved keys
 * (`level`, `message`, `sampling_rate`, `service`, `timestamp`: dropped the same way here).
 * Operators follow a job by those keys (docs/contracts.md, "Logs"); name yours otherwise
 * (`childJobId`).
 *
 * @example
 * ```ts
 * import type { JobLogger } from 'sqs-jobs';
 *
 * function charge(logger: JobLogger, invoiceId: string): void {
 *   try {
 *     throw new Error('card declined');
 *   } catch (error) {
 *     // As Powertools: an Error under `error`, a string under `extra`, objects as keys. What a
 *     // `catch` gets may be no Error (`throw { message: 'declined' }`): given as keys, its
 *     // `message` would be dropped (a reserved key) and the line would say nothing of it; so wrap
 *     // what is not an Error, to have it written whole under `thrown`.
 *     logger.error('charge failed', error instanceof Error ? error : { thrown: error });
 *     logger.warn('charge retried', 'card declined');
 *     logger.info('charged', { invoiceId, amountCents: 1200 }, { attempt: 'first' });
 *   }
 * }
 * ```
 */
export interface JobLogger {
  debug(message: string, ...extra: (JobLogExtra | undefined)[]): void;
  info(message: string, ...extra: (JobLogExtra | undefined)[]): void;
  warn(message: string, ...extra: (JobLogExtra | undefined)[]): void;
  error(message: string, ...extra: (JobLogExtra | undefined)[]): void;
}

/**
 * A logger that takes keys as one object: what `JobClient` writes its warnings to (and what the
 * worker writes to). A {@link JobLogger}, a Powertools Logger and `console` are all one; a
 * logger written for `JobClient` before {@link JobLogger} took Errors and strings still is.
 */
export interface LogWriter {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}
