/** Where a workload runs: the sample queues, their DLQs and the domain table of a running local stack. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SAMPLE_QUEUES } from '../../sample/topology.ts';
import type { LocalRuntime } from '../runtime.ts';

/** Where the workload runs: queue URLs, the domain table and clients pointed at the emulators. */
export interface WorkloadTarget {
  /** Logical queue name → URL (`booking`, `payments`, `notifications`). */
  readonly queueUrls: Readonly<Record<string, string>>;
  /** Logical queue name → URL of its dead-letter queue. */
  readonly dlqUrls: Readonly<Record<string, string>>;
  /** Name of the sample app's domain table (`APP_TABLE`). */
  readonly appTableName: string;
  readonly sqs: SQSClient;
  readonly dynamo: DynamoDBDocumentClient;
}

/** The workload's view of a running local stack: the sample queues by logical name, their DLQs, the domain table. */
export function targetOf(runtime: LocalRuntime): WorkloadTarget {
  const queueUrls: Record<string, string> = {};
  const dlqUrls: Record<string, string> = {};
  for (const { name } of SAMPLE_QUEUES) {
    const queue = runtime.queue(name);
    queueUrls[name] = queue.url;
    if (queue.deadLetterQueue) dlqUrls[name] = queue.deadLetterQueue.url;
  }
  const appTableName =
    runtime.outputs.AppTableName ?? runtime.workers.find((w) => w.env.APP_TABLE)?.env.APP_TABLE ?? '';
  if (!appTableName) throw new Error('the stack has no AppTableName output and no worker has APP_TABLE');
  return {
    queueUrls,
    dlqUrls,
    appTableName,
    sqs: runtime.sqs,
    dynamo: DynamoDBDocumentClient.from(runtime.dynamodb, {
      marshallOptions: { removeUndefinedValues: true },
    }),
  };
}
