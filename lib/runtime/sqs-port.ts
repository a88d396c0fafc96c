/**
 * The part of the SQS client the worker uses. An `SQSClient` from `@aws-sdk/client-sqs`
 * satisfies it; tests pass a small fake that records the commands.
 */
import type {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';

/** Commands the worker (and the child-job client it drives) sends. */
export type WorkerSqsCommand = SendMessageCommand | SendMessageBatchCommand | ChangeMessageVisibilityCommand;

/** Minimal SQS client: `send(command)` resolving to the command's output. */
export interface SqsSender {
  send(command: WorkerSqsCommand): Promise<unknown>;
}
