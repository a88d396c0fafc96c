/**
 * The `children` feature of `sqs-jobs/worker`: `ctx.enqueue` (children collected during a run and
 * sent after it through JobClient's send path) and the sends of `ctx.startBatch`. Without it both
 * throw a permanent {@link MissingFeatureError} naming this import.
 */
import { ChainTraceHeaders } from '../chain-trace.ts';
import { createJobClientChildSender } from '../child-sender.ts';
import { ChildCollector, childRecordKeys, sendChildren } from '../children.ts';
import { brandFeature, type ChildrenFeature } from './feature.ts';

/**
 * Children: `ctx.enqueue` and the sends of `ctx.startBatch`, through JobClient's send path.
 * `import { children } from 'sqs-jobs/worker'`, then `createWorker({ jobs, features: [children] })`.
 * Without it `ctx.enqueue` throws a permanent `MissingFeatureError`, and the run fails even if the job
 * catches it.
 */
export const children: ChildrenFeature = /* @__PURE__ */ brandFeature<ChildrenFeature>({
  name: 'children',
  createChildSender: createJobClientChildSender,
  collectChildren: (parent) => new ChildCollector(parent),
  sendChildren,
  childRecordKeys,
  chainTraceHeaders: (invocationHeader, records) => new ChainTraceHeaders(invocationHeader, records),
});
