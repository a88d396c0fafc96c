/**
 * The existing producers, unchanged by the migration: a service that sends a plain JSON body with
 * `SendMessage` (and sends it again when it did not see the answer: a producer retry), and a
 * service that publishes the same JSON to an SNS topic subscribed by the queue (raw message
 * delivery off, so the queue gets the SNS notification with the order as its `Message` string).
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Order } from './orders.ts';

/** What the checkout service has always sent: the order as the body. */
export async function placeOrder(sqs: SQSClient, queueUrl: string, order: Order): Promise<void> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(order) }));
}
