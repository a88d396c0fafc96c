/**
 * Reading items the store gets back (from `ALL_OLD` on a failed condition, or re-read): did this
 * run's own earlier write land, which step record won, what value does a stored step give.
 * Every conditional write recognises its own earlier success: an SDK retry after a lost
 * response is not a conflict with someone else. Each write carries a random token of its own
 * (a job record's `leaseToken`, new per acquisition; a step record's `writeId`), and the item
 * holding that token is proof the write landed.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { parseJsonText } from '../../core/json-parse.ts';
import { IdempotencyRecordError, StepValueNotStoredError } from './errors.ts';
import {
  type JobRecord,
  type JobRecordStatus,
  parseJobRecord,
  parseStepRecord,
  type StepRecord,
} from './record.ts';

/** The value of JSON text this store wrote itself (the completed-key cache); undefined for none. */
export function parseJson(json: string | undefined): unknown {
  return json === undefined ? undefined : parseJsonText(json);
}

/**
 * The value of JSON text read from record `pk`'s `attribute`; undefined for none.
 * @throws {IdempotencyRecordError} (permanent) when it does not parse: every retry would read it again.
 */
export function parseStoredJson(json: string | undefined, pk: string, attribute: string): unknown {
  try {
    return parseJson(json);
  } catch (error) {
    throw new IdempotencyRecordError(
      `idempotency record ${pk} is malformed: ${attribute} is not JSON text (${error instanceof Error ? error.message : String(error)})`,
      { cause: error, context: { pk, attribute } },
    );
  }
}

/**
 * Whether `current` (the record as it is now) holds the write of `record`'s lease that leaves it
 * in status `target`: same lease token (random per acquisition, so only this run writes it) and
 * that status. After a failed condition, true means the write landed earlier and this failure is
 * the SDK's retry of it (`IN_PROGRESS`: an acquisition or takeover; `COMPLETED`, `RELEASED`,
 * `FAILED`: the end of the lease).
 */
export function isOwnWrite(current: JobRecord, record: JobRecord, target: JobRecordStatus): boolean {
  return current.leaseToken === record.leaseToken && current.status === target;
}

/**
 * After a fenced write of `record`'s lease failed its condition: whether the current item
 * already holds this lease's own write ({@link isOwnWrite}). False means another run took the
 * lease over (`fenced`).
 * @throws {IdempotencyRecordError} when the item is not a job record or is malformed.
 */
export function holdsOwnWrite(
  item: Record<string, AttributeValue>,
  record: JobRecord,
  target: JobRecordStatus,
): boolean {
  return isOwnWrite(parseJobRecord(item), record, target);
}

/**
 * After a step write failed its condition: `value` (the run's own, not a JSON copy) when the
 * record there is this very write (same `writeId`: the SDK retried a write whose response was
 * lost); else another run recorded the step first and its value wins when it was stored.
 * @throws {IdempotencyRecordError} when the item is not a step record or is malformed.
 */
export function winningStepValue<T>(
  winnerItem: Record<string, AttributeValue>,
  own: StepRecord,
  value: T,
): T {
  const winner = parseStepRecord(winnerItem);
  if (own.writeId !== undefined && winner.writeId === own.writeId) return value;
  return winner.valueStored ? (parseStoredJson(winner.value, winner.pk, 'value') as T) : value;
}

/**
 * The stored value of a completed step.
 * @throws {StepValueNotStoredError} when it was not stored: over the cap, or not a JSON value that
 *   reads back the same (the message then carries the recorded `valueOmittedDetail`).
 */
export function stepValue(step: StepRecord, maxResultBytes: number): unknown {
  if (step.valueStored) return parseStoredJson(step.value, step.pk, 'value');
  const name = JSON.stringify(step.stepName);
  const message =
    step.valueOmittedReason === 'not-json'
      ? `step ${name} of ${step.pk} completed on an earlier run but its value was not stored (${step.valueOmittedDetail ?? 'it has no JSON form that reads back the same'}), so this retry cannot return it and does not run the step again: make the step return a JSON value (an id, an ISO string, a plain object), then redrive; the step stays recorded as done, so delete its record first only if running it again is safe`
      : `step ${name} of ${step.pk} completed on an earlier run but its value (${step.valueBytes} bytes, ${step.valueOmittedReason ?? 'not stored'}) was not stored, so this retry cannot return it; keep step values small`;
  throw new StepValueNotStoredError(message, {
    context: {
      pk: step.pk,
      stepName: step.stepName,
      valueBytes: step.valueBytes,
      maxResultBytes,
      reason: step.valueOmittedReason,
      detail: step.valueOmittedDetail,
    },
  });
}
