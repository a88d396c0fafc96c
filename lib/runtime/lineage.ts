/**
 * A job's lineage as the worker shows it: to job code (`ctx.lineage`) and in log lines (the keys
 * `parentJobId`, `rootJobId`, `correlationId`, `traceId`), read from the envelope attributes
 * `causationid`, `rootid`, `correlationid`, `parentjob` and `traceparent` (docs/contracts.md,
 * "Lineage and trace context").
 *
 * Nothing here runs per record unless something is logged or `ctx.lineage` is read: the log
 * keys are computed at the first line a record writes.
 */
import type { EnvelopeLineage, JobEnvelope } from '../core/envelope.ts';
import { traceIdOf } from '../core/trace-context.ts';
import type { JobLineage } from './job.ts';
import type { WorkerLogger } from './telemetry.ts';

/** The lineage of a job, from its envelope. */
export function lineageOf(envelope: Pick<JobEnvelope, 'id'> & EnvelopeLineage): JobLineage {
  return {
    parentJobId: envelope.causationid,
    rootJobId: envelope.rootid ?? envelope.id,
    correlationId: envelope.correlationid,
    parentJob: envelope.parentjob,
    traceId: envelope.traceparent === undefined ? undefined : traceIdOf(envelope.traceparent),
    traceparent: envelope.traceparent,
    tracestate: envelope.tracestate,
  };
}

/** The log keys of a job's lineage; empty for a root job without correlation id or trace. */
export interface LineageLogKeys {
  /** The parent's envelope id; children only. */
  parentJobId?: string;
  /** The chain root's envelope id; children only (a root's own `jobId` is the root). */
  rootJobId?: string;
  correlationId?: string;
  /** The W3C trace id (32 hex digits). */
  traceId?: string;
}

/** The log keys of an envelope's lineage (only those that are set). */
export function lineageLogKeys(envelope: EnvelopeLineage): LineageLogKeys {
  const keys: LineageLogKeys = {};
  if (envelope.causationid !== undefined) keys.parentJobId = envelope.causationid;
  if (envelope.rootid !== undefined) keys.rootJobId = envelope.rootid;
  if (envelope.correlationid !== undefined) keys.correlationId = envelope.correlationid;
  if (envelope.traceparent !== undefined) keys.traceId = traceIdOf(envelope.traceparent);
  return keys;
}

/** Whether an envelope has anything {@link lineageLogKeys} would log. */
function hasLineage(envelope: EnvelopeLineage): boolean {
  return (
    envelope.causationid !== undefined ||
    envelope.rootid !== undefined ||
    envelope.correlationid !== undefined ||
    envelope.traceparent !== undefined
  );
}

/**
 * A logger that adds the envelope's lineage keys to every line (after the line's own keys), or
 * `logger` itself when there is nothing to add. The keys are computed at the first line.
 */
export function withLineage(logger: WorkerLogger, envelope: EnvelopeLineage): WorkerLogger {
  return hasLineage(envelope) ? new LineageLogger(logger, envelope) : logger;
}

class LineageLogger implements WorkerLogger {
  readonly #logger: WorkerLogger;
  readonly #envelope: EnvelopeLineage;
  #keys: LineageLogKeys | undefined;
  constructor(logger: WorkerLogger, envelope: EnvelopeLineage) {
    this.#logger = logger;
    this.#envelope = envelope;
  }
  get level(): number | undefined {
    return this.#logger.level;
  }
  #with(extra: Record<string, unknown> | undefined): Record<string, unknown> {
    this.#keys ??= lineageLogKeys(this.#envelope);
    return { ...extra, ...this.#keys };
  }
  debug(message: string, extra?: Record<string, unknown>): void {
    this.#logger.debug(message, this.#with(extra));
  }
  info(message: string, extra?: Record<string, unknown>): void {
    this.#logger.info(message, this.#with(extra));
  }
  warn(message: string, extra?: Record<string, unknown>): void {
    this.#logger.warn(message, this.#with(extra));
  }
  error(message: string, extra?: Record<string, unknown>): void {
    this.#logger.error(message, this.#with(extra));
  }
}
