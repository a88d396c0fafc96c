/**
 * Typed builders of a batch's entries, for children made outside the `startBatch` call (in a
 * helper, a loop, a variable typed `BatchChildEntry[]`, where the job's data type would be lost):
 * the data is checked against the job's type at compile time, as `batchEntry` does for
 * `sendBatch`. Types only at run time: the entries are plain objects, checked when the batch starts.
 */
import type { BatchChildEntry, BatchCompletionEntry } from './batch-start.ts';
import type { SendableJob } from './prepare.ts';

/**
 * A batch child with its data checked against its job's type. Use it in a `.map` callback when the
 * job's data has an enum or literal field: there `{ job, data: { tier: 'gold' } }` does not
 * compile (TypeScript widens `'gold'` to `string` in the callback's object literal), while
 * `batchChild(job, { tier: 'gold' })` types the data as the job's.
 * @param options `partitionKey` (FIFO queues: required unless the starter has one), `delaySeconds`
 *   (standard queues); nothing else (an unknown key is refused when the batch starts).
 * @example
 * ```ts
 * import { batchChild, defineJob, type JobContext } from 'sqs-jobs';
 * import { z } from 'zod';
 *
 * const issueInvoice = defineJob({
 *   type: 'billing.issue-invoice',
 *   queue: 'billing',
 *   schema: z.object({ userId: z.string(), tier: z.enum(['gold', 'basic']) }),
 *   async run() {},
 * });
 * const children = (userIds: string[]) =>
 *   userIds.map((userId) => batchChild(issueInvoice, { userId, tier: 'gold' }));
 * declare const ctx: JobContext;
 * ctx.startBatch({
 *   children: children(['u-1']),
 *   completion: { job: issueInvoice, data: { userId: 'all', tier: 'basic' } },
 * });
 * // batchChild(issueInvoice, { user: 'u-1', tier: 'gold' }) does not compile: the job's data is
 * // { userId: string; tier: 'gold' | 'basic' }; nor does .map((userId) => ({ job: issueInvoice,
 * // data: { userId, tier: 'gold' } })): tier widened to string
 * ```
 */
export function batchChild<Data>(
  job: SendableJob<Data>,
  data: NoInfer<Data>,
  options?: BatchChildEntry<Data>['options'],
): BatchChildEntry<Data> {
  return options === undefined ? { job, data } : { job, data, options };
}

/** A batch's completion job with its data checked against its job's type (see {@link batchChild}). */
export function batchCompletion<Data>(
  job: SendableJob<Data>,
  data: NoInfer<Data>,
  options?: BatchCompletionEntry<Data>['options'],
): BatchCompletionEntry<Data> {
  return options === undefined ? { job, data } : { job, data, options };
}
