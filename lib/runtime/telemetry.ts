/**
 * Logs and metrics of the worker: structured JSON lines (the worker's own default logger,
 * default-logger.ts, or a given Powertools Logger) and CloudWatch Embedded Metric Format, written
 * by the worker's own {@link DirectEmf} or through a given Powertools Metrics. Metric names,
 * units and dimension sets are fixed by docs/contracts.md ("Metrics").
 */
// Types only: neither Powertools package is loaded (or bundled) unless the user passes one.
import type { Logger } from '@aws-lambda-powertools/logger';
// Types only: the default worker writes EMF itself (DirectEmf), so the Powertools Metrics package
// is loaded (and bundled) only by code that passes a Metrics to createWorker.
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { MetricUnit } from '@aws-lambda-powertools/metrics/types';
import type { LogWriter } from '../core/logger.ts';
import type { DefaultLogger } from './default-logger.ts';

/** The CloudWatch units the worker writes, as Powertools' `MetricUnit` names them. */
const UNIT = { Count: 'Count', Milliseconds: 'Milliseconds' } as const satisfies Record<
  string,
  `${MetricUnit}`
>;

/**
 * One failed record as the EMF metadata `failedJobs` lists it: the job and its lineage
 * (docs/contracts.md, "Metrics"). Metadata, never dimensions: each value would be a new metric.
 */
export interface FailedJobMetadata {
  readonly jobId: string;
  readonly outcome: 'retry' | 'dead-lettered';
  readonly parentJobId?: string;
  readonly rootJobId?: string;
  readonly correlationId?: string;
  readonly traceId?: string;
}

/** Most failed records listed per EMF blob; the rest are counted in `failedJobsNotListed`. */
export const MAX_FAILED_JOBS_LISTED = 10;

/** Default CloudWatch namespace when `POWERTOOLS_METRICS_NAMESPACE` is unset. */
export const DEFAULT_METRICS_NAMESPACE = 'SqsJobs';

/** The per-job metrics of the contract. */
export type JobMetricName =
  | 'JobCompleted'
  | 'JobRetried'
  | 'JobDeadLettered'
  | 'JobDuplicateAbsorbed'
  /** A completion or release refused because another run took the lease over (fencing). */
  | 'JobLeaseFenced'
  /** A job sent for later that was cancelled arrived and was deleted without running. */
  | 'JobCancelled'
  /** A message of an earlier generation of a rescheduled job arrived and was deleted without running. */
  | 'JobSuperseded'
  /** A record over a flow-control limit (concurrency, rate) sent to wait outside the run (no attempt spent). */
  | 'JobLimitDelayed'
  /** Milliseconds a run spent waiting for a rate-limit token inside the run (summed per batch). */
  | 'JobLimitWaitMs'
  | 'JobDuration'
  /** Batches started by a job of this type (`ctx.startBatch`, docs/architecture.md "Batches"). */
  | 'BatchStarted'
  /** Children of this type counted in their batch (completed or dead-lettered), once each. */
  | 'BatchChildCounted'
  /** Completion jobs sent by a worker that saw a batch done (a repeat is absorbed as a duplicate). */
  | 'BatchCompletionSent'
  /** Batches completed: the completion job of this type completed. */
  | 'BatchCompleted'
  /** Batches still open past their `openLimitSeconds` (the watchdog of a completion job of this type). */
  | 'BatchOverdue';

/** `JobType` dimension value of a record whose type could not be read (bad JSON). */
export const UNKNOWN_JOB_TYPE = 'unknown';

/** `Queue` dimension value of a batch failed before the worker knew its queue name. */
export const UNKNOWN_QUEUE = 'unknown';

/**
 * Counts one batch failed outside any record (docs/contracts.md, "Metrics"): `BatchFailed`
 * (Count) with the dimension set `[Queue]`, published at once. Such a batch is answered with
 * every record failed, so Lambda's `Errors` never sees it; this is what the JobQueue alarm
 * `batchesFailed` watches.
 */
