/**
 * The idempotency table's calls that only features make: TransactWriteItems (a batch child's count
 * with its lease's end, lib/runtime/batches/count.ts) and BatchGetItem (a batch's children,
 * lib/runtime/batches/ledger.ts). Apart from {@link RecordTable} so that a worker without those
 * features does not carry them (issue 21: bundle bytes). SDK exceptions are translated here, as
 * in table.ts.
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { S } from './record.ts';
import { translateSdkError } from './sdk-errors.ts';
import type { RecordTable } from './table.ts';

/** Tries of a transaction cancelled by `TransactionConflict` (another transaction on one of its items). */
export const TRANSACTION_CONFLICT_TRIES = 6;

/**
 * TransactWriteItems on `table` (API_TransactWriteItems.html): all actions or none. `token` is the
 * `ClientRequestToken` (1–36 characters): the same token within 10 minutes is answered as success
 * without applying the actions again, so a retry after a lost response changes nothing. A
 * transaction cancelled by a failed condition is a result: `reasons` has one code per action
 * (`ConditionalCheckFailed`, `None`, ...); any other failure is translated and thrown.
 *
 * A transaction cancelled only because another one was writing one of its items at that moment
 * (`TransactionConflict`: children of one batch counted at once all update its counter) wrote
 * nothing: it is sent again, up to {@link TRANSACTION_CONFLICT_TRIES} tries in all, after a short
 * random wait, with a token of its own per try (the cancelled try was not applied, so no answer
 * to it can stand for this one). Still conflicting, it is thrown (transient).
 * `operation` names the store operation in translated errors (as table.ts).
 * @throws {IdempotencyStoreError} when DynamoDB fails, or the conflict lasts.
 */
export async function transact(
  table: RecordTable,
  operation: string,
  pk: string,
  items: TransactWriteItem[],
  token: string,
  random: () => number = Math.random,
): Promise<{ readonly ok: true } | { readonly ok: false; readonly reasons: readonly string[] }> {
  for (let attempt = 1; ; attempt++) {
    const tokenOfTry = attempt === 1 ? token : `${token.slice(0, 33)}-${attempt}`;
    try {
      await table.client.send(
        new TransactWriteItemsCommand({ TransactItems: items, ClientRequestToken: tokenOfTry }),
      );
      return { ok: true };
    } catch (err) {
      const cancelled = (err as { name?: unknown; CancellationReasons?: { Code?: string }[] }) ?? {};
      if (cancelled.name === 'TransactionCanceledException' && Array.isArray(cancelled.CancellationReasons)) {
        const codes = cancelled.CancellationReasons.map((reason) => reason.Code ?? 'None');
        if (codes.includes('ConditionalCheckFailed')) return { ok: false, reasons: codes };
        if (codes.includes('TransactionConflict') && attempt < TRANSACTION_CONFLICT_TRIES) {
          await new Promise((resolve) => setTimeout(resolve, Math.round(random() * 25 * 2 ** attempt)));
          continue;
        }
      }
      throw translateSdkError(`${operation} (TransactWriteItems)`, pk, table.tableName, err);
    }
  }
}

/**
 * Strongly consistent BatchGetItem of `pks` on `table` (API_BatchGetItem.html: at most 100 keys per
 * request; `UnprocessedKeys` asked again). Returns the items found, in no particular order.
 * @throws {IdempotencyStoreError} when DynamoDB fails.
 */
export async function batchGet(
  table: RecordTable,
  operation: string,
  pks: readonly string[],
): Promise<Record<string, AttributeValue>[]> {
  const found: Record<string, AttributeValue>[] = [];
  for (let start = 0; start < pks.length; start += 100) {
    let keys: Record<string, AttributeValue>[] = pks.slice(start, start + 100).map((pk) => ({ pk: S(pk) }));
    for (let round = 0; keys.length > 0; round++) {
      let out: BatchGetItemCommandOutput;
      try {
        out = await table.client.send(
          new BatchGetItemCommand({
            RequestItems: { [table.tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
      } catch (err) {
        throw translateSdkError(`${operation} (BatchGetItem)`, pks[start] ?? '', table.tableName, err);
      }
      found.push(...(out.Responses?.[table.tableName] ?? []));
      keys = out.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
      // Unprocessed keys come back when throughput ran out: wait a little, more each round.
      if (keys.length > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** round)));
    }
  }
  return found;
}
