/**
 * The batch item write of a batch start, on the idempotency table: one PutItem if absent
 * (`attribute_not_exists(pk)`, PutItem API reference: a failed condition writes nothing and answers
 * `ConditionalCheckFailedException`). The DynamoDB client module is loaded at the first start, so
 * producers that never start a batch never load it.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { BatchTablePort } from './batch-start.ts';
import type { DynamoDbSender } from './scheduling.ts';

/**
 * Options of batches on a `JobClient`: where batch items are kept. The DynamoDB client is the
 * JobClient's own `dynamodb` option, the one its jobs sent for later use too.
 */
export interface JobClientBatchOptions {
  /** The idempotency table of the workers that run the children (`JOBS_IDEMPOTENCY_TABLE`). */
  readonly tableName: string;
}

/** The keys of {@link JobClientBatchOptions}. */
export const BATCH_OPTION_KEYS = ['tableName'] as const satisfies readonly (keyof JobClientBatchOptions)[];

/** Where a batch start writes: the table, and the client (`JobClientOptions.dynamodb`). */
export interface BatchTableOptions extends JobClientBatchOptions {
  /** @default `new DynamoDBClient({})`, created at the first start (region and endpoint from the environment) */
  readonly dynamodb?: DynamoDbSender | undefined;
}

/** A {@link BatchTablePort} on the table of `options`. */
export function batchTable(options: BatchTableOptions): BatchTablePort {
  let client: Promise<DynamoDbSender> | undefined;
  return {
    tableName: options.tableName,
    async putIfAbsent(
      item: Record<string, AttributeValue>,
    ): Promise<Record<string, AttributeValue> | undefined> {
      const { PutItemCommand, GetItemCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
      client ??= Promise.resolve(options.dynamodb ?? new DynamoDBClient({}));
      const dynamodb = await client;
      try {
        await dynamodb.send(
          new PutItemCommand({
            TableName: options.tableName,
            Item: item,
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return undefined;
      } catch (error) {
        const failed = error as { name?: unknown; Item?: Record<string, AttributeValue> } | null;
        if (failed?.name !== 'ConditionalCheckFailedException') throw error;
        // The item there (some emulators leave it off the error: read it, strongly consistent).
        if (failed.Item !== undefined) return failed.Item;
        const read = (await dynamodb.send(
          new GetItemCommand({
            TableName: options.tableName,
            Key: { pk: item.pk as AttributeValue },
            ConsistentRead: true,
          }),
        )) as { Item?: Record<string, AttributeValue> };
        return read.Item ?? item;
      }
    },
  };
}