export function publishBatchFailed(metrics: Metrics | DirectEmf, queueName: string): void {
  if (metrics instanceof DirectEmf) {
    metrics.publish(queueName, undefined, [{ name: 'BatchFailed', unit: UNIT.Count, value: 1 }]);
    return;
  }
  // As in BatchMetrics.flush: Queue as the only default dimension gives exactly [Queue].
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ Queue: queueName });
  metrics.addMetric('BatchFailed', UNIT.Count as MetricUnit, 1);
  metrics.publishStoredMetrics();
}

/**
 * Values per EMF blob and metric kept well under the EMF limit of 100 (Powertools flushes on
 * its own at 100 and clears the dimensions with it, which would strip the next values).
 */
const VALUES_PER_BLOB = 50;

/** A CloudWatch unit as Powertools names it. */
type EmfUnit = `${MetricUnit}`;

/**
 * The worker's own EMF writer, used when no Powertools `Metrics` is given to `createWorker`: the
 * same blobs as {@link BatchMetrics.flush} through Powertools (namespace, dimension sets, units,
 * value arrays, key order; tested side by side, byte for byte), written as one string per blob. Through
 * Powertools every value is a separate `addMetric` call that reads the environment and counts the
 * stored metrics, about a fifth of the worker's CPU per record at 10 records per batch (issue 10).
 */
export class DirectEmf {
  /** CloudWatch namespace. */
  readonly namespace: string;
  /** As Powertools decides it: `POWERTOOLS_METRICS_DISABLED`, else `POWERTOOLS_DEV`. */
  readonly disabled: boolean;
  /** Where a blob goes (one JSON line). @default stdout, as Powertools writes it */
  readonly #write: (line: string) => void;
  constructor(
    env: Readonly<Record<string, string | undefined>> = process.env,
    write: (line: string) => void = (line) => {
      process.stdout.write(line);
    },
  ) {
    this.namespace = env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_METRICS_NAMESPACE;
    const disabled = env.POWERTOOLS_METRICS_DISABLED;
    this.disabled = disabled !== undefined ? isTruthy(disabled) : isTruthy(env.POWERTOOLS_DEV);
    this.#write = write;
    this.#namespaceJson = JSON.stringify(this.namespace);
  }

  readonly #namespaceJson: string;
  /** Per metric name: its `{"Name","Unit"}` definition and the `,"Name":` before its value, as JSON. */
  readonly #definitions = new Map<
    string,
    { readonly unit: string; readonly json: string; readonly member: string }
  >();

  #definition(m: BlobMetric): { readonly json: string; readonly member: string } {
    let definition = this.#definitions.get(m.name);
    if (definition === undefined || definition.unit !== m.unit) {
      const name = JSON.stringify(m.name);
      definition = {
        unit: m.unit,
        json: `{"Name":${name},"Unit":${JSON.stringify(m.unit)}}`,
        member: `,${name}:`,
      };
      this.#definitions.set(m.name, definition);
    }
    return definition;
  }

  /**
   * Writes one blob with dimension sets `[Queue]` and `[Queue, JobType]`, or `[Queue]` alone
   * without a job type (`BatchFailed`).
   */
  publish(
    queueName: string,
    jobType: string | undefined,
    metrics: readonly { name: string; unit: EmfUnit; value: number | readonly number[] }[],
    metadata?: Readonly<Record<string, unknown>>,
  ): void {
    if (this.disabled || metrics.length === 0) return;
    // Built as a string: the blob Powertools writes, key for key (_aws, the metadata, the
    // dimensions, the values), without building the object JSON.stringify would walk. Metric
    // names and metadata keys are the contract's (docs/contracts.md), never Queue or JobType.
    let blob = `{"_aws":{"Timestamp":${Date.now()},"CloudWatchMetrics":[{"Namespace":${this.#namespaceJson},"Dimensions":${jobType === undefined ? '[["Queue"]]' : '[["Queue"],["Queue","JobType"]]'},"Metrics":[`;
    for (let i = 0; i < metrics.length; i++) {
      blob += `${i === 0 ? '' : ','}${this.#definition(metrics[i] as BlobMetric).json}`;
    }
    blob += ']}]}';
    // Where Powertools puts metadata: after _aws, before the dimensions.
    for (const key in metadata) {
      const value = JSON.stringify(metadata[key]);
      if (value !== undefined) blob += `,${JSON.stringify(key)}:${value}`;
    }
    blob += `,"Queue":${JSON.stringify(queueName)}`;
    if (jobType !== undefined) blob += `,"JobType":${JSON.stringify(jobType)}`;
    for (const m of metrics) blob += `${this.#definition(m).member}${JSON.stringify(m.value)}`;
    this.#write(`${blob}}\n`);
  }
}

