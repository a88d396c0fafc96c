/**
 * Starting a batch (fan-out and fan-in), shared by producers (`JobClient.startBatch`) and jobs
 * (`ctx.startBatch`, sent by the worker after the run succeeded): write the batch item, send the
 * children in SendMessageBatch requests of 10 with ids derived from the batch id, then the batch's
 * watchdog. Every step may run again (a re-run parent, a producer retrying with the same batch id):
 * the batch item is written only if absent, and the children and watchdog keep their ids, so a
 * second start makes no second batch and no second child (FIFO dedup ids and the children's
 * idempotency keys derive from them).
 *
 * The completion job's envelope is built here once and kept on the batch item: whoever sees the
 * batch done sends exactly that body, so all senders send one job (same `source` + `id`).
 */

import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import {
  type BatchDeadLetterPolicy,
  batchChildId,
  batchCompletionId,
  batchExpiresAt,
  batchKey,
  batchRecordToItem,
  batchSettingsProblems,
  batchWatchdogId,
  DEFAULT_BATCH_OPEN_LIMIT_SECONDS,
  MAX_COMPLETION_ENVELOPE_BYTES,
} from '../core/batch.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { createEnvelope, type EnvelopeLineage } from '../core/envelope.ts';
import { TransientError } from '../core/errors.ts';
import { jsonFormOf, jsonValueProblems } from '../core/json-value.ts';
import { isFifoQueueUrl } from '../core/queue-urls.ts';
import { JobClientError } from './job-client-error.ts';
import { describeValue, isPlainObject, unknownKeyProblems } from './option-keys.ts';
import type { BatchEntry, SendableJob, SendOptions } from './prepare.ts';

/**
 * One child of a batch: its data is checked against its job's type (`data` does not widen `Data`:
 * it is the job's). Build one with {@link batchChild}, or write it inline in a `startBatch` call.
 *
 * A plain `BatchChildEntry` (no type argument: `Data` is `unknown`) checks no data: TypeScript has
 * no type for "some job with that job's data", so an array annotated `BatchChildEntry[]` accepts
 * any data for any job. Build such arrays with {@link batchChild} (each entry checked where it is
 * made), or annotate one job's children as `BatchChildEntry<Data>`.
 */
export interface BatchChildEntry<Data = unknown> {
  readonly job: SendableJob<Data>;
  readonly data: NoInfer<Data>;
  /** `partitionKey` (FIFO queues: required unless the starter has one), `delaySeconds` (standard queues). */
  readonly options?: Pick<SendOptions, 'partitionKey' | 'delaySeconds'>;
}

/**
 * The entry a child must be: its own `job` with that job's data (the job's exact type, so a child
 * of a job whose data is a subtype of another child's job's data is not taken for the other). The
 * optional `hint` is never set: it is there to be read in the compile error.
 */
type ChildOfItsJob<Entry> = Entry extends { readonly job: infer Job }
  ? Job extends SendableJob<infer Data>
    ? {
        readonly hint?: "data must be its own job's data (in .map, build each child with batchChild(job, data): literals widen there)";
      } & BatchChildEntry<Data> & { readonly job: Job }
    : BatchChildEntry
  : BatchChildEntry;

/** Each child paired with its own job's data: distributes over a `.map` array's union of entries. */
type ChildrenOfTheirJobs<Children extends readonly unknown[]> = {
  readonly [K in keyof Children]: ChildOfItsJob<Children[K]>;
};

/** The keys of every member of a union (`keyof` of a union is only the keys all members share). */
type KeysOfEvery<T> = T extends unknown ? keyof T : never;
/** `Allowed[Key]` over a union, for the members that have `Key`. */
type PropertyOf<Allowed, Key> = Allowed extends unknown
  ? Key extends keyof Allowed
    ? Allowed[Key]
    : never
  : never;
/** `true` when `Given` (a literal's type) has a key, at any depth, that `Allowed` does not. */
type ExtraKeys<Given, Allowed> = unknown extends Allowed
  ? false
  : Given extends readonly (infer Item)[]
    ? Allowed extends readonly (infer AllowedItem)[]
      ? ExtraKeys<Item, AllowedItem>
      : false
    : Given extends object
      ? [Exclude<keyof Given, KeysOfEvery<Allowed>>] extends [never]
        ? { [Key in keyof Given]-?: ExtraKeys<Given[Key], PropertyOf<Allowed, Key>> }[keyof Given]
        : true
      : false;
