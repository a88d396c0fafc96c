/** The `ctx` a job's `run` receives: its attempt, ids, signal, logger, lineage, children and steps. */
import type { JobEnvelope } from '../../core/envelope.ts';
import type { JobLogger } from '../../core/logger.ts';
import type { BatchContext } from '../batches/context.ts';
import type { BatchRequest, JobBatchSpec } from '../batches/start.ts';
import type { ChildCollector, ParentIdentity } from '../children.ts';
import { alsoMissing, type FeatureName, MissingFeatureError } from '../features/feature.ts';
import type { Lease } from '../idempotency/guard.ts';
import { deriveIdempotencyKey, jobRecordKey } from '../idempotency/keys.ts';
import {
  type EnqueueOptions,
  identityTypeOf,
  type JobContext,
  type JobDefinition,
  type JobLineage,
  type RateLimitOptions,
  type RateLimitPermit,
  type StepValue,
} from '../job.ts';
import { jobLogger } from '../job-logger.ts';
import type { RateLimitDefinition } from '../limits/rate-limit.ts';
import { lineageOf } from '../lineage.ts';
import type { RunLimit } from '../timeout.ts';
import type { AnyJob } from './deps.ts';
import type { RecordRun } from './record-run.ts';
import { onceUnderLease } from './stored-values.ts';

/**
 * The context of one run (`ctx`). A class, not an object literal of closures: it is made for
 * every record, and its methods and getters live on the prototype. The AbortController (via the
 * run limit), the logger and the lineage are made only when the job reads them.
 */
export class RunContext implements JobContext {
  readonly attempt: number;
  readonly jobId: string;
  readonly source: string;
  readonly partitionKey: string | undefined;
  /** The children enqueued so far; made on the first enqueue (most runs enqueue nothing). */
  children: ChildCollector | undefined;
  /** The batches `startBatch` asked for, started after the run (batches/start.ts). */
  batches: BatchRequest[] | undefined;
  /** `ctx.batch` of a completion job: set before the run (run-job.ts). */
  batch: BatchContext | undefined;
  /**
   * The first MissingFeatureError a ctx method threw: the run fails permanently with it even when
   * the job caught it (run-job.ts), so a child is never lost silently.
   */
  missingFeature: MissingFeatureError | undefined;
  readonly #run: RecordRun;
  readonly #job: AnyJob;
  readonly #envelope: JobEnvelope;
  readonly #key: string;
  readonly #lease: Lease | undefined;
  readonly #limit: RunLimit;
  /** When the run started, epoch ms (what `rateLimit` counts the run's remaining time from). */
  readonly #startedAtMs: number;
  /** `ctx.logger`, made when the job first reads it. */
  #logger: JobLogger | undefined;

  constructor(
    run: RecordRun,
    job: AnyJob,
    envelope: JobEnvelope,
    key: string,
    lease: Lease | undefined,
    limit: RunLimit,
    attempt: number,
    partitionKey: string | undefined,
  ) {
    this.#run = run;
    this.#job = job;
    this.#envelope = envelope;
    this.#key = key;
    this.#lease = lease;
    this.#limit = limit;
    this.attempt = attempt;
    this.jobId = envelope.id;
    this.source = envelope.source;
    this.partitionKey = partitionKey;
    this.#startedAtMs = run.deps.now();
  }

  get signal(): AbortSignal {
    return this.#limit.signal;
  }

  /** The record's logger behind the job's (job-logger.ts): Powertools' extra input, the runtime's keys kept. */
  get logger(): JobLogger {
    this.#logger ??= jobLogger(this.#run.logger);
    return this.#logger;
  }

  get lineage(): JobLineage {
    return lineageOf(this.#envelope);
  }

  /** Who this job's children (and batches) descend from. */
  get parentIdentity(): ParentIdentity {
    return {
      source: this.#envelope.source,
      id: this.#envelope.id,
      partitionKey: this.partitionKey,
      lineage: this.#envelope,
      job: jobRecordKey(identityTypeOf(this.#job), this.#key),
      awsTraceHeader: this.#run.deps.childTraceHeaderOf?.(this.#run.record),
    };
  }

  enqueue<D>(child: JobDefinition<D>, childData: NoInfer<D>, options?: EnqueueOptions): void {
    const children = this.#run.deps.features.children;
    if (children === undefined) throw this.#missing('children', 'ctx.enqueue');
    this.children ??= children.collectChildren(this.parentIdentity);
    this.children.add(child, childData, options);
  }

  startBatch(spec: JobBatchSpec): { readonly batchId: string } {
    const { batches, children } = this.#run.deps.features;
    if (batches === undefined) throw this.#missing('batches', 'ctx.startBatch');
    // The batch's children and its start are sent through the children's sender.
    if (children === undefined) throw this.#missing('children', 'ctx.startBatch');
    this.batches ??= [];
    const request = batches.requestBatch(
      this.parentIdentity,
      this.batches.length,
      spec,
      this.#lease === undefined ? undefined : this.#run.deps.batchLedger?.tableName,
    );
    this.batches.push(request);
    return { batchId: request.batchId };
  }

  once<T>(stepName: string, fn: () => Promise<T & StepValue<T>>): Promise<T> {
    return this.#lease ? onceUnderLease(this.#run, this.#lease, stepName, fn) : fn();
  }

  rateLimit(limit: RateLimitDefinition, options?: RateLimitOptions): Promise<RateLimitPermit> {
    const run = this.#run;
    const job = this.#job;
    const runLimit = this.#limit;
    const startedAtMs = this.#startedAtMs;
    const limits = run.deps.features.limits;
    if (limits === undefined) return Promise.reject(this.#missing('limits', 'ctx.rateLimit'));
    return limits.takeRateLimit(
      {
        jobType: job.type,
        declared: job.rateLimits,
        buckets: run.deps.limits?.buckets,
        remainingMs: () => runLimit.budgetMs - (run.deps.now() - startedAtMs),
        signal: runLimit.signal,
        onWaited: (ms) => run.deps.metrics.add(job.type, 'JobLimitWaitMs', ms),
      },
      limit,
      options,
    );
  }

  /** The error a ctx method throws without `feature`, kept as the run's failure (missingFeature). */
  #missing(feature: FeatureName, method: string): MissingFeatureError {
    const error = new MissingFeatureError(
      feature,
      `job ${this.#job.type}: ${method}`,
      false,
      alsoMissing(feature, this.#run.deps.features),
    );
    this.missingFeature ??= error;
    return error;
  }

  idempotencyKey(stepName: string): string {
    return this.#lease
      ? this.#lease.idempotencyKey(stepName)
      : deriveIdempotencyKey(identityTypeOf(this.#job), this.#key, stepName);
  }
}
