/**
 * Job lookups of the console: a job's idempotency record and its `once` step records, read from
 * the idempotency table with strongly consistent GetItem (API_GetItem.html, `ConsistentRead`).
 * Keys are built by the runtime's own encoders (lib/runtime/idempotency/keys.ts), so the console
 * finds exactly the record a worker wrote: `jobRecordKey(type, key)`, `stepRecordKey(pk, step)`,
 * and `defaultJobKey(source, id)` when the job is named by its envelope.
 *
 * Step records cannot be listed by key (the table has a partition key only): on emulators they
 * are found with a Scan on the `pk` prefix; on AWS, where a Scan reads the whole table, the caller
 * names the steps.
 */
import { type AttributeValue, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { ReadJobItem } from '../ops/job-chain.ts';
import { defaultJobKey, jobRecordKey, stepRecordKey } from '../runtime/idempotency/keys.ts';
import { parseJobRecord } from '../runtime/idempotency/record.ts';
import type { ConsoleDynamo } from './setup.ts';

/** A plain JSON value of an item attribute. */
export type PlainValue = string | number | boolean | null | PlainValue[] | { [key: string]: PlainValue };

/** An item with its attributes as plain values (numbers as numbers, sets as arrays). */
export type PlainItem = Record<string, PlainValue>;

/** One attribute value as a plain value. Binary values are shown by their size only. */
export function plainValue(value: AttributeValue): PlainValue {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) {
    const n = Number(value.N);
    return Number.isSafeInteger(n) || !Number.isInteger(n) ? n : value.N;
  }
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  if (value.SS !== undefined) return value.SS;
  if (value.NS !== undefined) return value.NS.map(Number);
  if (value.L !== undefined) return value.L.map(plainValue);
  if (value.M !== undefined) return plainItem(value.M);
  if (value.B !== undefined) return `(${value.B.length} bytes of binary)`;
  if (value.BS !== undefined) return `(${value.BS.length} binary values)`;
  return null;
}

/** An item's attributes as plain values. */
export function plainItem(item: Record<string, AttributeValue>): PlainItem {
  return Object.fromEntries(Object.entries(item).map(([name, value]) => [name, plainValue(value)]));
}

/** Fields of a job record that are read, not stored (docs/contracts.md, "Job record": "Read as"). */
const DERIVED_JOB_FIELDS = [
  'jobType',
  'createdAtMs',
  'updatedAtMs',
  'completedAtMs',
  'resultStored',
  'resultBytes',
] as const;

/**
 * A job record as the page shows it: its attributes, plus the fields the runtime derives when
 * reading it (the type from `pk`, the times from `acquiredAtMs`/`endedAtMs`, ...), which the
 * record format leaves out to keep writes small. An item the runtime cannot read as a job record
 * is shown as stored.
 */
export function jobRecordView(item: Record<string, AttributeValue>): PlainItem {
  const plain = plainItem(item);
  let record: ReturnType<typeof parseJobRecord>;
  try {
    record = parseJobRecord(item);
  } catch {
    return plain;
  }
  for (const field of DERIVED_JOB_FIELDS) {
    const value = record[field];
    if (plain[field] === undefined && value !== undefined) plain[field] = value;
  }
  return plain;
}

/** How the page names a job. */
export interface JobLookup {
  /** The job type (envelope `type`). */
  readonly type: string;
  /** The job key (`ctx` key; by default `defaultJobKey(source, id)`). */
  readonly key?: string;
  /** Envelope `source` and `id`: the default key. */
  readonly source?: string;
  readonly id?: string;
  /** `once` step names to read (needed on AWS, where steps are not scanned for). */
  readonly steps?: readonly string[];
}

/** What a lookup found in the idempotency table. */
export interface JobRecordView {
  /** The table that holds the record, or the first one read when none does. */
  readonly table: string;
  readonly pk: string;
  readonly key: string;
  /** The job record, or null when no table has one. */
  readonly record: PlainItem | null;
  /** Step records found (`pk`, step name, attributes). */
  readonly steps: readonly { readonly name: string; readonly pk: string; readonly record: PlainItem }[];
  /** Step names asked for that have no record. */
  readonly stepsMissing: readonly string[];
  /** How the steps were looked for. */
  readonly stepsNote: string;
}