/** `true` when an entry has a key its job's data, its options or the entry itself does not take. */
type EntryExtraKeys<Entry> = Entry extends { readonly job: SendableJob<infer Data> }
  ?
      | ([Exclude<keyof Entry, 'job' | 'data' | 'options'>] extends [never] ? false : true)
      | (Entry extends { readonly data: infer Given } ? ExtraKeys<Given, Data> : false)
      | (Entry extends { readonly options: infer Given }
          ? ExtraKeys<Given, NonNullable<BatchChildEntry['options']>>
          : false)
  : false;

/**
 * The type `startBatch`'s `children` must have, `Children` being what was written (inferred as
 * written, `const`): each child checked against its OWN job, also in an array made with `.map`
 * that mixes jobs (its element is a union of entries, each member checked on its own), with the
 * excess-key checks of an object literal kept (a key the job's data or the options do not have).
 * When something is wrong, the children are checked against the type they should have, so the
 * error names the child's job's data type.
 */
export type CheckedChildren<Children extends readonly unknown[]> =
  Children extends ChildrenOfTheirJobs<Children>
    ? true extends EntryExtraKeys<Children[number]>
      ? ChildrenOfTheirJobs<Children>
      : Children
    : ChildrenOfTheirJobs<Children>;

/** The completion job of a batch: runs once, after every child is counted. */
export interface BatchCompletionEntry<Data = unknown> {
  readonly job: SendableJob<Data>;
  /** Its data (ids only; at most 64 KiB of JSON with the envelope, kept on the batch item). */
  readonly data: NoInfer<Data>;
  /** `partitionKey` (FIFO queues: required unless the starter has one). */
  readonly options?: Pick<SendOptions, 'partitionKey'>;
}

/**
 * What a batch is made of: `JobClient.startBatch` and `ctx.startBatch` take it.
 *
 * @example
 * await client.startBatch({
 *   id: `invoices-${day}`, // producer only: the same id again starts nothing new
 *   children: users.map((userId) => ({ job: issueInvoice, data: { userId, day }, options: { partitionKey: userId } })),
 *   completion: { job: sendInvoiceSummary, data: { day }, options: { partitionKey: 'summary' } },
 *   onChildDeadLettered: 'complete-with-failures',
 *   openLimitSeconds: 3600,
 * });
 * // A job whose data has an enum or literal field: in .map, build each child with batchChild
 * // (TypeScript widens `'gold'` to string in a callback's object literal; batchChild keeps it):
 * //   children: users.map((userId) => batchChild(issueInvoice, { userId, day, tier: 'gold' })),
 *
 * `Children` is the children as written (inferred by `startBatch`); `CompletionData` the
 * completion job's data. Annotated without type arguments (`const spec: JobBatchSpec = ...`),
 * a spec checks no child's data against its job (TypeScript has no type for "each entry with its
 * own job's data" outside a call): write the spec inline in the `startBatch` call, or build its
 * entries with `batchChild` / `batchCompletion`, which check each entry where it is made.
 */
export interface BatchSpec<
  Children extends readonly unknown[] = readonly unknown[],
  CompletionData = unknown,
> {
  /**
   * `JobClient.startBatch` only: the batch id, 1–128 printable ASCII characters; a retry with the
   * same id starts nothing new. @default a random UUID (inside a job: derived from the job's identity)
   */
  readonly id?: string;
  /**
   * The children, 0 to 100,000 (an empty batch sends its completion job at once). Each child's
   * data is checked against its own job's type ({@link CheckedChildren}): in an array literal of
   * different jobs, and in an array made with `.map`, of one job or several. In a `.map` callback
   * TypeScript widens string literals to `string`, so a job whose data has an enum or literal
   * field refuses `{ job, data: { kind: 'a' } }` there: build each child with `batchChild(job, data)`.
   */
  readonly children: CheckedChildren<Children>;
  /** The completion job: runs once, after every child is counted (`ctx.batch` reads the batch). */
  readonly completion: BatchCompletionEntry<CompletionData>;
  /**
   * What a child dead-lettered by the worker does to the batch: `complete-with-failures` counts it
   * (the completion job lists it with its reason); `wait-for-redrive` does not: the batch completes
   * once the child is redriven and completes. @default 'complete-with-failures'
   */
  readonly onChildDeadLettered?: BatchDeadLetterPolicy;
  /**
   * Seconds after its start by which the batch should have completed, 1–43,200: then its watchdog
   * reports it (`BatchOverdue` metric, a WARN log naming the children not counted). @default 3600
   */
  readonly openLimitSeconds?: number;
}

