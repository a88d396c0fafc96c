/**
 * A job's story: the whole chain it belongs to, from the first job a producer sent to its last
 * descendant, with each job's status, attempts, times, outcome and where it is now. One module for
 * the `sqs-jobs job` command and the console's job page.
 *
 * The chain is walked through the idempotency records (docs/contracts.md, "Idempotency table",
 * links): a child's record names its parent (`parentJob`, the parent's record key, from the
 * envelope's `parentjob`), a completed parent's record names its children (`childJobs`). From the
 * job asked for, the walk goes up parent by parent to the root, then down child by child. Every
 * read is a strongly consistent GetItem of one key; nothing is scanned.
 *
 * Where a job is now: its record says done (COMPLETED), dead-lettered (FAILED), waiting for a
 * retry (RELEASED) or running (IN_PROGRESS with a live lease). A job without a record has not
 * started (or its record expired). Dead letters are looked up in the DLQs given, read with the
 * hold-and-release reader (lib/ops/dlq-reader.ts: every message is held while read and made
 * visible again, nothing is consumed), and only when some job of the chain is not done. What is
 * in a main queue cannot be seen without receiving it: such a job is "queued or in flight".
 *
 * Why one file: the walk up and down a chain and the state of each job it meets are one algorithm
 * over the same reads.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type BatchRecord, parseBatchRecord } from '../core/batch.ts';
import {
  decodeDefaultJobKey,
  decodeRecordKey,
  defaultJobKey,
  jobRecordKey,
} from '../runtime/idempotency/keys.ts';
import type { DeadLetterMessage } from './dead-letter-message.ts';

/** Reads one item of a table by `pk` (strongly consistent GetItem); undefined when there is none. */
export type ReadJobItem = (table: string, pk: string) => Promise<Record<string, AttributeValue> | undefined>;

/** One DLQ as read for a walk. */
export interface ChainDeadLetterQueue {
  /** The DLQ's name (or id) as shown. */
  readonly name: string;
  /** The messages read (none consumed). */
  readonly messages: readonly DeadLetterMessage[];
  /** Messages the queue reported that were not read (FIFO groups locked behind their first). */
  readonly notRead: number;
  readonly fifo: boolean;
  /** Why it could not be read, when it could not. */
  readonly error?: string;
}

/** How a job is named: its type and its job key (`defaultJobKey(source, id)` by default). */
export interface JobName {
  readonly type: string;
  readonly key: string;
}

/** Options of {@link walkJobChain}. */
export interface WalkJobChainOptions {
  /** The idempotency tables to read, in order (the first that holds a record is used). */
  readonly tables: readonly string[];
  readonly readItem: ReadJobItem;
  /** The job asked for. */
  readonly start: JobName;
  /**
   * Reads the DLQs without consuming (the hold-and-release reader); called at most once, only
   * when a job of the chain is not done. Undefined: DLQs are not read.
   */
  readonly deadLetters?: () => Promise<readonly ChainDeadLetterQueue[]>;
  /** Most jobs read. @default 200 */
  readonly maxJobs?: number;
  /** Clock, epoch ms (live leases, expired records). @default Date.now */
  readonly now?: () => number;
}

/** Where a job is now. */
export type ChainJobState =
  /** COMPLETED. */
  | 'done'
  /** Found in a DLQ (with its cause), or its record says the worker dead-lettered it. */
  | 'dead-lettered'
  /** A run holds a live lease now. */
  | 'running'
  /** The last run failed transiently: the message waits in its queue for the next attempt. */
  | 'retrying'
  /** No record (not started yet) or a lease that ran out: in its queue, queued or in flight. */
  | 'queued-or-in-flight';

/** A job's dead letter, from the DLQ message (body and evidence attributes). */
export interface ChainDeadLetter {
  readonly dlq: string;
  readonly messageId: string;
  readonly reason: string;
  readonly errorName: string;
  readonly errorMessage: string | undefined;
  readonly attempts: number | undefined;
  readonly lastFailureAt: string | undefined;
  /** When it entered the DLQ, ISO 8601. */
  readonly sentAt: string | undefined;
}

