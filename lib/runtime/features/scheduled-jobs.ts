/**
 * The `scheduledJobs` feature of `sqs-jobs/worker`: the worker side of jobs sent for later
 * (`jobClient.send(job, data, { runAt })`, docs/schedules.md): an early message waits, a cancelled
 * or rescheduled one is not run (lib/runtime/record/scheduled.ts). Without it such a message is
 * dead-lettered at once with a MissingFeatureError, never run unchecked (it may have been cancelled).
 */
import { createDynamoIdempotencyStore } from '../idempotency/store.ts';
import { checkScheduled } from '../record/scheduled.ts';
import { brandFeature, type ScheduledJobsFeature } from './feature.ts';

/**
 * Jobs sent for later (`runAt`): an early delivery waits, a cancelled or rescheduled one is not run.
 * `import { scheduledJobs } from 'sqs-jobs/worker'`, then `features: [scheduledJobs]`. Without it a
 * job sent for later is dead-lettered on its first delivery as `MissingFeature`, never run unchecked.
 */
export const scheduledJobs: ScheduledJobsFeature = /* @__PURE__ */ brandFeature<ScheduledJobsFeature>({
  name: 'scheduledJobs',
  createStore: createDynamoIdempotencyStore,
  checkScheduled,
});