/** What `startBatch` returns. */
export interface BatchStarted {
  readonly batchId: string;
  /** Children in the batch. */
  readonly total: number;
  /** Whether this call wrote the batch item (false: the batch existed, this was a retry). */
  readonly created: boolean;
}

/** Sends a batch's watchdog so that it is checked at `dueAtMs` (epoch ms). The seam Part 11's `runAt` replaces. */
export type WatchdogScheduler = (watchdog: {
  readonly queue: string;
  readonly body: string;
  readonly dueAtMs: number;
}) => Promise<void>;

/** The JobClient calls a start uses. */
export interface BatchSendPort {
  sendBatch(entries: BatchEntry[]): Promise<{
    readonly failed: readonly { readonly index: number; readonly code: string; readonly message: string }[];
  }>;
  sendEnvelope(queue: string, envelope: string, options?: { delaySeconds?: number }): Promise<unknown>;
  checkEnvelope(queue: string, envelope: string): { readonly queueUrl: string };
  /** Refuses entries {@link sendBatch} would refuse, sending nothing (`JobClient.checkBatch`). */
  checkBatch(entries: BatchEntry[]): Promise<void>;
}

/** The DynamoDB call a start makes (a `DynamoDBClient` satisfies it). */
export interface BatchTablePort {
  readonly tableName: string;
  /** Writes `item` unless its key holds one; returns undefined when written, else the item there. */
  putIfAbsent(item: Record<string, AttributeValue>): Promise<Record<string, AttributeValue> | undefined>;
}

/** Who starts the batch: a producer (its `source`), or a job (its lineage and defaults). */
export interface BatchStarter {
  readonly batchId: string;
  readonly source: string;
  /** Epoch ms. */
  readonly now: number;
  /** The starting job's lineage options for children and completion (parent link, trace), when a job starts it. */
  readonly lineageOf?: (
    index: number | 'completion',
  ) => Pick<SendOptions, 'parent' | 'correlationId' | 'traceparent' | 'tracestate' | 'awsTraceHeader'>;
  /** The partition key children and completion get when they give none (the starting job's). */
  readonly partitionKey?: string;
  /** The starting job's reference, kept on the batch item. */
  readonly parentJob?: string;
}

/**
 * Starts (or starts again) a batch. Order: batch item (PutItem if absent), children
 * (SendMessageBatch in requests of 10), the completion job when there are no children, the watchdog.
 *
 * @throws {JobClientError} `InvalidBatch` (senderFault) listing every problem of the spec, before
 *   anything is written; `InvalidEntries` when a child is refused (schema, queue, partition key).
 * @throws {TransientError} when some children were not sent: starting again with the same batch id
 *   sends them (and no second copy of the others).
 */
