/**
 * The `groupParking` feature of `sqs-jobs/worker`: FIFO message groups parked after a dead letter
 * (`onDeadLetter: 'park'`, lib/runtime/group-park.ts), their check before a run and their unpark
 * after the blocking job completes. A worker or job that parks without this feature is refused by
 * `createWorker` (WorkerConfigError naming the import).
 */
import { groupParkingProblems } from '../config.ts';
import { BatchParking, jobIdentityPks, parkingGroupOf, parkingGuardProblems } from '../group-park.ts';
import { createDynamoIdempotencyStore } from '../idempotency/store.ts';
import {
  checkParkedGroup,
  parkOnDeadLetter,
  unparkAfterCompletion,
  unparkUnderContinue,
} from '../record/parked-group.ts';
import { brandFeature, type GroupParkingFeature } from './feature.ts';

/**
 * Group parking: FIFO `onDeadLetter: 'park'` (a group's later messages wait behind its dead letter).
 * `import { groupParking } from 'sqs-jobs/worker'`, then `features: [groupParking]`. A job or worker
 * with `onDeadLetter: 'park'` without it makes createWorker throw a WorkerConfigError.
 */
export const groupParking: GroupParkingFeature = /* @__PURE__ */ brandFeature<GroupParkingFeature>({
  name: 'groupParking',
  createStore: createDynamoIdempotencyStore,
  parkingFor: (store, queueName, defaultPolicy) => new BatchParking(store, queueName, defaultPolicy),
  parkingGroupOf,
  jobIdentityPks,
  parkingProblems: parkingGuardProblems,
  queueProblems: groupParkingProblems,
  checkParkedGroup,
  unparkAfterCompletion,
  parkOnDeadLetter,
  unparkUnderContinue,
});
