/**
 * The soak's batches (`npm run soak -- --batches N`, docs/architecture.md "Batches"): many small
 * batches run under every fault kind, so that each completion job is seen to run exactly once and
 * no batch to hang. Apart from the nightly invoice run (./nightly-invoices.ts), which is the
 * sample's one real batch; these exist to be counted.
 *
 * - `soak.batch-start` (standard `notifications`): starts one batch of its `children` (each
 *   `fail`: dead-lettered on purpose, `nest`: starts a batch of its own of that many children).
 * - `soak.batch-child`: returns its index, or throws a PermanentError (`fail`, dead-lettered at
 *   once: the batch's `complete-with-failures` is exercised), or starts a nested batch (`nest`).
 * - `soak.batch-summary`, the completion job: reads every child's outcome and sends one email per
 *   batch through the mail API under `ctx.once` with an idempotency key, so the fake service's
 *   side-effect count for the batch's reference ({@link soakBatchServiceReference}) is the
 *   evidence that it ran exactly once, not our own records.
 */
import { defineJob, type JobBatchSpec, PermanentError } from 'sqs-jobs';
import { z } from 'zod';
import {
  dependenciesFromEnv,
  SAMPLE_JOB_TIMEOUT_SECONDS,
  SAMPLE_RETRY,
  type SampleDependencies,
} from './jobs.ts';

const key = z.string().min(1).max(100);
const child = z.object({ fail: z.boolean(), nest: z.number().int().min(0).max(10) });
/** Data of `soak.batch-start`: the batch's key (its summary's reference) and its children. */
export const soakBatchStartSchema = z.object({ batchKey: key, children: z.array(child).max(100) });
/** Data of `soak.batch-child`. */
export const soakBatchChildSchema = z.object({
  batchKey: key,
  index: z.number().int().min(0),
  fail: z.boolean(),
  nest: z.number().int().min(0).max(10),
});
/** Data of `soak.batch-summary`. */
export const soakBatchSummarySchema = z.object({ batchKey: key });

/** Email template of a soak batch's summary. */
export const SOAK_BATCH_TEMPLATE = 'soak-batch-summary';
/** Job type of the children (dead letters of a `fail` child are expected, workload/soak-batches.ts). */
export const SOAK_BATCH_CHILD_TYPE = 'soak.batch-child';
/**
 * A soak batch's open limit, in seconds: its watchdog checks it then (a WARN and `BatchOverdue`
 * when still open). Short, as the watchdog is a delayed message the run waits for.
 */
export const SOAK_BATCH_OPEN_LIMIT_SECONDS = 30;

/** The key of the nested batch that child `index` of batch `batchKey` starts. */
export function nestedBatchKey(batchKey: string, index: number): string {
  return `${batchKey}.${index}`;
}

/** The business reference the fake mail API counts a soak batch's summary email under. */
export function soakBatchServiceReference(batchKey: string): string {
  return `email:batch-${batchKey}:${SOAK_BATCH_TEMPLATE}`;
}

/** Whether a fake mail API reference is a soak batch's summary email ({@link soakBatchServiceReference}). */
export function isSoakBatchServiceReference(reference: string): boolean {
  return reference.startsWith('email:batch-') && reference.endsWith(`:${SOAK_BATCH_TEMPLATE}`);
}

/** Builds the three jobs over the given dependencies (resolved lazily, on the first run). */
export function createSoakBatchJobs(deps: () => SampleDependencies = dependenciesFromEnv) {
  const summary = defineJob({
    type: 'soak.batch-summary',
    queue: 'notifications',
    schema: soakBatchSummarySchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ batchKey }, ctx) {
      const batch = ctx.batch;
      if (batch === undefined)
        throw new PermanentError('soak.batch-summary runs only as a batch completion job');
      let succeeded = 0;
      let deadLettered = 0;
      for await (const each of batch.children()) {
        if (each.status === 'succeeded') succeeded += 1;
        else deadLettered += 1;
      }
      const { messageId } = await ctx.once('send-summary', () =>
        deps().api.sendEmail(
          { bookingId: `batch-${batchKey}`, to: 'soak@example.com', template: SOAK_BATCH_TEMPLATE },
          { idempotencyKey: ctx.idempotencyKey('send-summary'), signal: ctx.signal },
        ),
      );
      return { batchKey, succeeded, deadLettered, messageId };
    },
  });

  // Declared before the child, which starts batches of children like itself.
  const batchOf = (batchKey: string, children: readonly { fail: boolean; nest: number }[]): JobBatchSpec => ({
    children: children.map((c, index) => ({ job: childJob, data: { batchKey, index, ...c } })),
    completion: { job: summary, data: { batchKey } },
    onChildDeadLettered: 'complete-with-failures',
    openLimitSeconds: SOAK_BATCH_OPEN_LIMIT_SECONDS,
  });

  const childJob = defineJob({
    type: SOAK_BATCH_CHILD_TYPE,
    queue: 'notifications',
    schema: soakBatchChildSchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ batchKey, index, fail, nest }, ctx) {
      if (fail) throw new PermanentError(`deliberate failure of child ${index} of batch ${batchKey}`);
      if (nest > 0) {
        const nested = nestedBatchKey(batchKey, index);
        ctx.startBatch(
          batchOf(
            nested,
            Array.from({ length: nest }, () => ({ fail: false, nest: 0 })),
          ),
        );
        return { index, nested };
      }
      return { index };
    },
  });

  const start = defineJob({
    type: 'soak.batch-start',
    queue: 'notifications',
    schema: soakBatchStartSchema,
    retry: SAMPLE_RETRY,
    timeoutSeconds: SAMPLE_JOB_TIMEOUT_SECONDS,
    async run({ batchKey, children }, ctx) {
      return ctx.startBatch(batchOf(batchKey, children));
    },
  });

  return { start, child: childJob, summary };
}

/** The soak batches' jobs over the environment's dependencies, as the sample's workers run them. */
export const soakBatchJobs = createSoakBatchJobs();