/** One job of a chain. */
export interface ChainJob {
  /** Its idempotency record key `<type>#<key>`. */
  readonly pk: string;
  readonly type: string;
  /** The job key; undefined when the record key holds only its hash (a very long key). */
  readonly key: string | undefined;
  /** Envelope `source` and `id`, when the key is the default key. */
  readonly source: string | undefined;
  readonly id: string | undefined;
  /** 0 for the root. */
  readonly depth: number;
  /** Record key of its parent, when known. */
  readonly parentPk: string | undefined;
  /** Record keys of its children, as linked. */
  readonly childPks: readonly string[];
  /** Whether this is the job asked for. */
  readonly asked: boolean;
  readonly state: ChainJobState;
  /** The record's `status`, or undefined without a record. */
  readonly status: string | undefined;
  /** Runs of the current cycle (the record's `attempt`), when there is a record. */
  readonly attempts: number | undefined;
  /** Redrives so far, when above 0. */
  readonly redrives: number | undefined;
  /** ISO 8601 times from the record: first run of this record, latest run, end of the latest run. */
  readonly firstRunAt: string | undefined;
  readonly lastRunAt: string | undefined;
  readonly endedAt: string | undefined;
  /** What it gave: the stored result (JSON text, cut), the last error, or a marker. */
  readonly outcome: string | undefined;
  /** Where it is now, in words. */
  readonly where: string;
  readonly deadLetter: ChainDeadLetter | undefined;
  /** The table its record is in. */
  readonly table: string | undefined;
}

/** A batch a job of the chain started (docs/architecture.md, "Batches"): its progress. */
export interface ChainBatch {
  readonly batchId: string;
  /** Record key of the job that started it. */
  readonly startedBy: string;
  readonly total: number;
  readonly succeeded: number;
  /** Dead-lettered and counted (`complete-with-failures`). */
  readonly deadLettered: number;
  /** Dead-lettered, waiting for their redrive (`wait-for-redrive`). */
  readonly waitingForRedrive: number;
  /** Children not counted yet (queued, running, retrying, or lost). */
  readonly notCounted: number;
  readonly policy: string;
  /** `open` or `completed` (its completion job completed). */
  readonly state: string;
  /** The completion job's type. */
  readonly completionJob: string | undefined;
  readonly createdAt: string;
  readonly openLimitSeconds: number;
  /** Open past its limit (the watchdog reports `BatchOverdue`). */
  readonly overdue: boolean;
}

/** What {@link walkJobChain} found. */
export interface JobChain {
  /** Record key of the job asked for. */
  readonly asked: string;
  /** Record key of the top of the chain reached. */
  readonly root: string;
  /** The jobs, root first, each followed by its descendants (depth-first). */
  readonly jobs: readonly ChainJob[];
  /** The batches jobs of the chain started (linked from their records' `childJobs`). */
  readonly batches: readonly ChainBatch[];
  /** The DLQs read, or empty when none was (all done, or none given). */
  readonly deadLetterQueues: readonly { name: string; read: number; notRead: number; error?: string }[];
  /** What could not be known, and why. */
  readonly notes: readonly string[];
}

/** Longest outcome text kept, in characters. */
const OUTCOME_CHARS = 300;
/** Most parents followed up. */
const MAX_DEPTH = 64;

interface Node {
  readonly pk: string;
  readonly type: string;
  readonly key: string | undefined;
  item: Record<string, AttributeValue> | undefined;
  table: string | undefined;
  parentPk: string | undefined;
  childPks: string[];
  deadLetter: (DeadLetterMessage & { dlq: string }) | undefined;
}

/** The type and key of a job record key, as far as it can be read. */
export function jobOfRecordKey(pk: string): { type: string; key: string | undefined } {
  try {
    const decoded = decodeRecordKey(pk);
    if (decoded.kind !== 'job') return { type: pk, key: undefined };
    const type = 'text' in decoded.jobType ? decoded.jobType.text : pk.slice(0, pk.indexOf('#'));
    return { type, key: 'text' in decoded.key ? decoded.key.text : undefined };
  } catch {
    return { type: pk, key: undefined };
  }
}

