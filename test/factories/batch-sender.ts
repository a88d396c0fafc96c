/**
 * A typed stand-in for the SQSClient a `JobClient` is given (`SqsBatchSender`): it records each
 * SendMessageBatch request and answers from a handler, by default accepting every entry as SQS
 * does (a message id; a sequence number on FIFO entries only, those with a deduplication id).
 * For the JobClient unit tests; the worker's tests use fake-sqs.ts.
 */
import type {
  SendMessageBatchCommand,
  SendMessageBatchRequest,
  SendMessageBatchRequestEntry,
  SendMessageBatchResult,
} from '@aws-sdk/client-sqs';
import type { SqsBatchSender } from '../../lib/client/job-client.ts';

/** Answers one request; `call` counts the requests from 1. */
export type BatchHandler = (input: SendMessageBatchRequest, call: number) => SendMessageBatchResult;

/** SQS's answer for an entry it took: `MessageId` `msg-<entry id>-<body length>`, `SequenceNumber` `seq-<entry id>` (FIFO). */
export function accepted(
  entry: SendMessageBatchRequestEntry,
): NonNullable<SendMessageBatchResult['Successful']>[number] {
  return {
    Id: entry.Id,
    MessageId: `msg-${entry.Id}-${entry.MessageBody?.length}`,
    MD5OfMessageBody: 'md5',
    // As SQS: a sequence number on FIFO queues only (a fair standard queue's group gets none).
    ...(entry.MessageDeduplicationId === undefined ? {} : { SequenceNumber: `seq-${entry.Id}` }),
  };
}

export const acceptAll: BatchHandler = (input) => ({
  Successful: (input.Entries ?? []).map(accepted),
  Failed: [],
});

/** Refuses every entry with error `code` (`senderFault`: the request's fault, not SQS's). */
export const refuseAll =
  (code: string, senderFault: boolean): BatchHandler =>
  (input) => ({
    Successful: [],
    Failed: (input.Entries ?? []).map((e) => ({
      Id: e.Id,
      Code: code,
      Message: 'refused',
      SenderFault: senderFault,
    })),
  });

export class RecordingBatchSender implements SqsBatchSender {
  readonly requests: SendMessageBatchRequest[] = [];
  constructor(private readonly handler: BatchHandler = acceptAll) {}

  async send(command: SendMessageBatchCommand): Promise<SendMessageBatchResult> {
    this.requests.push(command.input);
    return this.handler(command.input, this.requests.length);
  }

  /** Entry ids per request, e.g. [['0','1'], ['1']]. */
  get idsPerRequest(): string[][] {
    return this.requests.map((r) => (r.Entries ?? []).map((e) => e.Id ?? ''));
  }
}
