/**
 * The group record of a parked FIFO message group (`recordType` `group`, pk
 * `%group#<queueName>#<messageGroupId>`: keys.ts `groupRecordKey`), and the conditional writes
 * that park and unpark a group. Contract: docs/contracts.md, "Idempotency table".
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { Expr } from './expr.ts';
import type { GroupPark, ParkGroupRequest } from './guard.ts';
import { MAX_TEXT_BYTES, N, optN, reqN, reqS, requireKind, S, truncateUtf8 } from './record.ts';

/** A group record as stored: the park plus the token of the write that made it. */
export interface GroupRecord extends GroupPark {
  /** Always `"group"`. */
  readonly recordType: 'group';
  /** Always `PARKED`: a group that is not parked has no record. */
  readonly status: 'PARKED';
  /** Random UUID of the write: how an SDK retry of that write (lost response) recognises its own record. */
  readonly writeId: string;
}

/** Writes a group record as a full item (PutItem). */
export function groupRecordToItem(record: GroupRecord): Record<string, AttributeValue> {
  const text = (value: string) => S(truncateUtf8(value, MAX_TEXT_BYTES));
  return {
    pk: S(record.pk),
    recordType: S('group'),
    status: S('PARKED'),
    queueName: text(record.queueName),
    messageGroupId: text(record.messageGroupId),
    // Compared, never cut: a job record key is at most 2,048 bytes (keys.ts).
    blockerPk: S(record.blockerPk),
    blockerJobType: text(record.blockerJobType),
    blockerJobId: text(record.blockerJobId),
    blockerMessageId: text(record.blockerMessageId),
    blockerReason: text(record.blockerReason),
    parkedAtMs: N(record.parkedAtMs),
    updatedAtMs: N(record.updatedAtMs),
    parkCount: N(record.parkCount),
    writeId: S(record.writeId),
    expiresAt: N(record.expiresAt),
  };
}

/**
 * Reads a group record.
 * @throws {IdempotencyRecordError} (permanent) when the item is not a group record or a required
 *   attribute is missing or mistyped.
 */
export function parseGroupRecord(item: Record<string, AttributeValue>): GroupRecord {
  requireKind(item, 'group');
  const G = 'group';
  return {
    pk: reqS(item, 'pk', G),
    recordType: 'group',
    status: 'PARKED',
    queueName: reqS(item, 'queueName', G),
    messageGroupId: reqS(item, 'messageGroupId', G),
    blockerPk: reqS(item, 'blockerPk', G),
    blockerJobType: reqS(item, 'blockerJobType', G),
    blockerJobId: reqS(item, 'blockerJobId', G),
    blockerMessageId: reqS(item, 'blockerMessageId', G),
    blockerReason: reqS(item, 'blockerReason', G),
    parkedAtMs: reqN(item, 'parkedAtMs', G),
    updatedAtMs: optN(item, 'updatedAtMs', G) ?? 0,
    parkCount: optN(item, 'parkCount', G) ?? 1,
    writeId: reqS(item, 'writeId', G),
    expiresAt: reqN(item, 'expiresAt', G),
  };
}

/** The park as handed to the worker (without the store's write token). */
export function parkOf(record: GroupRecord): GroupPark {
  const { recordType: _type, status: _status, writeId: _writeId, ...park } = record;
  return park;
}

/** A park write: the record to put and its condition. */
export interface ParkWrite {
  readonly record: GroupRecord;
  readonly expr: Expr;
  readonly condition: string;
}

/**
 * The PutItem that parks a group at `now` (epoch ms) for `ttlSeconds`: a new park (`old`
 * undefined), or a refresh of the park `old` of the same blocker (it failed again after a
 * redrive: first park time kept, count + 1).
 *
 * Race prevented: two blockers of one group (possible only when a FIFO message's visibility ran
 * out while its run went on) never overwrite each other: a new park needs no live record (an
 * expired one, `expiresAt <= now` with TTL not yet applied, counts as absent); a refresh needs the
 * very record that was read (same `writeId`).
 */
export function parkWrite(
  request: ParkGroupRequest,
  pk: string,
  now: number,
  ttlSeconds: number,
  writeId: string,
  old: GroupRecord | undefined,
): ParkWrite {
  const nowS = Math.floor(now / 1000);
  const record: GroupRecord = {
    pk,
    recordType: 'group',
    status: 'PARKED',
    queueName: request.queueName,
    messageGroupId: request.messageGroupId,
    blockerPk: request.blockerPk,
    blockerJobType: request.blockerJobType,
    blockerJobId: request.blockerJobId,
    blockerMessageId: request.blockerMessageId,
    blockerReason: request.blockerReason,
    parkedAtMs: old ? old.parkedAtMs : now,
    updatedAtMs: now,
    parkCount: old ? old.parkCount + 1 : 1,
    writeId,
    expiresAt: nowS + ttlSeconds,
  };
  const expr = new Expr();
  const condition = old
    ? `${expr.n('writeId')} = ${expr.v(S(old.writeId))}`
    : `attribute_not_exists(${expr.n('pk')}) OR ${expr.n('expiresAt')} <= ${expr.v(N(nowS))}`;
  return { record, expr, condition };
}

/**
 * The condition of the DeleteItem that unparks a group: only the park of `blockerPk`. Race
 * prevented: a blocker that completes never clears a park another job holds.
 */
export function unparkCondition(blockerPk: string): { expr: Expr; condition: string } {
  const expr = new Expr();
  const condition = `${expr.n('recordType')} = ${expr.v(S('group'))} AND ${expr.n('blockerPk')} = ${expr.v(S(blockerPk))}`;
  return { expr, condition };
}