/**
 * A job reference in words: `type id <id> (source <source>)` for a default key, else
 * `type key <key>` (newlines shown as ⏎).
 */
export function describeJobRef(pk: string): string {
  const { type, key } = jobOfRecordKey(pk);
  if (key === undefined) return `${type} (key hashed in ${pk})`;
  const envelope = decodeDefaultJobKey(key);
  if (envelope !== undefined) return `${type} id ${envelope.id} (source ${envelope.source})`;
  return `${type} key ${key.replace(/\n/g, ' ⏎ ')}`;
}

const S = (item: Record<string, AttributeValue> | undefined, name: string): string | undefined =>
  item?.[name]?.S;
const N = (item: Record<string, AttributeValue> | undefined, name: string): number | undefined => {
  const raw = item?.[name]?.N;
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(n) ? n : undefined;
};
const iso = (ms: number | undefined): string | undefined =>
  ms === undefined || ms <= 0 ? undefined : new Date(ms).toISOString();
const cut = (text: string, max = OUTCOME_CHARS) =>
  text.length <= max ? text : `${text.slice(0, max)}…[${text.length - max} more]`;

/** The child record keys a record links to (`childJobs`: a String Set, or a List of strings). */
function childLinks(item: Record<string, AttributeValue> | undefined): string[] {
  const value = item?.childJobs;
  if (value?.SS) return [...value.SS];
  if (value?.L) return value.L.flatMap((v) => (v.S === undefined ? [] : [v.S]));
  return [];
}

/**
 * Walks the chain of a job: up to its root, then down to every descendant; see the module
 * comment for what is read and what can be known.
 *
 * @throws {RangeError} for an empty type or key, or no table.
 * @throws what `readItem` throws (DynamoDB unreachable, no permission).
 */
