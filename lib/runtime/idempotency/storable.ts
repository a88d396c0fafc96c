/**
 * How a result or `once` step value is written: whole as JSON text, or (over the size cap, or
 * without a JSON form that reads back the same value) as a marker with its size and the reason it
 * was left out.
 */
import { type StoredValueSubject, unfaithfulJsonReason } from './faithful-json.ts';
import {
  DYNAMODB_MAX_ITEM_BYTES,
  estimateItemBytes,
  type JobRecord,
  jobRecordToItem,
  type OmittedReason,
  serialize,
} from './record.ts';

/**
 * A value as it is written: `json` when `stored`, else `reason` (and for `not-json` the `detail`
 * sentence naming what and where); `bytes` of its JSON text (0 without one).
 */
export interface Storable {
  readonly stored: boolean;
  readonly json: string | undefined;
  readonly bytes: number;
  readonly reason: OmittedReason | undefined;
  readonly detail?: string | undefined;
}

/**
 * How `value` is written under the cap `maxResultBytes` (UTF-8 bytes of its JSON text). A value
 * whose JSON text would not read back the same (a `Date`, a `Map`, `NaN`, `undefined` in an
 * array...: faithful-json.ts) is never stored as if it were: it gets the marker `not-json` with the
 * sentence of {@link unfaithfulJsonReason} about `subject` as `detail`. With the job `record` it
 * goes into, the whole item is also checked against DynamoDB's 400 KB item limit
 * (Constraints.html#limits-items, names and values).
 */
export function storable(
  value: unknown,
  record: JobRecord | undefined,
  maxResultBytes: number,
  subject: StoredValueSubject,
): Storable {
  const detail = unfaithfulJsonReason(value, subject);
  if (detail !== undefined) {
    const text = serialize(value);
    return { stored: false, json: undefined, bytes: text.ok ? text.bytes : 0, reason: 'not-json', detail };
  }
  const serialized = serialize(value);
  if (!serialized.ok) return { stored: false, json: undefined, bytes: 0, reason: 'not-json' };
  if (serialized.bytes > maxResultBytes) {
    return { stored: false, json: undefined, bytes: serialized.bytes, reason: 'over-size-cap' };
  }
  // Belt and braces: the cap leaves a reserve for the other attributes; check the whole item.
  if (record && serialized.json !== undefined) {
    const size = estimateItemBytes(
      jobRecordToItem({
        ...record,
        result: serialized.json,
        resultStored: true,
        resultBytes: serialized.bytes,
      }),
    );
    if (size > DYNAMODB_MAX_ITEM_BYTES) {
      return { stored: false, json: undefined, bytes: serialized.bytes, reason: 'over-size-cap' };
    }
  }
  return { stored: true, json: serialized.json, bytes: serialized.bytes, reason: undefined };
}
