/**
 * Dead letters as the worker writes them (a body and the 10 evidence attributes, `Attempts` a
 * Number), sent straight to a FIFO DLQ (several messages per group) and a standard DLQ, and a
 * destructive read that shows what a queue holds, in order: for the tests of the report's DLQ
 * read (lib/sample/workload/dead-letters.ts) on each emulator.
 */
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** A dead letter as sent (and as it must be found again). */
export interface SeededDeadLetter {
  readonly body: string;
  /** FIFO only. */
  readonly group: string | undefined;
  /** Attribute name → `DataType:value`. */
  readonly attributes: Readonly<Record<string, string>>;
}

function evidence(n: number, group: string | undefined): Record<string, MessageAttributeValue> {
  const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });
  return {
    JobType: text(group ? 'booking.reserve-inventory' : 'payments.capture'),
    ErrorName: text(n % 2 === 0 ? 'OutOfStockError' : 'BookingNotFoundError'),
    ErrorMessage: text(`dead letter ${n} of ${group ?? 'payments'}: ünïcode ✓`),
    ErrorStack: text(`Error: dead letter ${n}\n    at run (jobs.ts:${n}:1)`),
    ErrorReason: text(n % 2 === 0 ? 'OutOfStockError' : 'BookingNotFoundError'),
    Attempts: { DataType: 'Number', StringValue: String(1 + (n % 3)) },
    FirstFailureAt: text(`2026-01-01T00:00:0${n % 10}.000Z`),
    LastFailureAt: text(`2026-01-01T00:01:0${n % 10}.000Z`),
    HandlerVersion: text('42'),
    SourceMessageId: text(`source-${group ?? 'std'}-${n}`),
  };
}

/** `name → DataType:value` of received attributes. */
export function attributeMap(
  attributes: Readonly<Record<string, MessageAttributeValue>> | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(attributes ?? {}).map(([name, v]) => [name, `${v.DataType}:${v.StringValue ?? ''}`]),
  );
}

/**
 * Sends `perGroup[g]` dead letters of each group `g` to the FIFO DLQ, in order, and `standard`
 * dead letters to the standard DLQ.
 */
export async function seedDeadLetters(
  sqs: SQSClient,
  queues: { readonly fifoUrl: string; readonly standardUrl: string },
  perGroup: Readonly<Record<string, number>>,
  standard: number,
): Promise<{ fifo: SeededDeadLetter[]; standard: SeededDeadLetter[] }> {
  const fifo: SeededDeadLetter[] = [];
  let n = 0;
  // Interleaved over the groups, as dead letters of several users arrive.
  const max = Math.max(...Object.values(perGroup));
  for (let i = 0; i < max; i++) {
    for (const [group, count] of Object.entries(perGroup)) {
      if (i >= count) continue;
      n += 1;
      const body = JSON.stringify({
        specversion: '1.0',
        id: `${group}-${i}`,
        type: 'booking.reserve-inventory',
      });
      const attributes = evidence(n, group);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queues.fifoUrl,
          MessageBody: body,
          MessageGroupId: group,
          MessageDeduplicationId: `${group}-${i}`,
          MessageAttributes: attributes,
        }),
      );
      fifo.push({ body, group, attributes: attributeMap(attributes) });
    }
  }
  const std: SeededDeadLetter[] = [];
  for (let i = 0; i < standard; i++) {
    const body = JSON.stringify({ specversion: '1.0', id: `pay-${i}`, type: 'payments.capture' });
    const attributes = evidence(i, undefined);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queues.standardUrl,
        MessageBody: body,
        MessageAttributes: attributes,
      }),
    );
    std.push({ body, group: undefined, attributes: attributeMap(attributes) });
  }
  return { fifo, standard: std };
}

/** Visible and in-flight counts of a queue. */
export async function queueCounts(
  sqs: SQSClient,
  url: string,
): Promise<{ visible: number; inFlight: number }> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/**
 * Takes every message off a queue (receive, delete), in the order received: on a FIFO queue each
 * group in its order. Ends after three empty receives.
 */
export async function drainQueue(sqs: SQSClient, url: string): Promise<SeededDeadLetter[]> {
  const out: SeededDeadLetter[] = [];
  let empty = 0;
  while (empty < 3) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = received.Messages ?? [];
    empty = messages.length === 0 ? empty + 1 : 0;
    for (const m of messages) {
      out.push({
        body: m.Body ?? '',
        group: m.Attributes?.MessageGroupId,
        attributes: attributeMap(m.MessageAttributes),
      });
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
  }
  return out;
}

/** The messages of each group, in order (FIFO), or all of them sorted by body (standard). */
export function byGroup(messages: readonly SeededDeadLetter[]): Record<string, SeededDeadLetter[]> {
  const groups: Record<string, SeededDeadLetter[]> = {};
  for (const m of messages) groups[m.group ?? ''] = [...(groups[m.group ?? ''] ?? []), m];
  return groups;
}
