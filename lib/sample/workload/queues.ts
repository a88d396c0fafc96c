/** Message counts of a queue, to know when the workload has drained. */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** Messages of a queue by state (SQS `ApproximateNumberOfMessages*` attributes). */
export interface QueueActivity {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

/** Reads the message counts of a queue. */
export async function queueActivity(sqs: SQSClient, queueUrl: string): Promise<QueueActivity> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}
