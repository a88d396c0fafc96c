/**
 * The default sender of child jobs: a `JobSender` (lib/client/job-sender.ts: `JobClient`'s checks,
 * batching and retries for jobs that go now) on the queue URLs of the worker's environment
 * (`JOBS_QUEUE_URL_<NAME>`, docs/contracts.md). Not the `JobClient` itself: a child is never sent
 * for later, and in a worker bundled into one file the client's scheduled paths (the Scheduler
 * client among them) would be in every bundle and loaded at every cold start (issue 21).
 *
 * The sender's modules are imported statically: a worker is bundled into one file without
 * splitting, where a dynamic `import()` saves nothing (the module is inlined anyway) and costs
 * bytes: esbuild wraps every module it reaches in a lazy initializer and keeps all of its exports
 * (2 KB of a minimal worker, issue 21). What is worth deferring is deferred inside: the SQS client
 * module (job-sender.ts, at the first send) and the sender itself (its options checked at the
 * first send, below).
 */

import { delayedWatchdogScheduler, startBatchWith } from '../client/batch-start.ts';
import { batchTable } from '../client/batch-table.ts';
import { JobClientError } from '../client/job-client-error.ts';
import { JobSender } from '../client/job-sender.ts';
import { queueUrlEnvName, queueUrlsFromEnv, UNKNOWN_QUEUE_ADVICE } from '../core/queue-urls.ts';
import type { ChildSender } from './children.ts';
import type { SqsSender } from './sqs-port.ts';
import type { WorkerLogger } from './telemetry.ts';
import { ChildRejectedError } from './worker-errors.ts';

/** Input of {@link createJobClientChildSender}. */
export interface ChildSenderOptions {
  /** Envelope `source` of the children. */
  readonly source: string;
  /** Logical queue name → URL; when undefined, read from `env` (`queueUrlsFromEnv`). */
  readonly queueUrls: Readonly<Record<string, string>> | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly sqs: SqsSender;
  readonly logger: WorkerLogger;
}

/**
 * Builds the default child sender. A child refused before anything is sent (unknown queue, data
 * failing the child's schema, FIFO child without partition key: `JobClientError` with
 * `senderFault`) becomes a {@link ChildRejectedError}, which dead-letters the parent: running it
 * again would build the same children. Entries SQS did not take come back in `failed` and are
 * handled by the caller as transient.
 *
 * A client whose options are invalid (e.g. a malformed queue URL) fails every send with a
 * {@link ChildRejectedError}.
 */
export function createJobClientChildSender(options: ChildSenderOptions): ChildSender {
  // Built at the first send: most workers' batches send no child, and options it refuses
  // (a malformed queue URL) fail the send that needs them, not the worker.
  let client: JobSender | undefined;
  const jobClient = (): JobSender => {
    client ??= new JobSender({
      source: options.source,
      queueUrls: options.queueUrls ?? queueUrlsFromEnv(options.env),
      sqs: options.sqs,
      logger: options.logger,
    });
    return client;
  };
  return {
    // With it the parent's record links its children (childRecordKeys).
    source: options.source,
    async sendBatch(entries) {
      try {
        return await jobClient().sendBatch(entries);
      } catch (error) {
        throw rejected(error, options.env.JOBS_QUEUE_NAME);
      }
    },
    async sendEnvelope(queue, body) {
      try {
        return await jobClient().sendEnvelope(queue, body);
      } catch (error) {
        throw rejected(error, options.env.JOBS_QUEUE_NAME);
      }
    },
    async startBatch(spec, starter, tableName) {
      try {
        const sender = jobClient();
        return await startBatchWith(
          spec,
          starter,
          sender,
          batchTable({ tableName }),
          delayedWatchdogScheduler(sender, Date.now),
        );
      } catch (error) {
        throw rejected(error, options.env.JOBS_QUEUE_NAME);
      }
    },
  };
}

function rejected(error: unknown, ownQueue: string | undefined): unknown {
  if (error instanceof JobClientError && error.senderFault) {
    return new ChildRejectedError(
      `child jobs refused before sending: ${workerAdvice(error.message, ownQueue)}`,
      {
        cause: error,
      },
    );
  }
  return error;
}

/**
 * The client's advice for an unknown queue is a producer's (queueUrls, an environment variable);
 * a worker's queue URLs come from its JobQueue, so the fix is there: the CDK call that sets
 * `JOBS_QUEUE_URL_<NAME>` and grants SendMessage (lib/constructs/job-queue.ts). A worker sends to
 * its own queue (`ownQueue`, JOBS_QUEUE_NAME) only once that queue is its own enqueue target.
 */
function workerAdvice(message: string, ownQueue: string | undefined): string {
  return message.replace(
    new RegExp(
      `unknown queue "([^"]*)" \\(known queues: ([^)]*)\\); ${escapeRegExp(UNKNOWN_QUEUE_ADVICE)}`,
      'g',
    ),
    (_all, queue: string, known: string) => {
      const fix =
        queue === ownQueue
          ? `it is this worker's own queue, which a worker sends to only as its own enqueue target: jobQueue.addEnqueueTarget('${queue}', jobQueue.queue) on its JobQueue in your CDK app`
          : `make it an enqueue target of this worker's JobQueue in your CDK app: jobQueue.addEnqueueTarget('${queue}', <the JobQueue of '${queue}'>.queue) or the enqueueTargets prop`;
      return `unknown queue "${queue}" (this worker can send to: ${known}); ${fix}, which sets ${queueUrlEnvName(queue)} and grants SendMessage`;
    },
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