/** Powertools' reading of a boolean environment variable (`true`, `1`, `yes`, `on`). */
function isTruthy(value: string | undefined): boolean {
  return value !== undefined && ['true', '1', 'yes', 'on'].includes(value.trim().toLowerCase());
}

/** Where the worker's metrics go: a given Powertools Metrics, or the worker's own EMF writer. */
export type MetricsTarget = Metrics | DirectEmf;

/** One metric of an EMF blob: a count, or one or more durations. */
interface BlobMetric {
  readonly name: string;
  readonly unit: EmfUnit;
  readonly value: number | readonly number[];
}

/**
 * Writes one EMF blob with dimension sets `[Queue]` and `[Queue, JobType]`: through the worker's
 * own writer in one line, or through Powertools (`Queue` as the only default dimension plus the
 * sets {} and {JobType} gives exactly those; naming Queue in both sets instead makes Powertools
 * warn on every flush, and setting it again without clearing warns on every invocation).
 */
function publishBlob(
  target: MetricsTarget,
  queueName: string,
  jobType: string,
  metrics: readonly BlobMetric[],
  metadata: Readonly<Record<string, unknown>> | undefined,
): void {
  if (target instanceof DirectEmf) {
    target.publish(queueName, jobType, metrics, metadata);
    return;
  }
  target.clearDefaultDimensions();
  target.setDefaultDimensions({ Queue: queueName });
  target.addDimensions({});
  target.addDimensions({ JobType: jobType });
  // Powertools types metadata values as strings; it writes any JSON value as it is.
  for (const [key, value] of Object.entries(metadata ?? {})) target.addMetadata(key, value as string);
  for (const m of metrics) {
    for (const value of typeof m.value === 'number' ? [m.value] : m.value) {
      target.addMetric(m.name, m.unit as MetricUnit, value);
    }
  }
  target.publishStoredMetrics();
}

/**
 * Collects the metric values of one invocation and publishes them at its end, one EMF blob per
 * job type. One blob carries one value per dimension, and a batch can mix job types, so the
 * Powertools middleware (one blob per invocation) does not fit here. Created per invocation:
 * nothing is kept between invocations.
 *
 * Dead letters are the exception ({@link deadLettered}): each is written the moment its DLQ send
 * succeeded, because what is collected here is lost when the execution environment crashes or
 * times out before the end of the invocation, and the `JobDeadLettered` alarm must see every one.
 */
export class BatchMetrics {
  readonly #values = new Map<string, Map<JobMetricName, number[]>>();
  /** Failed records per job type, for the `failedJobs` metadata; made at the first failure. */
  #failures: Map<string, FailedJobMetadata[]> | undefined;
  /** Where dead letters are written at once; undefined: collected like the rest. */
  readonly #immediate: { readonly target: MetricsTarget; readonly queueName: string } | undefined;

  /**
   * @param immediate where {@link deadLettered} writes at once (the worker's metrics and queue
   *   name). @default none: dead letters are collected for {@link flush} like every other value
   */
  constructor(immediate?: { readonly target: MetricsTarget; readonly queueName: string }) {
    this.#immediate = immediate;
  }