/**
 * The key of a lookup: `key` as given, else `defaultJobKey(source, id)`.
 * @throws {RangeError} when neither a key nor an id is given.
 */
export function lookupKey(lookup: JobLookup): string {
  if (lookup.key !== undefined && lookup.key !== '') return lookup.key;
  if (lookup.id !== undefined && lookup.id !== '') return defaultJobKey(lookup.source ?? '', lookup.id);
  throw new RangeError('give the job key, or the envelope source and id');
}

async function getItem(
  dynamodb: ConsoleDynamo,
  table: string,
  pk: string,
): Promise<Record<string, AttributeValue> | undefined> {
  const out = (await dynamodb.send(
    new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }),
  )) as { Item?: Record<string, AttributeValue> };
  return out.Item;
}

/** The chain walk's reader (lib/ops/job-chain.ts) over the console's DynamoDB client. */
export function readItemOf(dynamodb: ConsoleDynamo): ReadJobItem {
  return (table, pk) => getItem(dynamodb, table, pk);
}

/** Most Scan pages read when looking for step records on an emulator. */
const MAX_SCAN_PAGES = 20;

async function scanSteps(
  dynamodb: ConsoleDynamo,
  table: string,
  prefix: string,
): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  for (let page = 0; page < MAX_SCAN_PAGES; page++) {
    const out = (await dynamodb.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'begins_with(#pk, :prefix)',
        ExpressionAttributeNames: { '#pk': 'pk' },
        ExpressionAttributeValues: { ':prefix': { S: prefix } },
        ConsistentRead: true,
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    )) as { Items?: Record<string, AttributeValue>[]; LastEvaluatedKey?: Record<string, AttributeValue> };
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
    if (start === undefined) break;
  }
  return items;
}

/**
 * Reads a job's record (first table that has it) and its step records.
 * @throws {RangeError} for a lookup without type, or without key and id.
 * @throws the SDK's error when DynamoDB cannot be read.
 */
export async function lookupJobRecord(
  dynamodb: ConsoleDynamo,
  tables: readonly string[],
  lookup: JobLookup,
  options: { readonly scanSteps: boolean },
): Promise<JobRecordView> {
  if (lookup.type === '') throw new RangeError('give the job type');
  if (tables.length === 0) throw new RangeError('no idempotency table is known (pass --idempotency-table)');
  const key = lookupKey(lookup);
  const pk = jobRecordKey(lookup.type, key);
  let table = tables[0] as string;
  let record: Record<string, AttributeValue> | undefined;
  for (const name of tables) {
    record = await getItem(dynamodb, name, pk);
    if (record !== undefined) {
      table = name;
      break;
    }
  }
  const steps: { name: string; pk: string; record: PlainItem }[] = [];
  const missing: string[] = [];
  const asked = [...new Set((lookup.steps ?? []).map((s) => s.trim()).filter((s) => s !== ''))];
  for (const name of asked) {
    const stepPk = stepRecordKey(pk, name);
    const item = await getItem(dynamodb, table, stepPk);
    if (item === undefined) missing.push(name);
    else steps.push({ name, pk: stepPk, record: plainItem(item) });
  }
  let stepsNote: string;
  if (options.scanSteps) {
    const prefix = `${pk}#step#`;
    for (const item of await scanSteps(dynamodb, table, prefix)) {
      const stepPk = item.pk?.S ?? '';
      if (steps.some((s) => s.pk === stepPk)) continue;
      const plain = plainItem(item);
      steps.push({
        name: typeof plain.stepName === 'string' ? plain.stepName : stepPk.slice(prefix.length),
        pk: stepPk,
        record: plain,
      });
    }
    stepsNote = `every step record under ${JSON.stringify(prefix)} (Scan: fine on an emulator)`;
  } else {
    stepsNote =
      asked.length === 0
        ? 'on AWS step records are not scanned for (a Scan reads the whole table): name the steps to read them'
        : 'the steps named (GetItem each)';
  }
  return {
    table,
    pk,
    key,
    record: record === undefined ? null : jobRecordView(record),
    steps,
    stepsMissing: missing,
    stepsNote,
  };
}
