/**
 * Every feature of the worker: what `createWorker` of `sqs-jobs` runs with (the same worker as
 * `sqs-jobs/worker`'s, given all of them).
 */
import { batches } from './batches.ts';
import { children } from './children.ts';
import type { WorkerFeature } from './feature.ts';
import { groupParking } from './group-parking.ts';
import { limits } from './limits.ts';
import { rawMessages } from './raw-messages.ts';
import { scheduledJobs } from './scheduled-jobs.ts';

export const ALL_FEATURES: readonly WorkerFeature[] = [
  children,
  batches,
  limits,
  groupParking,
  scheduledJobs,
  rawMessages,
];
