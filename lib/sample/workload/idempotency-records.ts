/**
 * The idempotency tables read at the end of a run: every record's status, and the records still
 * `IN_PROGRESS` once their lease has passed. Such a record is stuck: no run holds it any more, and
 * when its message is gone too (the queues drained) nothing will ever take it over, so the job
 * it guards is neither completed nor released (a crash or a kill whose redelivery never came,
 * a message moved to the DLQ by the queue's redrive policy behind the worker's back).
 */
import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';

/** What the end-of-run scan found. */
export interface IdempotencyRecordSummary {
  /** Tables scanned. */
  readonly tables: readonly string[];
  /** Items with a `status` (job records, and any other leased record kind). */
  readonly records: number;
  /** Items by `status`. */
  readonly byStatus: Readonly<Record<string, number>>;
  /** `IN_PROGRESS` items whose `leaseExpiresAtMs` had passed at the scan. */
  readonly stuckInProgress: number;
  /** Their `pk`s (first 10). */
  readonly stuckExamples: readonly string[];
  /** `IN_PROGRESS` items still within their lease at the scan. */
  readonly inProgressLeased: number;
  /** The latest `leaseExpiresAtMs` among them, epoch ms; undefined when none. */
  readonly latestLeaseExpiryMs: number | undefined;
  /** When the scan read the tables, epoch ms. */
  readonly scannedAtMs: number;
}

const text = (v: AttributeValue | undefined): string | undefined => (v && 'S' in v ? v.S : undefined);
const number = (v: AttributeValue | undefined): number | undefined => {
  if (!v || !('N' in v) || v.N === undefined) return undefined;
  const n = Number(v.N);
  return Number.isFinite(n) ? n : undefined;
};

/**
 * Summarises items of idempotency tables (pure). An `IN_PROGRESS` item without a readable
 * `leaseExpiresAtMs` counts as stuck (the store always writes one).
 */
export function summariseIdempotencyRecords(
  items: readonly Readonly<Record<string, AttributeValue>>[],
  nowMs: number,
  tables: readonly string[] = [],
): IdempotencyRecordSummary {
  const byStatus: Record<string, number> = {};
  const stuck: string[] = [];
  let records = 0;
  let leased = 0;
  let latest: number | undefined;
  for (const item of items) {
    const status = text(item.status);
    if (status === undefined) continue;
    records += 1;
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (status !== 'IN_PROGRESS') continue;
    const expiry = number(item.leaseExpiresAtMs);
    if (expiry !== undefined && expiry > nowMs) {
      leased += 1;
      latest = Math.max(latest ?? expiry, expiry);
    } else {
      stuck.push(text(item.pk) ?? '(no pk)');
    }
  }
  return {
    tables,
    records,
    byStatus,
    stuckInProgress: stuck.length,
    stuckExamples: stuck.slice(0, 10),
    inProgressLeased: leased,
    latestLeaseExpiryMs: latest,
    scannedAtMs: nowMs,
  };
}

/** Scans the tables (consistent reads, every page) and summarises them at `now()` after the scan. */
export async function scanIdempotencyRecords(
  dynamodb: DynamoDBClient,
  tables: readonly string[],
  now: () => number = Date.now,
): Promise<IdempotencyRecordSummary> {
  const items: Record<string, AttributeValue>[] = [];
  for (const table of tables) {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const out = await dynamodb.send(
        new ScanCommand({
          TableName: table,
          ConsistentRead: true,
          ProjectionExpression: '#pk, #status, #lease',
          ExpressionAttributeNames: { '#pk': 'pk', '#status': 'status', '#lease': 'leaseExpiresAtMs' },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
  }
  return summariseIdempotencyRecords(items, now(), tables);
}

/**
 * Scans at the end of a run; when records are still within their lease, waits until the latest
 * lease has passed (at most `maxWaitMs`) and scans again, so every `IN_PROGRESS` record left is
 * judged past its lease. @param sleep injectable for tests.
 */
export async function finalIdempotencyScan(
  dynamodb: DynamoDBClient,
  tables: readonly string[],
  options: {
    readonly maxWaitMs?: number;
    readonly now?: () => number;
    readonly sleep?: (ms: number) => Promise<void>;
  } = {},
): Promise<IdempotencyRecordSummary> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const first = await scanIdempotencyRecords(dynamodb, tables, now);
  if (first.latestLeaseExpiryMs === undefined) return first;
  const waitMs = Math.min(options.maxWaitMs ?? 60_000, first.latestLeaseExpiryMs - now() + 1_000);
  if (waitMs > 0) await sleep(waitMs);
  return scanIdempotencyRecords(dynamodb, tables, now);
}
