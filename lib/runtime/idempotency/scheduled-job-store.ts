/**
 * The worker's one call on the state item of a job sent for later (lib/core/scheduled-job.ts):
 * start it, or learn why not. One conditional UpdateItem per delivery of such a job (and one
 * consistent GetItem only when the condition fails: cancelled, superseded, or absent). Used by
 * {@link DynamoIdempotencyStore}.
 */
import { isExpiredState, parseScheduledJobItem, scheduledJobKey } from '../../core/scheduled-job.ts';
import { IdempotencyStoreError } from './errors.ts';
import { Expr } from './expr.ts';
import type { ScheduledStart, ScheduledStartRequest } from './guard.ts';
import { N, S } from './record.ts';
import type { RecordTable } from './table.ts';

/**
 * `state = started` if the item is at the message's generation and `pending` or already
 * `started` (a redelivery, a schedule that fired twice: the idempotency guard then absorbs the
 * second run). Otherwise: `cancelled`, `superseded` (the item is at another generation: the job
 * was rescheduled), or `missing` (no item, or its TTL passed).
 */
export async function startScheduledJob(
  table: RecordTable,
  request: ScheduledStartRequest,
  nowMs: number,
): Promise<ScheduledStart> {
  const pk = scheduledJobKey(request.source, request.id);
  // Two rounds: a failed condition read back as pending at this generation can only be a write
  // that raced the read (a reschedule rolled back): try the start once more.
  for (let round = 0; ; round++) {
    const expr = new Expr();
    const state = expr.n('state');
    const started = expr.v(S('started'));
    const update = `SET ${state} = ${started}, startedAtMs = if_not_exists(startedAtMs, ${expr.v(N(nowMs))}), startedMessageId = if_not_exists(startedMessageId, ${expr.v(S(request.messageId))})`;
    const condition = `generation = ${expr.v(N(request.generation))} AND (${state} = ${expr.v(S('pending'))} OR ${state} = ${started}) AND expiresAt > ${expr.v(N(Math.floor(nowMs / 1000)))}`;
    const written = await table.update('start-scheduled', pk, update, expr, condition);
    if (written.ok) return 'started';
    const item = written.old ?? (await table.get('start-scheduled', pk));
    if (item === undefined) return 'missing';
    const found = parseScheduledJobItem(item);
    if (isExpiredState(found, nowMs)) return 'missing';
    if (found.state === 'cancelled') return 'cancelled';
    if (found.generation !== request.generation) return 'superseded';
    if (found.state === 'started') return 'started';
    if (round > 0) {
      throw new IdempotencyStoreError(
        'the state of a job sent for later changed under two starts; record will be retried',
        {
          context: { pk },
        },
      );
    }
  }
}

/** Whether the state item of `source`/`id` is there and has not expired (one consistent GetItem). */
export async function scheduledJobExists(
  table: RecordTable,
  source: string,
  id: string,
  nowMs: number,
): Promise<boolean> {
  const item = await table.get('scheduled-state', scheduledJobKey(source, id));
  return item !== undefined && !isExpiredState(parseScheduledJobItem(item), nowMs);
}
