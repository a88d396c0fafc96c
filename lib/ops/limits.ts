/**
 * The flow-control limits kept in an idempotency table (lib/runtime/limits/), for `sqs-jobs stats
 * --limits-table`: per concurrency key its live holders against its limit, per rate bucket its
 * current rate against the declared one and the tokens left. Reads only: a Scan of the items whose
 * `pk` starts `%limit#` (a Scan reads the whole table, paid by the items read: meant for operators,
 * not for a loop).
 */
import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unescapeKeyPart } from '../runtime/idempotency/keys.ts';
import { terminalLines } from './terminal-text.ts';

/** Most Scan pages read (1 MB each) before the list is cut short. */
export const MAX_LIMIT_SCAN_PAGES = 20;

/** One limit record. */
export type LimitRow =
  | {
      readonly kind: 'concurrency';
      readonly name: string;
      readonly key: string;
      /** Holders whose slot has not expired at the time of the read. */
      readonly holders: number;
      /** Holders whose slot expired (crashed runs), freed by the next acquisition. */
      readonly expiredHolders: number;
      readonly limit: number | undefined;
    }
  | {
      readonly kind: 'rate';
      readonly name: string;
      readonly key: string;
      /** The current rate, requests per second (below `perSecond` while lowered by throttling). */
      readonly rate: number | undefined;
      readonly perSecond: number | undefined;
      /** Tokens at the bucket's last refill (takes since then lower it). */
      readonly tokens: number | undefined;
      /** The last decrease (a throttling report), epoch ms; undefined: never. */
      readonly decreasedAtMs: number | undefined;
    };

/** What {@link readLimits} found. */
export interface LimitsReport {
  readonly table: string;
  readonly rows: readonly LimitRow[];
  /** True when the Scan stopped at {@link MAX_LIMIT_SCAN_PAGES} pages. */
  readonly truncated: boolean;
}

/**
 * Reads every limit record of `table`, sorted by kind, name and key.
 * @throws what the Scan throws (missing table, permissions, endpoint).
 */
export async function readLimits(
  dynamodb: Pick<DynamoDBClient, 'send'>,
  table: string,
  nowMs: number,
): Promise<LimitsReport> {
  const rows: LimitRow[] = [];
  let start: Record<string, AttributeValue> | undefined;
  let pages = 0;
  do {
    const out = await dynamodb.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: { ':prefix': { S: '%limit#' } },
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    for (const item of out.Items ?? []) {
      const row = rowOf(item, nowMs);
      if (row !== undefined) rows.push(row);
    }
    start = out.LastEvaluatedKey;
    pages += 1;
  } while (start !== undefined && pages < MAX_LIMIT_SCAN_PAGES);
  rows.sort((a, b) =>
    `${a.kind}\u0000${a.name}\u0000${a.key}`.localeCompare(`${b.kind}\u0000${b.name}\u0000${b.key}`),
  );
  return { table, rows, truncated: start !== undefined };
}

function rowOf(item: Record<string, AttributeValue>, nowMs: number): LimitRow | undefined {
  const parts = (item.pk?.S ?? '').split('#');
  if (parts.length !== 4 || parts[0] !== '%limit') return undefined;
  const name = readable(parts[2] as string);
  const key = readable(parts[3] as string);
  const num = (attribute: string): number | undefined => {
    const raw = item[attribute]?.N;
    return raw === undefined ? undefined : Number(raw);
  };
  if (parts[1] === 'concurrency') {
    const expiries = Object.values(item.holders?.M ?? {}).map((value) => Number(value.N));
    const live = expiries.filter((expiry) => expiry >= nowMs).length;
    return {
      kind: 'concurrency',
      name,
      key,
      holders: live,
      expiredHolders: expiries.length - live,
      limit: num('slotLimit'),
    };
  }
  if (parts[1] === 'rate') {
    const decreasedAtMs = num('decreasedAtMs');
    return {
      kind: 'rate',
      name,
      key,
      rate: num('rate'),
      perSecond: num('perSecond'),
      tokens: num('tokens'),
      decreasedAtMs: decreasedAtMs === undefined || decreasedAtMs === 0 ? undefined : decreasedAtMs,
    };
  }
  return undefined;
}

/** A key part as a person reads it: unescaped, or its hash as stored. */
function readable(part: string): string {
  try {
    return unescapeKeyPart(part);
  } catch {
    return part;
  }
}

/** Renders the limits as text lines (after the queue table of `stats`). */
export function renderLimits(report: LimitsReport, nowMs: number): string {
  const lines = [`flow-control limits in table ${report.table}:`];
  if (report.rows.length === 0)
    lines.push('  none (no job has taken a concurrency slot or a rate-limit token yet)');
  const round = (value: number | undefined, digits: number) =>
    value === undefined ? '?' : value.toFixed(digits);
  for (const row of report.rows) {
    if (row.kind === 'concurrency') {
      const expired = row.expiredHolders > 0 ? `, ${row.expiredHolders} expired (crashed runs)` : '';
      lines.push(
        `  concurrency ${row.name} [${row.key}]: ${row.holders} running of ${row.limit ?? '?'}${expired}`,
      );
    } else {
      const lowered =
        row.decreasedAtMs === undefined
          ? ''
          : `, last lowered by throttling ${Math.max(0, Math.round((nowMs - row.decreasedAtMs) / 1000))} s ago`;
      lines.push(
        `  rate ${row.name} [${row.key}]: ${round(row.rate, 2)}/s of ${round(row.perSecond, 2)}/s, ${round(row.tokens, 1)} tokens at the last refill${lowered}`,
      );
    }
  }
  if (report.truncated) lines.push(`  (list cut after ${MAX_LIMIT_SCAN_PAGES} pages of the table)`);
  lines.push(
    '  waiting jobs: on a standard queue a job waiting on a limit is a delayed message (the delayed column); on a FIFO queue it is in flight',
  );
  return terminalLines(lines);
}
