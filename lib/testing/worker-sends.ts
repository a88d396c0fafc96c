/**
 * What the worker sends after a run succeeded (`ctx.enqueue`'s children, `ctx.startBatch`'s
 * batches), done by `runJob` with the worker's own code (sendChildren, startRequestedBatches, the
 * default child sender's `JobSender` and `startBatchWith`) into a `MemorySqs` that is thrown away
 * and a batch table that holds nothing: so what the worker refuses at that point (a child's data
 * failing its schema, a FIFO child or completion job without a partition key, a queue it has no
 * URL for, a batch's bad options) fails the test run the same way, a permanent
 * `ChildRejectedError`.
 *
 * The queues: the test's `queueUrls` (the worker's own, for the exact checks), else one made per
 * queue named (`queueUrl(name)`), FIFO (`.fifo`) when a job on it says `ordered: true`: the kit
 * cannot know more of a queue from its jobs.
 */
import { type BatchSpec, type BatchTablePort, startBatchWith } from '../client/batch-start.ts';
import { JobSender } from '../client/job-sender.ts';
import type { SendableJob } from '../client/prepare.ts';
import type { JobLogger } from '../core/logger.ts';
import { type BatchRequest, startRequestedBatches } from '../runtime/batches/start.ts';
import { createJobClientChildSender } from '../runtime/child-sender.ts';
import { type ChildEntry, type ChildSender, type ParentIdentity, sendChildren } from '../runtime/children.ts';
import { MemorySqs } from './memory-sqs.ts';
import { queueUrl } from './sqs-events.ts';

const quiet: JobLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** A table where every batch is new: the kit starts each batch once. */
const noTable: BatchTablePort = { tableName: 'test-kit', putIfAbsent: async () => undefined };

/**
 * Sends `children` and starts `batches` as the worker would after the run, into nowhere.
 * @throws {ChildRejectedError} what the worker would dead-letter the job with.
 */
export async function workerSends(
  parent: ParentIdentity,
  children: readonly ChildEntry[],
  batches: readonly BatchRequest[],
  queueUrls: Readonly<Record<string, string>> | undefined,
): Promise<void> {
  if (children.length === 0 && batches.length === 0) return;
  const urls = queueUrls ?? urlsOf(children, batches);
  const options = { source: parent.source, queueUrls: urls, sqs: new MemorySqs(), logger: quiet };
  const sender: ChildSender = {
    ...createJobClientChildSender({ ...options, env: {} }),
    // The default sender's start, on a table that holds nothing and with no watchdog to send.
    startBatch: (spec, starter) =>
      startBatchWith(spec, starter, new JobSender(options), noTable, async () => {}),
  };
  await sendChildren(sender, children);
  await startRequestedBatches(sender, batches, parent, noTable.tableName, Date.now());
}

/** A test queue URL for every queue the sends name; FIFO when a job on it is `ordered`. */
function urlsOf(children: readonly ChildEntry[], batches: readonly BatchRequest[]): Record<string, string> {
  const jobs: unknown[] = children.map((child) => child.job);
  for (const { spec } of batches) {
    const s = spec as Partial<BatchSpec> | undefined;
    if (Array.isArray(s?.children)) jobs.push(...s.children.map((child) => child?.job));
    jobs.push(s?.completion?.job);
  }
  const fifo = new Map<string, boolean>();
  for (const job of jobs) {
    const j = job as (Partial<SendableJob> & { ordered?: unknown }) | undefined;
    if (typeof j?.queue !== 'string') continue;
    fifo.set(j.queue, (fifo.get(j.queue) ?? false) || j.ordered === true);
  }
  return Object.fromEntries(
    [...fifo].map(([name, isFifo]) => [name, queueUrl(isFifo ? `${name}.fifo` : name)]),
  );
}
