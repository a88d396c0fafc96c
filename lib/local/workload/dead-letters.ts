/** Reading the dead-letter queues at the end of a run: the evidence of every dead-lettered job. */
import {
  DeleteMessageBatchCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** A message read from a DLQ, reduced to what the report needs. */
export interface CollectedDeadLetter {
  /** Logical name of the source queue. */
  readonly queue: string;
  readonly messageId: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
}

function attributeValues(
  attributes: Record<string, MessageAttributeValue> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value.StringValue !== undefined) out[name] = value.StringValue;
  }
  return out;
}

/**
 * Reads every message of the DLQs, for the report at the end of a run.
 *
 * A standard DLQ is read without deleting anything (a long visibility timeout keeps a message
 * from being read twice). A FIFO DLQ returns nothing more of a message group while one of its
 * messages is in flight ("FIFO queue logic", SQS developer guide), so the only way to read it to
 * the end is to take each message off after reading it: `takeFifo` (default true) does that;
 * the run is over and the report keeps the evidence. Stops at `expected` messages per queue
 * when given, or after three empty receives.
 */
export async function collectDeadLetters(
  sqs: SQSClient,
  dlqUrls: Readonly<Record<string, string>>,
  expected: Readonly<Record<string, number>> = {},
  takeFifo = true,
): Promise<CollectedDeadLetter[]> {
  const collected: CollectedDeadLetter[] = [];
  for (const [queue, url] of Object.entries(dlqUrls)) {
    const take = takeFifo && url.endsWith('.fifo');
    const seen = new Set<string>();
    let empty = 0;
    while (empty < 3 && (expected[queue] === undefined || seen.size < (expected[queue] ?? 0))) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 300,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const messages = out.Messages ?? [];
      if (messages.length === 0) empty += 1;
      for (const m of messages) {
        if (!m.MessageId || seen.has(m.MessageId)) continue;
        seen.add(m.MessageId);
        collected.push({
          queue,
          messageId: m.MessageId,
          body: m.Body ?? '',
          attributes: attributeValues(m.MessageAttributes),
        });
      }
      if (take) {
        const handles = messages.flatMap((m, i) =>
          m.ReceiptHandle ? [{ Id: String(i), ReceiptHandle: m.ReceiptHandle }] : [],
        );
        if (handles.length > 0)
          await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: handles }));
      }
    }
  }
  return collected;
}