  /**
   * Counts one dead-lettered record (`JobDeadLettered`) and lists it in `failedJobs` (when
   * `failure` is given). With an `immediate` target it is written at once as its own EMF blob
   * (`JobDeadLettered` 1 and `failedJobs` with this record), so a crash or timeout later in the
   * invocation cannot leave it uncounted (issue 22: 27 kills lost one of 24 in a soak). Never
   * throws: when that write fails, the value is collected for {@link flush} instead.
   */
  deadLettered(jobType: string, failure: FailedJobMetadata | undefined): void {
    if (this.#immediate !== undefined) {
      try {
        publishBlob(
          this.#immediate.target,
          this.#immediate.queueName,
          jobType,
          [{ name: 'JobDeadLettered', unit: UNIT.Count, value: 1 }],
          failure === undefined ? undefined : { failedJobs: [failure] },
        );
        return;
      } catch {
        // Collected below: written with the batch if the invocation gets that far.
      }
    }
    this.add(jobType, 'JobDeadLettered');
    if (failure !== undefined) this.addFailure(jobType, failure);
  }

  /**
   * Notes a failed record (retried or dead-lettered) with its lineage: the first blob of its job
   * type lists it as metadata `failedJobs` (at most {@link MAX_FAILED_JOBS_LISTED}).
   */
  addFailure(jobType: string, failure: FailedJobMetadata): void {
    this.#failures ??= new Map();
    const list = this.#failures.get(jobType);
    if (list) list.push(failure);
    else this.#failures.set(jobType, [failure]);
  }

  /** The metadata of the first blob of a job type: its failed records, if any. */
  #metadataOf(jobType: string): Record<string, unknown> | undefined {
    const list = this.#failures?.get(jobType);
    if (list === undefined) return undefined;
    return list.length <= MAX_FAILED_JOBS_LISTED
      ? { failedJobs: list }
      : {
          failedJobs: list.slice(0, MAX_FAILED_JOBS_LISTED),
          failedJobsNotListed: list.length - MAX_FAILED_JOBS_LISTED,
        };
  }

  /** Records one value: a count of 1, or a duration in milliseconds for `JobDuration`. */
  add(jobType: string, name: JobMetricName, value = 1): void {
    let byName = this.#values.get(jobType);
    if (!byName) {
      byName = new Map();
      this.#values.set(jobType, byName);
    }
    const list = byName.get(name) ?? [];
    list.push(value);
    byName.set(name, list);
  }

  /**
   * Publishes everything collected through `metrics`, with dimension sets `[Queue]` and
   * `[Queue, JobType]`, then forgets it. Counts are summed per job type; durations keep every
   * value (EMF value arrays) so percentiles stay right.
   */
  flush(metrics: MetricsTarget, queueName: string): void {
    for (const [jobType, byName] of this.#values) {
      const durations = byName.get('JobDuration') ?? [];
      const blobs = Math.max(1, Math.ceil(durations.length / VALUES_PER_BLOB));
      for (let blob = 0; blob < blobs; blob++) {
        const values: BlobMetric[] = [];
        if (blob === 0) {
          for (const [name, list] of byName) {
            if (name === 'JobDuration') continue;
            let sum = 0;
            for (const v of list) sum += v;
            values.push({
              name,
              unit: name === 'JobLimitWaitMs' ? UNIT.Milliseconds : UNIT.Count,
              value: sum,
            });
          }
        }
        const part =
          durations.length <= VALUES_PER_BLOB
            ? durations
            : durations.slice(blob * VALUES_PER_BLOB, (blob + 1) * VALUES_PER_BLOB);
        // Powertools writes a single value as a number, several as an array.
        if (part.length > 0) {
          values.push({
            name: 'JobDuration',
            unit: UNIT.Milliseconds,
            value: part.length === 1 ? (part[0] as number) : part,
          });
        }
        publishBlob(metrics, queueName, jobType, values, blob === 0 ? this.#metadataOf(jobType) : undefined);
      }
    }
    this.#values.clear();
    this.#failures = undefined;
  }
}

