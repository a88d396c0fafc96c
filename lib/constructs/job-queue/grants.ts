/**
 * What a worker's role may do on its queues and the idempotency table: exactly the calls the
 * worker makes, each list written once (docs/deploy.md, "Worker permissions", maps every grant
 * to its caller). test/infra/idempotency-actions.test.ts and test/infra/queue-actions.test.ts
 * keep these lists equal to the commands lib/runtime and lib/client send.
 *
 * AWS pages (named in brackets):
 * - services-sqs-configure: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 *   (the execution role of an SQS event source needs ReceiveMessage, DeleteMessage, GetQueueAttributes)
 * - sqs-batch-api-actions: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-batch-api-actions.html
 *   (SendMessage also allows SendMessageBatch; batch actions have no permission of their own)
 * - sqs-key-management: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
 *   (a producer to an SSE-KMS queue needs kms:GenerateDataKey and kms:Decrypt on its key)
 */
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { IDEMPOTENCY_TABLE_ACTIONS, IDEMPOTENCY_UNPARK_ACTIONS } from './defaults.ts';
import type { JobDefinitionLike } from './props.ts';

/**
 * The worker's own queue: what Lambda's event source mapping does with the role
 * (ReceiveMessage, DeleteMessage, GetQueueAttributes) [services-sqs-configure], and the
 * ChangeMessageVisibility the worker sends to delay a retry (lib/runtime/visibility.ts). No
 * GetQueueUrl: the worker gets every URL from its environment.
 */
export const CONSUME_QUEUE_ACTIONS = [
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:ReceiveMessage',
] as const;

/**
 * The DLQ and each enqueue target: SendMessage only, which also covers the SendMessageBatch of
 * the children's JobClient [sqs-batch-api-actions]. Neither GetQueueAttributes nor GetQueueUrl:
 * the worker reads nothing about these queues (their URLs come from `JOBS_DLQ_URL` and
 * `JOBS_QUEUE_URL_<NAME>`).
 */
export const SEND_QUEUE_ACTIONS = ['sqs:SendMessage'] as const;

/** On the KMS key of an SSE-KMS queue the worker sends to (a given DLQ or target) [sqs-key-management]. */
export const SEND_KEY_ACTIONS = ['kms:Decrypt', 'kms:GenerateDataKey'] as const;

/** Grants `role` sending to `queue` (the DLQ or an enqueue target), and its KMS key when it has one. */
export function grantSend(role: iam.IGrantable, queue: sqs.IQueue): void {
  queue.grant(role, ...SEND_QUEUE_ACTIONS);
  queue.encryptionMasterKey?.grant(role, ...SEND_KEY_ACTIONS);
}

/**
 * Whether the worker of a queue may park a FIFO message group, and so send the DeleteItem that
 * unparks it. The runtime parks only on a FIFO queue, and only when its `onDeadLetter` or one of
 * its jobs' is `'park'` (lib/runtime/worker.ts, `parkingJobs`; lib/runtime/group-park.ts). At
 * synth that is known from `onDeadLetter` and `jobs`; without `jobs` the jobs are unknown, so
 * the worker is taken to park.
 */
export function mayParkGroups(options: {
  readonly fifo: boolean;
  readonly onDeadLetter: string | undefined;
  readonly jobs: readonly JobDefinitionLike[] | undefined;
}): boolean {
  if (!options.fifo) return false;
  if (options.onDeadLetter === 'park') return true;
  if (!Array.isArray(options.jobs)) return true;
  return options.jobs.some((job) => job?.onDeadLetter === 'park');
}

/**
 * Whether the worker of a queue may re-send a message to its own queue to wait on a flow-control
 * limit (lib/runtime/record/limit-wait.ts): on a standard queue, when a job declares
 * `concurrency` or `rateLimits`. A FIFO queue waits with a visibility delay instead (no send).
 * Without `jobs` the jobs are unknown, so the worker is taken to wait. The limits' records are
 * items of the idempotency table, covered by its GetItem, PutItem and UpdateItem.
 */
export function mayWaitOnLimits(options: {
  readonly fifo: boolean;
  readonly jobs: readonly JobDefinitionLike[] | undefined;
}): boolean {
  if (options.fifo) return false;
  if (!Array.isArray(options.jobs)) return true;
  return options.jobs.some(
    (job) => job?.concurrency !== undefined || (Array.isArray(job?.rateLimits) && job.rateLimits.length > 0),
  );
}

/**
 * Grants `role` the idempotency table's item commands the worker sends: all of
 * {@link IDEMPOTENCY_TABLE_ACTIONS}, without DeleteItem when the worker cannot park a group.
 */
export function grantIdempotency(role: iam.IGrantable, table: dynamodb.ITable, parks: boolean): void {
  const unpark: readonly string[] = IDEMPOTENCY_UNPARK_ACTIONS;
  const actions = parks
    ? IDEMPOTENCY_TABLE_ACTIONS
    : IDEMPOTENCY_TABLE_ACTIONS.filter((a) => !unpark.includes(a));
  table.grant(role, ...actions);
}
