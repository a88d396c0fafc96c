/**
 * The stack's queues and workers as the running runtime shows them: each queue linked to the DLQ
 * its RedrivePolicy names, and one worker per emulated event source mapping, with the function
 * it invokes, its batching, its concurrency (pollers) and whether it is polled at all.
 */
import { SCHEDULE_DLQ_TAG } from '../../core/scheduled-job.ts';
import type { FunctionDefinition } from '../function-config.ts';
import type { ProvisionedQueue } from '../provision/queues.ts';
import type { ProvisionedStack } from '../provision/stack.ts';
import type { LocalQueue, LocalWorker } from './api.ts';
import { jobQueueNameOf, type MappedFunctions } from './functions.ts';

/** The queues with their DLQ (when it is a queue of the stack) and whether they are one. */
export function linkDeadLetterQueues(provisioned: readonly ProvisionedQueue[]): LocalQueue[] {
  const byArn = new Map(provisioned.map((q) => [q.arn, q]));
  const dlqArns = new Set(provisioned.map((q) => q.redrive?.deadLetterTargetArn).filter(Boolean));
  return provisioned.map((q) => {
    const dlq = q.redrive ? byArn.get(q.redrive.deadLetterTargetArn) : undefined;
    return {
      ...q,
      deadLetterQueue:
        dlq && q.redrive
          ? {
              logicalId: dlq.logicalId,
              name: dlq.name,
              url: dlq.url,
              arn: dlq.arn,
              maxReceiveCount: q.redrive.maxReceiveCount,
            }
          : undefined,
      // A schedule DLQ is named by Scheduler's DeadLetterConfig, not a RedrivePolicy: its tag says so.
      isDeadLetterQueue: dlqArns.has(q.arn) || q.tags?.[SCHEDULE_DLQ_TAG] !== undefined,
    };
  });
}

/** Inputs of {@link planWorkers}. */
export interface WorkerPlanInput {
  readonly provisioned: ProvisionedStack;
  readonly queues: readonly LocalQueue[];
  readonly functions: MappedFunctions;
  /** Each function's complete environment, by logical id. */
  readonly environments: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Pollers of a mapping without `MaximumConcurrency`. */
  readonly defaultConcurrency: number;
  /** Appended to: a mapping not polled because its function has reserved concurrency 0. */
  readonly warnings: string[];
}

/**
 * One worker per event source mapping: concurrency is the mapping's `MaximumConcurrency` (else
 * the default), and a mapping is enabled when `Enabled` and its function's reserved concurrency
 * is not 0.
 */
export function planWorkers(input: WorkerPlanInput): LocalWorker[] {
  const workers: LocalWorker[] = [];
  for (const m of input.provisioned.eventSourceMappings) {
    const fn = input.functions.byId(m.functionLogicalId) as FunctionDefinition;
    const queue = input.queues.find((q) => q.logicalId === m.queueLogicalId) as LocalQueue;
    const fnEnv = input.environments.get(fn.logicalId) as Record<string, string>;
    const concurrency = Math.max(1, m.maximumConcurrency ?? input.defaultConcurrency);
    const enabled = m.enabled && fn.reservedConcurrency !== 0;
    if (m.enabled && !enabled)
      input.warnings.push(`mapping ${m.logicalId} is not polled: ${fn.logicalId} has reserved concurrency 0`);
    workers.push({
      mappingLogicalId: m.logicalId,
      functionLogicalId: fn.logicalId,
      functionName: fn.name,
      jobQueueName: jobQueueNameOf(fn),
      queueLogicalId: queue.logicalId,
      queueUrl: queue.url,
      queueArn: queue.arn,
      env: fnEnv,
      handler: fn.handler,
      assetDir: fn.assetDir,
      timeoutSeconds: fn.timeoutSeconds,
      memorySizeMb: fn.memorySizeMb,
      batchSize: m.batchSize,
      maximumBatchingWindowSeconds: m.maximumBatchingWindowSeconds,
      concurrency,
      reportBatchItemFailures: m.reportBatchItemFailures,
      enabled,
    });
  }
  return workers;
}
