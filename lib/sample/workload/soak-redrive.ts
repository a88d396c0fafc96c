/**
 * The soak's operator step (`--batches N`, ./soak-batches.ts): once the queues drained, the soak
 * batch completion jobs that an injected API 400 dead-lettered (a permanent error: their batch
 * stays open) are redriven, as an operator would after fixing the cause, through the product's own
 * filtered redrive (lib/ops/redrive, the code of `sqs-jobs dlq redrive`): moved body unchanged to
 * their queue and deleted from the DLQ only once sent. Only messages whose cause the fake mail API
 * confirms it injected are selected ({@link refusedSoakCompletionKey}); every other dead letter is
 * made visible again where it was. The run then waits for the queues to drain again (run.ts).
 */
import { type RedriveResult, redriveDeadLetters } from '../../ops/redrive/index.ts';
import type { FaultKind } from '../external-service.ts';
import { soakBatchJobs } from '../soak-batches.ts';
import { anySoakCompletionRefused, refusedSoakCompletionKey } from './soak-batches.ts';
import type { WorkloadTarget } from './target.ts';

/** What one redrive round of {@link redriveRefusedSoakCompletions} did. */
export interface SoakRedriveRound {
  /** Batch keys of the completion jobs sent back to their queue, in DLQ order. */
  readonly moved: readonly string[];
  /** Selected but not sent (still in the DLQ), or sent but not deleted (in both queues): one line each. */
  readonly problems: readonly string[];
}

/**
 * Redrives, from the DLQ of the completion jobs' queue to that queue, every soak completion job an
 * injected API 400 dead-lettered. Reads no DLQ when the fake mail API injected no 400 into a soak
 * summary email (nothing can be there to redrive).
 * @throws {OpsError} when the queues cannot be described or a receive fails (lib/ops/redrive).
 */
export async function redriveRefusedSoakCompletions(
  target: Pick<WorkloadTarget, 'sqs' | 'queueUrls' | 'dlqUrls'>,
  faultsByReference: Readonly<Record<string, readonly FaultKind[]>>,
): Promise<SoakRedriveRound> {
  if (!anySoakCompletionRefused(faultsByReference)) return { moved: [], problems: [] };
  const queue = soakBatchJobs.summary.queue;
  const dlqUrl = target.dlqUrls[queue];
  const targetUrl = target.queueUrls[queue];
  if (dlqUrl === undefined || targetUrl === undefined)
    return { moved: [], problems: [`queue ${queue} has no DLQ in the target: nothing redriven`] };
  // The batch key of each selected message, by DLQ message id (a moved item carries no body).
  const keys = new Map<string, string>();
  const result: RedriveResult = await redriveDeadLetters({
    sqs: target.sqs,
    dlqUrl,
    targetUrl,
    filter: { jobTypes: [soakBatchJobs.summary.type], reasons: ['HTTP 400'] },
    select: (message) => {
      const key = refusedSoakCompletionKey(message, faultsByReference);
      if (key !== undefined) keys.set(message.messageId, key);
      return key !== undefined;
    },
  });
  return {
    moved: result.moved.map((item) => keys.get(item.messageId) ?? item.messageId),
    problems: [
      ...result.failed.map((item) => `not sent, still in the DLQ: ${item.jobId ?? item.messageId}`),
      ...result.notDeleted.map(
        (item) => `sent but not deleted from the DLQ (in both queues): ${item.jobId ?? item.messageId}`,
      ),
      ...result.release.failed.map((f) => `not made visible again: ${f.messageId} (${f.code})`),
    ],
  };
}