export async function walkJobChain(options: WalkJobChainOptions): Promise<JobChain> {
  const { start, tables, readItem } = options;
  if (start.type === '' || start.key === '')
    throw new RangeError('give the job type and its key (or source and id)');
  if (tables.length === 0) throw new RangeError('no idempotency table is known (pass --idempotency-table)');
  const now = options.now ?? Date.now;
  const maxJobs = options.maxJobs ?? 200;
  const notes: string[] = [];
  const nodes = new Map<string, Node>();
  const batches = new Map<string, ChainBatch>();
  let reads = 0;
  let capped = false;

  const read = async (pk: string): Promise<Node | undefined> => {
    const known = nodes.get(pk);
    if (known) return known;
    if (reads >= maxJobs) {
      capped = true;
      return undefined;
    }
    reads += 1;
    const { type, key } = jobOfRecordKey(pk);
    let item: Record<string, AttributeValue> | undefined;
    let table: string | undefined;
    for (const name of tables) {
      item = await readItem(name, pk);
      if (item !== undefined) {
        table = name;
        break;
      }
    }
    if (item?.recordType?.S === 'batch') {
      const batch = chainBatchOf(item, now());
      if (batch !== undefined) batches.set(pk, batch);
      return undefined;
    }
    if (item !== undefined && item.recordType?.S !== undefined && item.recordType.S !== 'job') {
      notes.push(`${pk} holds a ${item.recordType.S} record, not a job record`);
      item = undefined;
    }
    const node: Node = {
      pk,
      type,
      key,
      item,
      table,
      parentPk: S(item, 'parentJob'),
      childPks: childLinks(item),
      deadLetter: undefined,
    };
    nodes.set(pk, node);
    return node;
  };

  const askedPk = jobRecordKey(start.type, start.key);
  let dlqs: readonly ChainDeadLetterQueue[] | undefined;
  const byIdentity = new Map<string, DeadLetterMessage & { dlq: string }>();
  const byParent = new Map<string, (DeadLetterMessage & { dlq: string })[]>();

  /** Up from the asked job, then down from the top; again once the DLQs are read. */
  const walk = async (): Promise<string> => {
    let top = (await read(askedPk)) as Node;
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const parentPk = top.parentPk ?? top.deadLetter?.job?.parentJob;
      if (parentPk === undefined || parentPk === top.pk) break;
      top.parentPk = parentPk;
      const parent = await read(parentPk);
      if (parent === undefined) break;
      if (!parent.childPks.includes(top.pk)) parent.childPks.push(top.pk);
      top = parent;
    }
    const queue = [top];
    const seen = new Set<string>([top.pk]);
    while (queue.length > 0) {
      const node = queue.shift() as Node;
      for (const message of byParent.get(node.pk) ?? []) {
        const pk = recordKeyOfMessage(message);
        if (pk !== undefined && !node.childPks.includes(pk)) node.childPks.push(pk);
      }
      for (const childPk of node.childPks) {
        if (seen.has(childPk)) continue;
        seen.add(childPk);
        const child = await read(childPk);
        const batch = batches.get(childPk);
        if (batch !== undefined && batch.startedBy === '')
          batches.set(childPk, { ...batch, startedBy: node.pk });
        if (child === undefined) continue;
        child.parentPk ??= node.pk;
        queue.push(child);
      }
    }
    return top.pk;
  };

  let rootPk = await walk();
  const settled = (node: Node) => S(node.item, 'status') === 'COMPLETED';
  if (options.deadLetters !== undefined && [...nodes.values()].some((n) => !settled(n))) {
    dlqs = await options.deadLetters();
    for (const dlq of dlqs) {
      for (const message of dlq.messages) {
        const entry = { ...message, dlq: dlq.name };
        const job = message.job;
        if (job?.source !== undefined) byIdentity.set(JSON.stringify([job.source, job.id]), entry);
        if (job?.parentJob !== undefined) {
          const list = byParent.get(job.parentJob) ?? [];
          list.push(entry);
          byParent.set(job.parentJob, list);
        }
      }
    }
    const attach = () => {
      for (const node of nodes.values()) {
        if (node.deadLetter !== undefined || node.key === undefined) continue;
        const envelope = decodeDefaultJobKey(node.key);
        const hit = envelope && byIdentity.get(JSON.stringify([envelope.source, envelope.id]));
        if (hit && (hit.job?.type === undefined || hit.job.type === node.type)) node.deadLetter = hit;
      }
    };
    attach();
    rootPk = await walk();
    attach();
  }

  if (capped) notes.push(`stopped after reading ${maxJobs} jobs (--max-jobs): the chain goes on`);
  const askedNode = nodes.get(askedPk) as Node;
  if (askedNode.item === undefined && askedNode.deadLetter === undefined) {
    notes.push(
      `no idempotency record of ${describeJobRef(askedPk)} in ${tables.join(', ')}: not run yet (queued or in flight), run without the store (idempotency off), or its record expired (TTL, 7 days by default)`,
    );
  }
  const rootNode = nodes.get(rootPk) as Node;
  if (rootNode.item === undefined && rootNode.pk !== askedPk) {
    notes.push(
      `the parent at the top, ${describeJobRef(rootPk)}, has no record (expired, or run without the store): the chain above it is not known`,
    );
  }
  if (dlqs === undefined) {
    if (options.deadLetters === undefined) {
      notes.push(
        'dead-letter queues were not read: pass the queues (--local, --outputs-file, --queue-url or --dlq-url) to see dead letters and their causes',
      );
    }
  } else {
    for (const dlq of dlqs) {
      if (dlq.error !== undefined) notes.push(`${dlq.name} could not be read: ${dlq.error}`);
      else if (dlq.notRead > 0 && dlq.fifo) {
        notes.push(
          `${dlq.name}: about ${dlq.notRead} messages could not be read (a FIFO group's later messages stay locked behind its first while it is held; nothing is consumed)`,
        );
      } else if (dlq.notRead > 0) notes.push(`${dlq.name}: about ${dlq.notRead} messages were not seen`);
    }
  }

  const jobs: ChainJob[] = [];
  const order = (pks: readonly string[]) =>
    [...pks].sort((a, b) => {
      const na = nodes.get(a);
      const nb = nodes.get(b);
      const ta = N(na?.item, 'createdAtMs') ?? N(na?.item, 'acquiredAtMs') ?? Number.MAX_SAFE_INTEGER;
      const tb = N(nb?.item, 'createdAtMs') ?? N(nb?.item, 'acquiredAtMs') ?? Number.MAX_SAFE_INTEGER;
      return ta - tb || (a < b ? -1 : a > b ? 1 : 0);
    });
  const emitted = new Set<string>();
  const emit = (node: Node, depth: number) => {
    if (emitted.has(node.pk)) return;
    emitted.add(node.pk);
    jobs.push(describe(node, depth, node.pk === askedPk, now(), nodes));
    for (const childPk of order(node.childPks)) {
      const child = nodes.get(childPk);
      if (child) emit(child, depth + 1);
    }
  };
  emit(rootNode, 0);
  if (!emitted.has(askedPk)) {
    notes.push(
      'the job asked for could not be placed under the top of the chain reached (see the notes above)',
    );
    emit(askedNode, 0);
  }
  return {
    asked: askedPk,
    root: rootPk,
    jobs,
    batches: [...batches.values()],
    deadLetterQueues: (dlqs ?? []).map((d) => ({
      name: d.name,
      read: d.messages.length,
      notRead: d.notRead,
      ...(d.error === undefined ? {} : { error: d.error }),
    })),
    notes,
  };
}

