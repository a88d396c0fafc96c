/** Where a workload runs: the sample queues, their DLQs and the domain table of a running local stack. */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LocalRuntime } from '../../local/runtime.ts';
import { SAMPLE_QUEUES } from '../topology.ts';

/** Where the workload runs: queue URLs, the domain table and clients pointed at the emulators. */
export interface WorkloadTarget {
  /** Logical queue name → URL (`booking`, `payments`, `notifications`). */
  readonly queueUrls: Readonly<Record<string, string>>;
  /** Logical queue name → URL of its dead-letter queue. */
  readonly dlqUrls: Readonly<Record<string, string>>;
  /** Name of the sample app's domain table (`APP_TABLE`). */
  readonly appTableName: string;
  /** The harness's client: exempt from injected AWS faults (queue depths, dead letters). */
  readonly sqs: SQSClient;
  /**
   * The producer's client: on the endpoints the functions use, so it meets the injected AWS
   * faults when the runtime has a fault proxy (else the same as `sqs`).
   */
  readonly producerSqs: SQSClient;
  readonly dynamo: DynamoDBDocumentClient;
  /** The harness's DynamoDB client (exempt from injected faults), for plain-API reads. */
  readonly dynamodb: DynamoDBClient;
  /** Names of the idempotency tables the workers use (`JOBS_IDEMPOTENCY_TABLE`). */
  readonly idempotencyTables: readonly string[];
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
  const faulty = runtime.awsFaultStats() !== undefined;
  return {
    queueUrls,
    dlqUrls,
    appTableName,
    sqs: runtime.sqs,
    producerSqs: faulty
      ? new SQSClient({
          endpoint: runtime.endpoints.sqs,
          region: runtime.region,
          credentials: runtime.credentials,
          maxAttempts: 3,
        })
      : runtime.sqs,
    idempotencyTables: [
      ...new Set(
        runtime.workers.flatMap((w) => (w.env.JOBS_IDEMPOTENCY_TABLE ? [w.env.JOBS_IDEMPOTENCY_TABLE] : [])),
      ),
    ],
    dynamodb: runtime.dynamodb,
    dynamo: DynamoDBDocumentClient.from(runtime.dynamodb, {
      marshallOptions: { removeUndefinedValues: true },
    }),
  };
}
