/**
 * The batches of a workload (the nightly invoice run, started by its recurring schedule's firing:
 * lib/sample/nightly-invoices.ts), read back at the end from the idempotency tables (batch items,
 * docs/contracts.md "Batch records"), for the report's batch invariants (report/batches.ts).
 */
import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { BatchRunFacts } from '../report/batches.ts';

/** The batches in the idempotency tables: started, completed, and the ones still open (pure). */
export function summariseBatches(
  items: readonly Readonly<Record<string, AttributeValue>>[],
): Pick<BatchRunFacts, 'started' | 'completed' | 'open'> {
  const open: string[] = [];
  let started = 0;
  let completed = 0;
  for (const item of items) {
    if (item.recordType?.S !== 'batch') continue;
    started += 1;
    if (item.state?.S === 'completed') completed += 1;
    else
      open.push(
        `${item.batchId?.S ?? '?'} (${item.succeeded?.N ?? '?'}+${item.deadLettered?.N ?? '?'} of ${item.total?.N ?? '?'} counted)`,
      );
  }
  return { started, completed, open };
}

/** Scans the idempotency tables for batch items (consistent reads, every page), summarised. */
export async function scanBatches(
  dynamodb: DynamoDBClient,
  tables: readonly string[],
): Promise<Pick<BatchRunFacts, 'started' | 'completed' | 'open'>> {
  return summariseBatches(await scanBatchItems(dynamodb, tables));
}

/** The batch items of the idempotency tables (consistent reads, every page). */
export async function scanBatchItems(
  dynamodb: DynamoDBClient,
  tables: readonly string[],
): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  for (const table of tables) {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const out = await dynamodb.send(
        new ScanCommand({
          TableName: table,
          ConsistentRead: true,
          FilterExpression: 'recordType = :batch',
          ExpressionAttributeValues: { ':batch': { S: 'batch' } },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
  }
  return items;
}
