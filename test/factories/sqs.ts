/**
 * Typed factories for SQS events and Lambda contexts, shared by unit and integration tests. The
 * event, record and context factories are the test kit users get (`sqs-jobs/testing`,
 * lib/testing/sqs-events.ts); what only this repo's tests need (a received message as a record) is
 * here.
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { TEST_ACCOUNT, TEST_REGION } from '../../lib/testing/sqs-events.ts';

export {
  type JobBodyOptions,
  jobBody,
  jobRecord,
  lambdaContext,
  queueArn,
  queueUrl,
  type RecordInput,
  sqsEvent,
  sqsRecord,
  type TestLambdaContext as TestContext,
} from '../../lib/testing/sqs-events.ts';

export const REGION = TEST_REGION;
export const ACCOUNT = TEST_ACCOUNT;

/**
 * Converts a message received from SQS (with `MessageSystemAttributeNames: ['All']`) into the
 * record Lambda's event source mapping would deliver.
 */
export function recordFromMessage(message: Message, sourceQueueArn: string): SQSRecord {
  const attrs = message.Attributes ?? {};
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
    };
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attrs.MessageGroupId === undefined ? {} : { MessageGroupId: attrs.MessageGroupId }),
      ...(attrs.SequenceNumber === undefined ? {} : { SequenceNumber: attrs.SequenceNumber }),
      ...(attrs.MessageDeduplicationId === undefined
        ? {}
        : { MessageDeduplicationId: attrs.MessageDeduplicationId }),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: sourceQueueArn,
    awsRegion: REGION,
  };
}
