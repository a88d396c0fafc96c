/**
 * Parked FIFO message groups in the idempotency table (`onDeadLetter: 'park'`): one group record
 * per parked group, read strongly consistent, written and deleted conditionally. Used by
 * {@link DynamoIdempotencyStore}; costs are in its docstring and docs/contracts.md.
 */
import { randomUUID } from 'node:crypto';
import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { JobError } from '../../core/errors.ts';
import { IdempotencyStoreError } from './errors.ts';
import {
  type GroupRecord,
  groupRecordToItem,
  type ParkWrite,
  parkOf,
  parkWrite,
  parseGroupRecord,
  unparkCondition,
} from './group-record.ts';
import type { GroupPark, ParkGroupOutcome, ParkGroupRequest, UnparkOutcome } from './guard.ts';
import { groupRecordKey } from './keys.ts';
import { isExpiredItem, S } from './record.ts';
import type { RecordTable } from './table.ts';

/** Rounds of the park loop (each a conditional PutItem) before a contended group gives up. */
const MAX_PARK_ROUNDS = 4;

const REQUIRED_FIELDS = [
  'queueName',
  'messageGroupId',
  'blockerPk',
  'blockerJobType',
  'blockerJobId',
  'blockerMessageId',
  'blockerReason',
] as const;

/** The group records of one table. */
export class GroupParks {
  readonly #table: RecordTable;
  readonly #now: () => number;
  readonly #ttlSeconds: number;

  constructor(table: RecordTable, now: () => number, ttlSeconds: number) {
    this.#table = table;
    this.#now = now;
    this.#ttlSeconds = ttlSeconds;
  }

  /** One consistent GetItem; an absent or expired record is "not parked". */
  async read(queueName: string, messageGroupId: string): Promise<GroupPark | undefined> {
    const pk = groupRecordKey(queueName, messageGroupId);
    const item = await this.#table.get('read-park', pk);
    if (!item || isExpiredItem(item, this.#now())) return undefined;
    return parkOf(parseGroupRecord(item));
  }

  /**
   * A conditional PutItem of a new park; when the group already has one: this put's own (an SDK
   * retry after a lost response) → `parked`; another blocker's → `parked-by-other`; the same
   * blocker's (it failed again after a redrive) → one more PutItem that refreshes it.
   */
  async park(request: ParkGroupRequest): Promise<ParkGroupOutcome> {
    for (const field of REQUIRED_FIELDS) {
      const value: unknown = request?.[field];
      if (typeof value !== 'string' || value.length === 0) {
        throw new JobError(`idempotency: park request ${field} must be a non-empty string`);
      }
    }
    const pk = groupRecordKey(request.queueName, request.messageGroupId);
    const writeId = randomUUID();
    let old: GroupRecord | undefined;
    for (let round = 0; round < MAX_PARK_ROUNDS; round++) {
      const write: ParkWrite = parkWrite(request, pk, this.#now(), this.#ttlSeconds, writeId, old);
      const written = await this.#table.put(
        'park',
        pk,
        groupRecordToItem(write.record),
        write.expr,
        write.condition,
      );
      if (written.ok) return { status: 'parked', park: parkOf(write.record) };
      const item = written.old ?? (await this.#table.get('park', pk));
      if (!item || isExpiredItem(item, this.#now())) {
        old = undefined;
        continue;
      }
      const current = parseGroupRecord(item);
      if (current.writeId === writeId) return { status: 'parked', park: parkOf(current) };
      if (current.blockerPk !== request.blockerPk)
        return { status: 'parked-by-other', park: parkOf(current) };
      old = current;
    }
    throw new IdempotencyStoreError(
      `idempotency park of ${pk} on table ${this.#table.tableName} kept losing races after ${MAX_PARK_ROUNDS} writes`,
      { context: { operation: 'park', pk, tableName: this.#table.tableName } },
    );
  }

  /**
   * A DeleteItem conditioned on `blockerPk` holding the park (API_DeleteItem.html: a failed
   * condition deletes nothing; `ALL_OLD` returns the item that failed it).
   */
  async unpark(queueName: string, messageGroupId: string, blockerPk: string): Promise<UnparkOutcome> {
    const pk = groupRecordKey(queueName, messageGroupId);
    const { expr, condition } = unparkCondition(blockerPk);
    const table = this.#table;
    const deleted = await table.conditional('unpark', pk, () =>
      table.client.send(
        new DeleteItemCommand({
          TableName: table.tableName,
          Key: { pk: S(pk) },
          ConditionExpression: condition,
          ...expr.params(),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    if (deleted.ok) return 'cleared';
    const item = deleted.old ?? (await this.#table.get('unpark', pk));
    // Gone (deleted by an SDK retry of this very delete, or by an operator): nothing to clear.
    if (!item || isExpiredItem(item, this.#now())) return 'not-parked';
    parseGroupRecord(item); // throws when the key holds something else than a group record
    return 'parked-by-other';
  }
}
