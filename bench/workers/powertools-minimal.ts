/**
 * The minimal Powertools worker of the cold-start, bundle and heap rows (bench/cold-start.ts),
 * doing what the CPU rows' Powertools side does: `BatchProcessor` + `processPartialResponse`, the
 * envelope parsed and its `type` checked, the data checked by the same hand-written check (no
 * schema library), `makeIdempotent` on `DynamoDBPersistenceLayer` (key `[source, id]`, payload
 * validation on `data`), the Powertools Logger through Middy. `BENCH_NO_STORE=1` runs the job
 * without idempotency (the heap row).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';

interface OrderData {
  readonly orderId: string;
  readonly userId: string;
  readonly amountCents: number;
}

interface Envelope {
  readonly source: string;
  readonly id: string;
  readonly type: string;
  readonly data: OrderData;
}

function compute(data: OrderData): { checksum: number } {
  let h = 2166136261;
  const text = `${data.orderId}:${data.userId}:${data.amountCents}`;
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  }
  return { checksum: h >>> 0 };
}

function checkData(value: unknown): OrderData {
  const v = value as Partial<OrderData> | null;
  if (
    typeof v === 'object' &&
    v !== null &&
    typeof v.orderId === 'string' &&
    typeof v.userId === 'string' &&
    Number.isInteger(v.amountCents)
  ) {
    return v as OrderData;
  }
  throw new Error('expected { orderId, userId, amountCents }');
}

const logger = new Logger();
const config = new IdempotencyConfig({ eventKeyJmesPath: '[source, id]', payloadValidationJmesPath: 'data' });
const run =
  process.env.BENCH_NO_STORE === '1'
    ? async (envelope: Envelope) => compute(envelope.data)
    : makeIdempotent(async (envelope: Envelope) => compute(envelope.data), {
        persistenceStore: new DynamoDBPersistenceLayer({ tableName: process.env.IDEMPOTENCY_TABLE ?? '' }),
        config,
      });
const processor = new BatchProcessor(EventType.SQS);

async function recordHandler(record: SQSRecord): Promise<unknown> {
  const envelope = JSON.parse(record.body) as Envelope;
  if (envelope.type !== 'bench.compute') throw new Error(`unknown job type ${envelope.type}`);
  return run({
    source: envelope.source,
    id: envelope.id,
    type: envelope.type,
    data: checkData(envelope.data),
  });
}

export const handler = middy(async (event: SQSEvent, context: Context) => {
  config.registerLambdaContext(context);
  return processPartialResponse(event, recordHandler, processor, { context });
}).use(injectLambdaContext(logger, { resetKeys: true }));