export async function startBatchWith(
  spec: BatchSpec,
  starter: BatchStarter,
  send: BatchSendPort,
  table: BatchTablePort,
  scheduleWatchdog: WatchdogScheduler,
): Promise<BatchStarted> {
  const problems = batchSpecProblems(spec);
  if (problems.length > 0) throw invalidBatch(problems);
  const { batchId } = starter;
  const policy = spec.onChildDeadLettered ?? 'complete-with-failures';
  const openLimitSeconds = spec.openLimitSeconds ?? DEFAULT_BATCH_OPEN_LIMIT_SECONDS;
  const completion = await completionEnvelope(spec.completion, starter);
  await checkCompletionEntry(spec.completion, starter, send);
  checked(() => send.checkEnvelope(spec.completion.job.queue, completion));
  const watchdog = watchdogEnvelope(spec.completion.job, starter);

  const entries: BatchEntry[] = spec.children.map((child, index) => {
    const partitionKey = child.options?.partitionKey ?? starter.partitionKey;
    return {
      job: child.job,
      data: child.data,
      options: {
        ...(child.options?.delaySeconds === undefined ? {} : { delaySeconds: child.options.delaySeconds }),
        ...(partitionKey === undefined ? {} : { partitionKey }),
        ...starter.lineageOf?.(index),
        id: batchChildId(batchId, index),
        batchId,
      },
    };
  });

  // Every child is checked before the batch item is written: a refused child must leave no open
  // batch behind (one that no child would ever count and no watchdog would ever report).
  await send.checkBatch(entries);
  const specDigest = batchSpecDigest(entries, spec.completion, policy, starter.partitionKey);
  const existing = await table.putIfAbsent(
    batchRecordToItem({
      pk: batchKey(batchId),
      recordType: 'batch',
      batchId,
      total: entries.length,
      succeeded: 0,
      deadLettered: 0,
      waiting: 0,
      policy,
      completionEnvelope: completion,
      completionQueue: spec.completion.job.queue,
      ...(starter.parentJob === undefined ? {} : { parentJob: starter.parentJob }),
      createdAtMs: starter.now,
      openLimitSeconds,
      state: 'open',
      expiresAt: batchExpiresAt(starter.now, openLimitSeconds),
      specDigest,
    }),
  );
  const created = existing === undefined;
  // A batch started again must be the same batch: its children counted against the first total.
  const existingTotal = existing?.total?.N === undefined ? undefined : Number(existing.total.N);
  if (existingTotal !== undefined && existingTotal !== entries.length) {
    throw invalidBatch([
      `batch ${batchId} exists with ${existingTotal} children and this start has ${entries.length}: a batch's children cannot change once started (start a new batch, with another id or from another job)`,
    ]);
  }
  // The same count is not the same batch: children or a completion job with other data, sent
  // under the first start's child ids, would each be dead-lettered as a PayloadMismatchError.
  // Items written before the digest existed have none: only their count is compared.
  const existingDigest = existing?.specDigest?.S;
  if (existingDigest !== undefined && existingDigest !== specDigest) {
    throw invalidBatch([
      `batch ${batchId} exists with other children or another completion job (same count, ${entries.length}, but other types, data, options or onChildDeadLettered): a batch id must name the same children and completion every time it is started; nothing was sent (start a new batch under another id)`,
    ]);
  }

  if (entries.length === 0) {
    // Nothing to count: the batch is done now. Sent again on a re-run, absorbed as a duplicate.
    await send.sendEnvelope(spec.completion.job.queue, completion);
  } else {
    // JobClient splits per queue into SendMessageBatch requests of at most 10 (and 1 MiB).
    const result = await send.sendBatch(entries);
    if (result.failed.length > 0) {
      const list = result.failed
        .slice(0, 10)
        .map((f) => `child ${f.index} (${f.code}: ${f.message})`)
        .join('; ');
      throw new TransientError(
        `batch ${batchId}: ${result.failed.length} of ${entries.length} children not sent: ${list}; starting the batch again sends them`,
        { context: { batchId, failed: result.failed.length } },
      );
    }
  }
  await scheduleWatchdog({
    queue: spec.completion.job.queue,
    body: watchdog,
    dueAtMs: starter.now + openLimitSeconds * 1000,
  });
  return { batchId, total: entries.length, created };
}

/**
 * SHA-256 (hex) of what makes a batch the batch it is: each child's type, queue, data and
 * effective options, the completion job's type, queue, data and partition key, and the dead-letter
 * policy, with object keys sorted (a retry building the same data in another key order matches).
 * Kept on the batch item (`specDigest`): a start under an existing id must match it.
 */
function batchSpecDigest(
  entries: readonly BatchEntry[],
  completion: BatchCompletionEntry,
  policy: BatchDeadLetterPolicy,
  starterPartitionKey: string | undefined,
): string {
  const hash = createHash('sha256');
  const add = (part: unknown): void => {
    hash.update(canonicalJson(part));
    hash.update('\n');
  };
  add(['policy', policy]);
  add([
    'completion',
    completion.job.type,
    completion.job.queue,
    completion.data,
    completion.options?.partitionKey ?? starterPartitionKey ?? null,
  ]);
  for (const entry of entries) {
    add([
      'child',
      entry.job.type,
      entry.job.queue,
      entry.data,
      entry.options?.partitionKey ?? null,
      entry.options?.delaySeconds ?? null,
    ]);
  }
  return hash.digest('hex');
}