/**
 * Minimal logger surface the worker writes to (see {@link fromPowertools}): its own lines give
 * keys as one object. A job's `ctx.logger` (`JobLogger`, any extra input Powertools takes)
 * is turned into this shape by lib/runtime/job-logger.ts.
 */
export interface WorkerLogger extends LogWriter {
  /**
   * The level below which nothing is written, as Powertools numbers levels (`LogLevelThreshold`:
   * DEBUG 8, INFO 12, WARN 16, ERROR 20), read at each call (sampling changes it). Undefined when
   * not known: any line may be written.
   */
  readonly level?: number;
}

/** The level methods of a Powertools Logger, or of the worker's default logger that writes as it does. */
type LevelLogger =
  | Pick<Logger, 'debug' | 'info' | 'warn' | 'error' | 'level'>
  | Pick<DefaultLogger, 'debug' | 'info' | 'warn' | 'error' | 'level'>;

/**
 * Adapts a Powertools Logger (or the default logger) to {@link WorkerLogger}: its methods take the
 * extra attributes as a rest parameter, so an absent `extra` must not be passed on as `undefined`.
 *
 * A log call never throws: when the extra attributes cannot be written (an error whose `stack`
 * getter throws, a value too deep for `JSON.stringify`), the line is written with `logFailed`
 * (what went wrong) in their place. A record's outcome never depends on its log line: a throw
 * after a dead letter was sent would report the record failed, and every later delivery would
 * send it to the DLQ once more (issue 22).
 */
export function fromPowertools(levelLogger: LevelLogger): WorkerLogger {
  // Both take (message, extra?) as the worker calls them.
  const logger = levelLogger as Pick<DefaultLogger, 'debug' | 'info' | 'warn' | 'error' | 'level'>;
  const call =
    (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, extra?: Record<string, unknown>) => {
      try {
        if (extra === undefined) logger[level](message);
        else logger[level](message, extra);
      } catch (error) {
        try {
          logger[level](message, { logFailed: describeLogFailure(error) });
        } catch {
          // Not even the plain line can be written: nothing more to try.
        }
      }
    };
  return {
    get level() {
      return logger.level;
    },
    debug: call('debug'),
    info: call('info'),
    warn: call('warn'),
    error: call('error'),
  };
}

/** `Name: message` of why a log line could not be written; never throws. */
export function describeLogFailure(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'the attributes could not be written';
  }
}

/**
 * A logger that adds the same keys (job type, id, messageId, attempt) to every entry, without
 * mutating the shared logger: records of one batch run concurrently, so `appendKeys` on the
 * shared instance would mix their keys. One small object per call (methods on the prototype):
 * it is made several times per record.
 */
export function withKeys(logger: WorkerLogger, keys: Record<string, unknown>): WorkerLogger {
  return new KeyedLogger(logger, keys);
}

class KeyedLogger implements WorkerLogger {
  readonly #logger: WorkerLogger;
  readonly #keys: Record<string, unknown>;
  constructor(logger: WorkerLogger, keys: Record<string, unknown>) {
    this.#logger = logger;
    this.#keys = keys;
  }
  get level(): number | undefined {
    return this.#logger.level;
  }
  debug(message: string, extra?: Record<string, unknown>): void {
    this.#logger.debug(message, { ...this.#keys, ...extra });
  }
  info(message: string, extra?: Record<string, unknown>): void {
    this.#logger.info(message, { ...this.#keys, ...extra });
  }
  warn(message: string, extra?: Record<string, unknown>): void {
    this.#logger.warn(message, { ...this.#keys, ...extra });
  }
  error(message: string, extra?: Record<string, unknown>): void {
    this.#logger.error(message, { ...this.#keys, ...extra });
  }
}
