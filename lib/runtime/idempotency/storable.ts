/**
 * How a result or `once` step value is written: whole as JSON text, or (over the size cap, or
 * without a JSON form) as a marker with its size and the reason it was left out.
 */
import {
  DYNAMODB_MAX_ITEM_BYTES,
  estimateItemBytes,
  type JobRecord,
  jobRecordToItem,
  type OmittedReason,
  serialize,
} from './record.ts';

/** A value as it is written: `json` when `stored`, else `reason`; `bytes` of its JSON text (0 without one). */
export interface Storable {
  readonly stored: boolean;
  readonly json: string | undefined;
  readonly bytes: number;
  readonly reason: OmittedReason | undefined;
}

/**
 * How `value` is written under the cap `maxResultBytes` (UTF-8 bytes of its JSON text). With the
 * job `record` it goes into, the whole item is also checked against DynamoDB's 400 KB item limit
 * (Constraints.html#limits-items, names and values).
 */
export function storable(value: unknown, record: JobRecord | undefined, maxResultBytes: number): Storable {
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