/**
 * The default watchdog scheduler until one-time jobs (`runAt`) are available: the watchdog is sent
 * with an SQS delay of up to 900 s (standard queues; FIFO queues take no per-message delay), and a
 * worker that receives it before it is due puts it back with a visibility timeout until then.
 */
export function delayedWatchdogScheduler(send: BatchSendPort, now: () => number): WatchdogScheduler {
  return async ({ queue, body, dueAtMs }) => {
    const { queueUrl } = send.checkEnvelope(queue, body);
    const delaySeconds = Math.min(900, Math.max(0, Math.ceil((dueAtMs - now()) / 1000)));
    await send.sendEnvelope(queue, body, isFifoQueueUrl(queueUrl) ? {} : { delaySeconds });
  };
}

/** Every problem of a batch spec (its shape; entries are checked by the client when sent). */
/**
 * What is wrong with a batch spec's shape (fields, policy, open limit, jobs made by defineJob),
 * before any child's data is checked; empty when nothing. Also used by the test kit's `runJob`.
 */
export function batchSpecProblems(spec: BatchSpec): string[] {
  if (typeof spec !== 'object' || spec === null) {
    return ['startBatch takes { children: [{ job, data, options? }], completion: { job, data }, ... }'];
  }
  const known = new Set(['id', 'children', 'completion', 'onChildDeadLettered', 'openLimitSeconds']);
  const problems = Object.keys(spec)
    .filter((key) => !known.has(key))
    .map((key) => `unknown field ${key} (known: ${[...known].join(', ')})`);
  problems.push(...batchSettingsProblems(spec));
  const completion = spec.completion as Partial<BatchCompletionEntry> | undefined;
  if (typeof completion !== 'object' || completion === null || !isJob(completion.job)) {
    problems.push('completion must be { job, data, options? } with a job made by defineJob');
  } else {
    problems.push(...entryOptionProblems(completion.options, COMPLETION_OPTION_KEYS, 'completion.options'));
  }
  if (Array.isArray(spec.children)) {
    for (const [index, child] of spec.children.entries()) {
      const entry = child as Partial<BatchChildEntry> | undefined;
      if (!isJob(entry?.job)) problems.push(`children[${index}].job must be a job made by defineJob`);
      problems.push(...entryOptionProblems(entry?.options, CHILD_OPTION_KEYS, `children[${index}].options`));
      if (problems.length > 20) break;
    }
  }
  return problems;
}

/** The options a batch child takes: its id derives from the batch id, and it is sent when the batch starts. */
const CHILD_OPTION_KEYS = ['partitionKey', 'delaySeconds'] as const;
const COMPLETION_OPTION_KEYS = ['partitionKey'] as const;
/** Send options a batch entry does not take, and what to write instead. */
const ENTRY_OPTION_HINTS: Readonly<Record<string, string>> = {
  runat:
    'delaySeconds (standard queues, up to 900 s): a batch child is sent when the batch starts, never for later',
  delayms: 'delaySeconds (standard queues, up to 900 s)',
  messagegroupid: 'partitionKey (it becomes the MessageGroupId)',
};

/**
 * Unknown keys of a batch entry's `options` (a child's `runAt` or `id` would otherwise be
 * ignored: the child sent at once, under the id derived from the batch id).
 */
function entryOptionProblems(options: unknown, known: readonly string[], where: string): string[] {
  if (options === undefined) return [];
  if (!isPlainObject(options)) return [`${where} must be an object, got ${describeValue(options)}`];
  return unknownKeyProblems(options, known, where, ENTRY_OPTION_HINTS).map((problem) =>
    problem.startsWith(`${where}.id `) ? `${problem}; a batch entry's id derives from the batch id` : problem,
  );
}

function isJob(job: unknown): job is SendableJob {
  const j = job as Partial<SendableJob> | undefined;
  return typeof j === 'object' && j !== null && typeof j.type === 'string' && typeof j.queue === 'string';
}

function invalidBatch(problems: readonly string[]): JobClientError {
  return new JobClientError(`startBatch refused: ${problems.join('; ')}`, {
    code: 'InvalidBatch',
    senderFault: true,
  });
}

/** Runs a check that throws JobClientError; rethrows as an InvalidBatch naming the completion job. */
function checked<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw invalidBatch([`completion: ${message}`]);
  }
}

