/**
 * The run stage and what follows a successful run: runs the job under its time limit, sends the
 * children it enqueued, completes its lease, and counts it completed. A failure at any of these
 * steps goes to the failure stage (failed.ts); a failed completion write does not (see below).
 */
import type { JobEnvelope } from '../../core/envelope.ts';
import type { BatchContext } from '../batches/context.ts';
import type { LimitsFeature } from '../features/feature.ts';
import type { Lease, LeaseWrite } from '../idempotency/guard.ts';
import type { JobContext } from '../job.ts';
import { LimitWait } from '../limits/errors.ts';
import type { AnyJob } from './deps.ts';
import { failed } from './failed.ts';
import { COMPLETED, type RecordOutcome } from './outcome.ts';
import type { RecordRun } from './record-run.ts';
import { RunContext } from './run-context.ts';
import { warnIfNotStored } from './stored-values.ts';

/**
 * Runs the job and completes the record.
 * @param data the data as the job's schema returned it.
 * @param lease the lease to run under; undefined when idempotency is off for the job.
 * @param jobTimeoutMs the job's own time limit, in milliseconds.
 * @param lambdaBudgetMs the milliseconds left in the invocation, less the deadline margin.
 */
export async function runJob(
  run: RecordRun,
  job: AnyJob,
  envelope: JobEnvelope,
  data: unknown,
  key: string,
  lease: Lease | undefined,
  jobTimeoutMs: number,
  lambdaBudgetMs: number,
): Promise<RecordOutcome> {
  const { deps } = run;
  const { batches, children } = deps.features;
  const attempt = lease?.attempt ?? run.receiveCount;
  const partitionKey = envelope.partitionkey ?? run.record.attributes?.MessageGroupId;
  run.startAttempt(attempt);
  // A batch's completion job reads its batch (counts) before it runs: `ctx.batch`.
  const completesBatch = envelope.completesbatch;
  let batch: BatchContext | undefined;
  if (completesBatch !== undefined && deps.batchLedger !== undefined && batches !== undefined) {
    try {
      batch = await batches.readBatch(deps.batchLedger, completesBatch);
    } catch (error) {
      return failed(run, job, error, lease, undefined);
    }
  }
  const limit = deps.runLimits.start(job.type, jobTimeoutMs, lambdaBudgetMs);
  const ctx = new RunContext(run, job, envelope, key, lease, limit, attempt, partitionKey);
  ctx.batch = batch;

  const startedAt = deps.now();
  let result: unknown;
  try {
    result = await limit.race(startRun(job, data, ctx));
  } catch (error) {
    if (error instanceof LimitWait && limit.reason === undefined && deps.features.limits)
      return afterLimitWait(run, job, lease, error, deps.features.limits.waitForLimit);
    // A missing feature fails the run permanently, whatever the job made of it; when the limit
    // fired, its JobTimeoutError says more than the AbortError the job rethrew.
    const failure = ctx.missingFeature ?? limit.reason ?? error;
    return failed(run, job, failure, lease, deps.now() - startedAt);
  } finally {
    limit.dispose();
  }
  // The job caught a MissingFeatureError of ctx (run-context.ts): what it asked for was not done
  // (a child not sent), so the run fails permanently as if uncaught, its evidence in the DLQ.
  if (ctx.missingFeature !== undefined)
    return failed(run, job, ctx.missingFeature, lease, deps.now() - startedAt);

  let sentChildren = 0;
  const enqueued = ctx.children;
  let childLinks: string[] | undefined;
  // ctx.enqueue collects children only with the children feature (run-context.ts).
  if (enqueued !== undefined && enqueued.entries.length > 0 && children !== undefined) {
    try {
      const sender = deps.childSender();
      sentChildren = await children.sendChildren(sender, enqueued.entries);
      // The parent's record links its children (the chain walk down), when their source is known.
      if (lease && sender.source !== undefined)
        childLinks = children.childRecordKeys(enqueued.entries, sender.source);
    } catch (error) {
      return failed(run, job, error, lease, deps.now() - startedAt);
    }
  }
  // The batches the run started (ctx.startBatch), after its children; requestBatch saw the ledger.
  if (
    ctx.batches !== undefined &&
    ctx.batches.length > 0 &&
    deps.batchLedger !== undefined &&
    batches !== undefined
  ) {
    try {
      await batches.startRequestedBatches(
        deps.childSender(),
        ctx.batches,
        ctx.parentIdentity,
        deps.batchLedger.tableName,
        deps.now(),
      );
      deps.metrics.add(job.type, 'BatchStarted', ctx.batches.length);
      // The starting job's record links its batches too (`sqs-jobs job` shows their progress).
      if (lease)
        childLinks = [...(childLinks ?? []), ...ctx.batches.map((b) => batches.batchRecordKey(b.batchId))];
    } catch (error) {
      return failed(run, job, error, lease, deps.now() - startedAt);
    }
  }
  const durationMs = deps.now() - startedAt;

  if (lease) {
    warnIfNotStored(run, result, { kind: 'result', jobType: job.type });
    // A batch child's completion is counted in its batch in the same transaction (batches feature).
    if (envelope.batchid !== undefined && batches !== undefined) {
      const pending = await batches.completeChildRun(run, job, lease, envelope, result, childLinks, attempt);
      if (pending !== undefined) return pending;
    } else {
      try {
        noteCompletionWrite(
          run,
          job,
          await (completesBatch !== undefined && batches !== undefined
            ? batches.completeBatchCompletion(run, lease, completesBatch, job.type, result, childLinks)
            : childLinks === undefined
              ? lease.complete(result)
              : lease.complete(result, childLinks)),
        );
      } catch (error) {
        // The work and its children are done: acknowledging risks a rare re-run on a duplicate
        // delivery, while retrying would re-run it for certain.
        run.logger.error('could not mark the job completed in the idempotency store', { error });
      }
    }
  }
  deps.metrics.add(job.type, 'JobCompleted');
  deps.metrics.add(job.type, 'JobDuration', durationMs);
  if (deps.completedLogLevel !== undefined) {
    run.logger[deps.completedLogLevel]('job completed', {
      outcome: 'completed',
      durationMs,
      children: sentChildren,
    });
  }
  // Only the blocker of a parked group has anything to unpark: no await for the others.
  if (run.blocker === undefined || deps.features.groupParking === undefined) return COMPLETED;
  return (await deps.features.groupParking.unparkAfterCompletion(run, job)) ?? COMPLETED;
}