/** A batch item as a chain shows it; undefined when it is malformed. */
function chainBatchOf(item: Record<string, AttributeValue>, nowMs: number): ChainBatch | undefined {
  let batch: BatchRecord;
  try {
    batch = parseBatchRecord(item);
  } catch {
    return undefined;
  }
  let completionJob: string | undefined;
  try {
    completionJob = (JSON.parse(batch.completionEnvelope) as { type?: string }).type;
  } catch {
    completionJob = undefined;
  }
  const counted = batch.succeeded + batch.deadLettered + batch.waiting;
  return {
    batchId: batch.batchId,
    startedBy: batch.parentJob ?? '',
    total: batch.total,
    succeeded: batch.succeeded,
    deadLettered: batch.deadLettered,
    waitingForRedrive: batch.waiting,
    notCounted: Math.max(0, batch.total - counted),
    policy: batch.policy,
    state: batch.state,
    completionJob,
    createdAt: new Date(batch.createdAtMs).toISOString(),
    openLimitSeconds: batch.openLimitSeconds,
    overdue: batch.state !== 'completed' && nowMs > batch.createdAtMs + batch.openLimitSeconds * 1000,
  };
}

/** The record key of the job in a DLQ message: its type and default key. */
function recordKeyOfMessage(message: DeadLetterMessage): string | undefined {
  const job = message.job;
  if (job?.type === undefined || job.source === undefined) return undefined;
  try {
    return jobRecordKey(job.type, defaultJobKey(job.source, job.id));
  } catch {
    return undefined;
  }
}