/**
 * Checks the completion job as a child is checked (queue known, FIFO partition key, ...), so its
 * problems name the option the user writes (`completion.options.partitionKey`), not the envelope
 * field (`partitionkey`) that checking its ready envelope would name.
 */
async function checkCompletionEntry(
  entry: BatchCompletionEntry,
  starter: BatchStarter,
  send: BatchSendPort,
): Promise<void> {
  const partitionKey = entry.options?.partitionKey ?? starter.partitionKey;
  try {
    await send.checkBatch([
      {
        job: entry.job,
        data: entry.data,
        options: {
          ...(partitionKey === undefined ? {} : { partitionKey }),
          ...starter.lineageOf?.('completion'),
          id: batchCompletionId(starter.batchId),
        },
      },
    ]);
  } catch (error) {
    if (!(error instanceof JobClientError) || error.problems.length === 0) throw error;
    throw invalidBatch(
      error.problems.map((problem) =>
        problem.message.startsWith('options.')
          ? `completion.${problem.message}`
          : `completion: ${problem.message}`,
      ),
    );
  }
}

/** The completion job's envelope (SQS body), its data checked against its schema. */
async function completionEnvelope(entry: BatchCompletionEntry, starter: BatchStarter): Promise<string> {
  const jsonProblems = jsonValueProblems(entry.data);
  if (entry.data === undefined || jsonProblems.length > 0) {
    const list = jsonProblems.map((p) => `${p.path}: ${p.message}`).join('; ');
    throw invalidBatch([`completion.data must be a JSON value${list ? ` (${list})` : ''}`]);
  }
  const data = jsonFormOf(entry.data);
  const validated = await (entry.job.schema as StandardSchemaV1)['~standard'].validate(data);
  if (validated.issues) {
    const list = validated.issues.map((issue) => issue.message).join('; ');
    throw invalidBatch([`completion.data fails the schema of ${entry.job.type}: ${list}`]);
  }
  const partitionKey = entry.options?.partitionKey ?? starter.partitionKey;
  const lineage = starter.lineageOf?.('completion');
  let body: string;
  try {
    body = JSON.stringify(
      createEnvelope({
        type: entry.job.type,
        source: starter.source,
        id: batchCompletionId(starter.batchId),
        data,
        time: new Date(starter.now),
        ...(partitionKey === undefined ? {} : { partitionKey }),
        lineage: envelopeLineage(lineage),
        batch: { completesbatch: starter.batchId },
      }),
    );
  } catch (error) {
    throw invalidBatch([`completion: ${(error as Error).message}`]);
  }
  if (Buffer.byteLength(body, 'utf8') > MAX_COMPLETION_ENVELOPE_BYTES) {
    throw invalidBatch([
      `completion: the completion job's envelope is over ${MAX_COMPLETION_ENVELOPE_BYTES} bytes; its data should carry ids`,
    ]);
  }
  return body;
}

/** The watchdog: an envelope of the completion job's type, marked `batchwatch`, in a FIFO group of its own. */
function watchdogEnvelope(job: SendableJob, starter: BatchStarter): string {
  const group = `batchwatch-${createHash('sha256').update(starter.batchId).digest('hex').slice(0, 32)}`;
  return JSON.stringify(
    createEnvelope({
      type: job.type,
      source: starter.source,
      id: batchWatchdogId(starter.batchId),
      data: null,
      time: new Date(starter.now),
      partitionKey: group,
      batch: { batchwatch: starter.batchId },
    }),
  );
}

/** Send options' lineage as envelope attributes. */
function envelopeLineage(
  options: Pick<SendOptions, 'parent' | 'correlationId' | 'traceparent' | 'tracestate'> | undefined,
): EnvelopeLineage | undefined {
  if (options === undefined) return undefined;
  return {
    ...(options.correlationId === undefined ? {} : { correlationid: options.correlationId }),
    ...(options.parent === undefined
      ? {}
      : {
          causationid: options.parent.id,
          rootid: options.parent.rootId,
          ...(options.parent.job === undefined ? {} : { parentjob: options.parent.job }),
        }),
    ...(options.traceparent === undefined ? {} : { traceparent: options.traceparent }),
    ...(options.tracestate === undefined ? {} : { tracestate: options.tracestate }),
  };
}
