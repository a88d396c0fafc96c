/**
 * The `limits` feature of `sqs-jobs/worker` (flow control, lib/runtime/limits/): per-key
 * concurrency slots (`defineJob({ concurrency })`), shared rate limits (`rateLimits`,
 * `ctx.rateLimit`) and the record's wait for them. A worker with a job that declares limits and
 * without this feature is refused by `createWorker` (WorkerConfigError naming the import).
 */
import { rateLimitConflicts } from '../limits/rate-limit.ts';
import { LimitStore, limitStoreProblems } from '../limits/store.ts';
import { takeRateLimit } from '../limits/take.ts';
import { releaseSlot, takeSlot } from '../record/concurrency-slot.ts';
import { waitForLimit } from '../record/limit-wait.ts';
import { brandFeature, type LimitsFeature } from './feature.ts';

/**
 * Limits: `concurrency`, `rateLimits` and `ctx.rateLimit`, shared by every instance through the
 * idempotency table (or the worker's `limits` store). `import { limits } from 'sqs-jobs/worker'`,
 * then `features: [limits]`. A job declaring limits without it makes createWorker throw a
 * WorkerConfigError; `ctx.rateLimit` without it throws a permanent `MissingFeatureError`.
 */
export const limits: LimitsFeature = /* @__PURE__ */ brandFeature<LimitsFeature>({
  name: 'limits',
  createLimitStore: (tableName, now) => new LimitStore({ tableName, ...(now ? { now } : {}) }),
  takeSlot,
  releaseSlot,
  waitForLimit,
  takeRateLimit,
  rateLimitConflicts,
  limitStoreProblems,
});
