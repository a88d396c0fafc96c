/**
 * BEFORE: the consumer as it is today, with Powertools for AWS Lambda: `BatchProcessor` reports
 * partial batch failures, `makeIdempotent` keyed on the order id (JMESPath `orderId`) keeps the
 * charge to one per order, and the record handler unwraps SNS notifications by hand.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { chargeOrder, type Order } from './orders.ts';

/** Builds the handler on a Powertools idempotency table (partition key `id`). */
export function createPowertoolsHandler(tableName: string) {
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'orderId' });
  const charge = makeIdempotent(async (order: Order) => chargeOrder(order), {
    persistenceStore: new DynamoDBPersistenceLayer({ tableName }),
    config,
  });
  const processor = new BatchProcessor(EventType.SQS);

  async function recordHandler(record: SQSRecord): Promise<unknown> {
    const body = JSON.parse(record.body) as Record<string, unknown>;
    // An SNS subscription without raw message delivery wraps the order in a notification.
    const order = (body.Type === 'Notification' ? JSON.parse(String(body.Message)) : body) as Order;
    if (typeof order.orderId !== 'string') throw new Error('orderId is missing');
    return charge(order);
  }

  return async (event: SQSEvent, context: Context) => {
    config.registerLambdaContext(context);
    return processPartialResponse(event, recordHandler, processor, { context });
  };
}
