/**
 * Scheduling of one SQS batch: FIFO records one at a time per `MessageGroupId`, in event order,
 * groups concurrently; standard records all at once (the batch's full width) up to a cap.
 * Everything lives in the call: nothing carries over to the next invocation on a warm instance.
 */
import type { SQSRecord } from 'aws-lambda';
import type { RecordOutcome } from './record/index.ts';

/**
 * Default number of message groups of a FIFO batch in flight at once. A FIFO batch holds at most
 * 10 records (services-sqs-parameters), so this is every group of the batch.
 */
export const DEFAULT_MAX_CONCURRENCY = 10;

/**
 * Most records of a standard batch in flight at once when no `maxConcurrency` is given: 500.
 * Below it a standard batch runs all its records at once, so the records in flight follow the
 * event source's `batchSize` (Lambda never delivers more records than that; up to 10,000 on a
 * standard queue, services-sqs-parameters) with no setting to keep in step. Why a cap: a Lambda
 * execution environment has 1,024 file descriptors (Lambda quotas, gettingstarted-limits), and a
 * job waiting on a partner's API usually holds a socket of its own; 500 leaves the other half to
 * the runtime, the AWS SDK's connection pools (50 sockets per client) and jobs that open two.
 * Memory is not what binds: a batch's bodies are at most the 6 MB invocation payload.
 */
export const MAX_DEFAULT_STANDARD_CONCURRENCY = 500;

/**
 * Records of a standard batch of `batchRecords` records in flight at once: `maxConcurrency` when
 * given, else every record of the batch up to {@link MAX_DEFAULT_STANDARD_CONCURRENCY}.
 */
export function standardConcurrency(batchRecords: number, maxConcurrency: number | undefined): number {
  return maxConcurrency ?? Math.max(1, Math.min(batchRecords, MAX_DEFAULT_STANDARD_CONCURRENCY));
}

/** How a batch is run. */
export interface BatchSchedule {
  /**
   * Records (standard) or message groups (FIFO) in flight at once, >= 1. When undefined: every
   * record of a standard batch up to {@link MAX_DEFAULT_STANDARD_CONCURRENCY}
   * ({@link standardConcurrency}); {@link DEFAULT_MAX_CONCURRENCY} groups of a FIFO batch.
   */
  readonly maxConcurrency: number | undefined;
  /** Runs one record; must not throw. */
  readonly process: (record: SQSRecord) => Promise<RecordOutcome>;
  /**
   * Called once for every record whose outcome is `retry` (the ones reported failed), right
   * after it is known; sets its visibility. Must not throw.
   */
  readonly onRetry: (
    record: SQSRecord,
    outcome: Extract<RecordOutcome, { status: 'retry' }>,
  ) => Promise<void>;
}

/**
 * Whether a record comes from a FIFO queue: its source ARN ends in `.fifo`; without an ARN
 * (hand-built events), a `SequenceNumber` with a `MessageGroupId`, which only FIFO messages
 * carry together. A `MessageGroupId` alone is not enough: on standard fair queues it names a
 * tenant and promises no order (sqs-fair-queues).
 */
export function isFifoRecord(record: SQSRecord): boolean {
  if (record.eventSourceARN) return record.eventSourceARN.endsWith('.fifo');
  return record.attributes?.MessageGroupId !== undefined && record.attributes?.SequenceNumber !== undefined;
}

/**
 * Runs a batch and returns each record's outcome, in the order of `records`.
 *
 * FIFO rule: within a group, once a record is reported failed (whatever the reason), the later
 * records of that group are not run; they are reported failed too (`group-blocked`) with the
 * same visibility delay as the record that failed, so the group comes back whole and in order
 * (a FIFO group delivers nothing more while any of its messages is in flight). A record that was
 * dead-lettered counts as handled and does not block its group.
 */
export async function runBatch(
  records: readonly SQSRecord[],
  schedule: BatchSchedule,
): Promise<RecordOutcome[]> {
  const outcomes: RecordOutcome[] = new Array(records.length);

  // Awaits only what must be awaited (a retry's visibility change): every extra async layer is
  // microtask turns paid for every record (issue 10 profile).
  const settle = (index: number, outcome: RecordOutcome): Promise<void> | undefined => {
    outcomes[index] = outcome;
    if (outcome.status === 'retry') return schedule.onRetry(records[index] as SQSRecord, outcome);
    return undefined;
  };

  const fifo = records.length > 0 && records.every(isFifoRecord);
  if (!fifo) {
    const one = async (record: SQSRecord, index: number) => {
      const retrying = settle(index, await schedule.process(record));
      if (retrying) await retrying;
    };
    await Promise.all(
      withinLimit(records, standardConcurrency(records.length, schedule.maxConcurrency), one),
    );
    return outcomes;
  }

  // Group indexes by MessageGroupId, keeping event order inside each group.
  const groups = new Map<string, number[]>();
  records.forEach((record, index) => {
    const group = record.attributes?.MessageGroupId ?? `\u0000${record.messageId}`;
    const list = groups.get(group) ?? [];
    list.push(index);
    groups.set(group, list);
  });

  const runGroup = async (indexes: readonly number[]) => {
    let blockedFor: number | undefined;
    for (const index of indexes) {
      if (blockedFor !== undefined) {
        await settle(index, { status: 'retry', delaySeconds: blockedFor, reason: 'group-blocked' });
        continue;
      }
      const outcome = await schedule.process(records[index] as SQSRecord);
      if (outcome.status === 'retry') blockedFor = outcome.delaySeconds;
      const retrying = settle(index, outcome);
      if (retrying) await retrying;
    }
  };
  await Promise.all(
    withinLimit([...groups.values()], schedule.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY, runGroup),
  );
  return outcomes;
}

/**
 * Starts `run` for every item, at most `maxConcurrency` at once. When every item fits (the
 * default on a standard batch below the cap, the usual case) they all start at once without a queue.
 * Otherwise `maxConcurrency` runners take the items in order, each starting the next as its last
 * ends: the same order and bound as a `p-limit` queue, in a few lines instead of a dependency in
 * every worker bundle (issue 21: bundle bytes). `run` must not throw (`BatchSchedule.process`).
 */
function withinLimit<T>(
  items: readonly T[],
  maxConcurrency: number,
  run: (item: T, index: number) => Promise<unknown>,
): Promise<unknown>[] {
  if (items.length <= maxConcurrency) return items.map(run);
  let next = 0;
  const runner = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await run(items[index] as T, index);
    }
  };
  return Array.from({ length: maxConcurrency }, runner);
}
