/**
 * The two pure halves of an SQS event source mapping: turning received SQS messages into the
 * `SQSEvent` records Lambda delivers, and reading the function's response the way Lambda does.
 *
 * Record shape: Lambda Developer Guide, "Using Lambda with Amazon SQS" (example event) —
 * `messageId`, `receiptHandle`, `body`, `attributes` (system attributes as strings),
 * `messageAttributes` as `{ stringValue, binaryValue (base64), stringListValues,
 * binaryListValues, dataType }`, `md5OfBody`, `md5OfMessageAttributes` (when attributes exist),
 * `eventSource: 'aws:sqs'`, `eventSourceARN`, `awsRegion`.
 *
 * Response rules: "Handling errors for an SQS event source in Lambda"
 * (services-sqs-errorhandling), see {@link interpretBatchResponse}.
 */
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSMessageAttribute, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

function base64(value: Uint8Array | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : Buffer.from(value).toString('base64');
}

function toLambdaAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  const attribute: Record<string, unknown> = {};
  if (value.StringValue !== undefined) attribute.stringValue = value.StringValue;
  const binary = base64(value.BinaryValue);
  if (binary !== undefined) attribute.binaryValue = binary;
  attribute.stringListValues = value.StringListValues ?? [];
  attribute.binaryListValues = (value.BinaryListValues ?? []).map((b) => base64(b) as string);
  attribute.dataType = value.DataType ?? 'String';
  return attribute as unknown as SQSMessageAttribute;
}

/**
 * One SQS message as a Lambda `SQSRecord`.
 * @param message a message received with `MessageSystemAttributeNames: ['All']` and
 *   `MessageAttributeNames: ['All']`.
 * @param queueArn ARN of the source queue (`eventSourceARN`).
 * @param region `awsRegion`.
 */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const system = message.Attributes ?? {};
  const attributes: Record<string, string> = {
    ApproximateReceiveCount: system.ApproximateReceiveCount ?? '1',
    SentTimestamp: system.SentTimestamp ?? String(Date.now()),
    SenderId: system.SenderId ?? '000000000000',
    ApproximateFirstReceiveTimestamp: system.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  };
  for (const key of [
    'SequenceNumber',
    'MessageGroupId',
    'MessageDeduplicationId',
    'AWSTraceHeader',
    'DeadLetterQueueSourceArn',
  ] as const) {
    const value = system[key];
    if (value !== undefined) attributes[key] = value;
  }
  const messageAttributes: Record<string, SQSMessageAttribute> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = toLambdaAttribute(value);
  }
  const record: Record<string, unknown> = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: attributes as unknown as SQSRecordAttributes,
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
  };
  if (message.MD5OfMessageAttributes !== undefined)
    record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
  record.eventSource = 'aws:sqs';
  record.eventSourceARN = queueArn;
  record.awsRegion = region;
  return record as unknown as SQSRecord;
}

/** How the mapping settles a batch after the function returned. */
export type BatchVerdict =
  /** Delete every record. */
  | { readonly kind: 'success' }
  /** Delete every record except `failedIds` (non-empty, ids of this batch, no duplicates). */
  | { readonly kind: 'partial'; readonly failedIds: readonly string[] }
  /** Delete nothing: every record becomes visible again after the visibility timeout. */
  | { readonly kind: 'failure'; readonly reason: string };

/**
 * Reads a function response as Lambda's SQS event source mapping does.
 *
 * Without `ReportBatchItemFailures` any response counts as success (returned failures are
 * ignored). With it: `null`, `{}`, `{ batchItemFailures: null }` and `{ batchItemFailures: [] }`
 * are success; a list of `{ itemIdentifier }` naming records of this batch is a partial failure;
 * anything else — not an object, `batchItemFailures` not a list, an entry without a non-empty
 * string `itemIdentifier`, or an id that is not in the batch — fails the whole batch.
 *
 * @param recordIds message ids of the batch that was sent.
 */
export function interpretBatchResponse(
  payload: unknown,
  recordIds: readonly string[],
  reportBatchItemFailures: boolean,
): BatchVerdict {
  if (!reportBatchItemFailures || payload === null || payload === undefined) return { kind: 'success' };
  if (typeof payload !== 'object' || Array.isArray(payload)) {
    return { kind: 'failure', reason: `response is not an object: ${JSON.stringify(payload)}` };
  }
  const failures = (payload as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return { kind: 'success' };
  if (!Array.isArray(failures)) return { kind: 'failure', reason: 'batchItemFailures is not a list' };
  if (failures.length === 0) return { kind: 'success' };
  const known = new Set(recordIds);
  const failedIds = new Set<string>();
  for (const entry of failures) {
    const id = (entry as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== 'string' || id === '') {
      return {
        kind: 'failure',
        reason: `batchItemFailures entry without an itemIdentifier: ${JSON.stringify(entry)}`,
      };
    }
    if (!known.has(id))
      return { kind: 'failure', reason: `itemIdentifier ${id} is not a message of this batch` };
    failedIds.add(id);
  }
  return { kind: 'partial', failedIds: [...failedIds] };
}
