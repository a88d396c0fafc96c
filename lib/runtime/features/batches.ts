/**
 * The `batches` feature of `sqs-jobs/worker` (lib/runtime/batches/): a batch child counted once
 * in its batch, the completion job sent when the last one ends, `ctx.batch`, the watchdog, and
 * `ctx.startBatch` (which also needs `children`, whose sender starts the batch). Without it a batch
 * child, completion or watchdog message is dead-lettered at once with a MissingFeatureError (never
 * run uncounted); redriven after a redeploy with the feature, it counts.
 */
import { batchKey } from '../../core/batch.ts';
import { BatchNotFoundError, batchContextOf } from '../batches/context.ts';
import { completeBatchCompletion, sendCompletionOrHandOff } from '../batches/count.ts';
import {
  afterDuplicateDelivery,
  completeChildRun,
  countBeforeSend,
  countInBatch,
} from '../batches/dead-letters.ts';
import { requestBatch, startRequestedBatches } from '../batches/start.ts';
import { watchBatch } from '../batches/watchdog.ts';
import { createDynamoIdempotencyStore, DynamoIdempotencyStore } from '../idempotency/store.ts';
import { type BatchesFeature, brandFeature } from './feature.ts';

/**
 * Batches: `ctx.startBatch`, each child counted once, the completion job, `ctx.batch`, the
 * watchdog (docs/architecture.md "Batches"). Needs `children`: `import { batches, children } from
 * 'sqs-jobs/worker'`, then `features: [children, batches]` (without `children`, createWorker throws
 * a WorkerConfigError). Without it a batch child, completion or watchdog message is dead-lettered
 * on its first delivery as `MissingFeature`.
 */
export const batches: BatchesFeature = /* @__PURE__ */ brandFeature<BatchesFeature>({
  name: 'batches',
  createStore: createDynamoIdempotencyStore,
  // Batches are counted in the DynamoDB store's table (its transactions): a guard without it has none.
  ledgerOf: (guard) => (guard instanceof DynamoIdempotencyStore ? guard.batchLedger() : undefined),
  readBatch: async (ledger, batchId) => {
    const record = await ledger.read(batchId);
    if (record === undefined) throw new BatchNotFoundError(batchId, ledger.tableName);
    return batchContextOf(record, ledger);
  },
  watchBatch,
  requestBatch,
  startRequestedBatches,
  batchRecordKey: batchKey,
  completeChildRun,
  completeBatchCompletion,
  sendCompletionOrHandOff,
  countBeforeSend,
  countInBatch,
  afterDuplicateDelivery,
});