function describe(
  node: Node,
  depth: number,
  asked: boolean,
  nowMs: number,
  nodes: Map<string, Node>,
): ChainJob {
  const { item } = node;
  const envelope = node.key === undefined ? undefined : decodeDefaultJobKey(node.key);
  const status = S(item, 'status');
  const attempts = N(item, 'attempt');
  const redrives = N(item, 'redriveCount');
  const acquiredAtMs = N(item, 'acquiredAtMs');
  const endedAtMs = N(item, 'endedAtMs');
  const leaseExpiresAtMs = N(item, 'leaseExpiresAtMs');
  const lastError = S(item, 'lastError');
  const dl = node.deadLetter;
  const deadLetter: ChainDeadLetter | undefined =
    dl === undefined
      ? undefined
      : {
          dlq: dl.dlq,
          messageId: dl.messageId,
          reason: dl.reason,
          errorName: dl.errorName,
          errorMessage: dl.evidence.errorMessage,
          attempts: dl.evidence.attempts,
          lastFailureAt: dl.evidence.lastFailureAt,
          sentAt: iso(dl.sentAtMs),
        };
  let state: ChainJobState;
  let where: string;
  const parent = node.parentPk === undefined ? undefined : nodes.get(node.parentPk);
  if (status === 'COMPLETED' && deadLetter === undefined) {
    state = 'done';
    where = `finished${endedAtMs === undefined ? '' : ` at ${iso(endedAtMs)}`}`;
  } else if (deadLetter !== undefined) {
    state = 'dead-lettered';
    where =
      `in DLQ ${deadLetter.dlq}${deadLetter.sentAt ? ` since ${deadLetter.sentAt}` : ''}: ${deadLetter.reason}` +
      (deadLetter.errorMessage
        ? ` (${deadLetter.errorName}: ${cut(deadLetter.errorMessage.replace(/\s*\n\s*/g, ' '), 200)})`
        : '');
    if (status === 'COMPLETED')
      where +=
        '; its record says COMPLETED: a duplicate delivery was dead-lettered, or it completed after a redrive';
  } else if (status === 'FAILED') {
    state = 'dead-lettered';
    where = `dead-lettered${endedAtMs === undefined ? '' : ` at ${iso(endedAtMs)}`} (its record: ${lastError ?? 'FAILED'}); not found in the DLQs read: redriven or deleted since, or locked behind its FIFO group's first message`;
  } else if (status === 'RELEASED') {
    state = 'retrying';
    where = `attempt ${attempts ?? '?'} failed${endedAtMs === undefined ? '' : ` at ${iso(endedAtMs)}`}: waiting in its queue for the next attempt (invisible until its backoff ends)`;
  } else if (status === 'IN_PROGRESS' && leaseExpiresAtMs !== undefined && leaseExpiresAtMs > nowMs) {
    state = 'running';
    where = `running now: attempt ${attempts ?? '?'} since ${iso(acquiredAtMs) ?? '?'} (lease until ${iso(leaseExpiresAtMs)})`;
  } else if (status === 'IN_PROGRESS') {
    state = 'queued-or-in-flight';
    where = `attempt ${attempts ?? '?'} ended without completing (its lease ran out at ${iso(leaseExpiresAtMs) ?? '?'}): queued or in flight for its next attempt`;
  } else {
    state = 'queued-or-in-flight';
    const sentBy =
      parent !== undefined && S(parent.item, 'status') === 'COMPLETED'
        ? `sent by its parent by ${iso(N(parent.item, 'endedAtMs')) ?? '?'}; `
        : '';
    where = `${sentBy}not started: queued or in flight (a message in a queue cannot be seen without receiving it), or its record expired`;
  }
  let outcome: string | undefined;
  if (status === 'COMPLETED') {
    const result = S(item, 'result');
    const omitted = S(item, 'resultOmittedReason');
    outcome =
      result !== undefined
        ? cut(result)
        : omitted !== undefined
          ? `result not stored (${omitted}${S(item, 'resultOmittedDetail') ? `: ${S(item, 'resultOmittedDetail')}` : ''})`
          : 'no result (undefined)';
  } else if (lastError !== undefined) {
    outcome = cut(lastError);
  } else if (deadLetter !== undefined) {
    outcome = `${deadLetter.errorName}: ${cut(deadLetter.errorMessage ?? deadLetter.reason)}`;
  }
  return {
    pk: node.pk,
    type: node.type,
    key: node.key,
    source: envelope?.source,
    id: envelope?.id,
    depth,
    parentPk: node.parentPk,
    childPks: node.childPks,
    asked,
    state,
    status,
    attempts: attempts ?? deadLetter?.attempts,
    redrives: redrives !== undefined && redrives > 0 ? redrives : undefined,
    firstRunAt: iso(N(item, 'createdAtMs') ?? acquiredAtMs),
    lastRunAt: iso(acquiredAtMs),
    endedAt: iso(endedAtMs),
    outcome,
    where,
    deadLetter,
    table: node.table,
  };
}