/** A completion the store fenced (another run took the lease over): counted and logged. */
export function noteCompletionWrite(run: RecordRun, job: AnyJob, write: LeaseWrite): void {
  if (write === 'fenced') {
    run.deps.metrics.add(job.type, 'JobLeaseFenced');
    run.logger.warn('lease was taken over by another run before completion; its run will complete the key');
  }
}

/**
 * The run stopped on a full rate limit (`ctx.rateLimit` threw {@link LimitWait}): hand the lease
 * back without counting the attempt, then wait outside the run (limit-wait.ts).
 */
async function afterLimitWait(
  run: RecordRun,
  job: AnyJob,
  lease: Lease | undefined,
  wait: LimitWait,
  waitForLimit: LimitsFeature['waitForLimit'],
): Promise<RecordOutcome> {
  if (lease) {
    try {
      // A guard without handBack releases it as a transient failure (an attempt spent).
      const write = await (lease.handBack ? lease.handBack() : lease.fail(wait, 'transient'));
      if (write === 'fenced') run.deps.metrics.add(job.type, 'JobLeaseFenced');
    } catch (error) {
      // The lease then ends at its expiry; the next delivery takes it over as an interrupted run.
      run.logger.warn('could not hand the lease back after a rate-limit wait; it ends at its expiry', {
        error,
      });
    }
  }
  return waitForLimit(run, job, {
    kind: 'rate',
    limit: wait.limitName,
    key: wait.key,
    minWaitMs: wait.waitMs,
  });
}

/** Starts a job's run; a synchronous throw inside `run` becomes a rejection. */
function startRun(job: AnyJob, data: unknown, ctx: JobContext): Promise<unknown> {
  try {
    return Promise.resolve(job.run(data, ctx));
  } catch (error) {
    return Promise.reject(error);
  }
}
