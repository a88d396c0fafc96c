/**
 * Job chaining: `ctx.enqueue` inside `run` only collects children; they are sent after `run`
 * succeeded and before the parent is completed. Each child's id derives from the parent's
 * identity ({@link childJobId}), so a parent that runs again sends the same ids: the FIFO dedup
 * id and the child's idempotency key follow from it, and no second child is made.
 *
 * Lineage: every child carries its parent's envelope id (`causationid`), the chain's root id
 * (`rootid`: the parent's, else the parent's own id), the parent's job reference (`parentjob`),
 * the parent's `correlationid` and the parent's trace: the same trace id and flags with a parent
 * id of the child's own (`traceparent`), and the parent's `tracestate`. A parent without a
 * traceparent starts a trace for its children, derived from its identity. All of it is the same
 * on a re-run of the parent (only the child's `time` differs).
 */
import type { BatchSpec, BatchStarted, BatchStarter } from '../client/batch-start.ts';
import type { SendOptions } from '../client/prepare.ts';
import { childIdentity, derivedTraceId, type EnvelopeLineage } from '../core/envelope.ts';
import { jsonFormOf, jsonValueProblems } from '../core/json-value.ts';
import { isValidMessageGroupId } from '../core/message-parameters.ts';
import { childTraceparent } from '../core/trace-context.ts';
import { defaultJobKey, jobRecordKey } from './idempotency/keys.ts';
import { type EnqueueOptions, identityTypeOf, type JobDefinition } from './job.ts';
import { ChildEnqueueError, ChildRejectedError } from './worker-errors.ts';

/** One entry of {@link ChildSender.sendBatch} (the `JobClient.sendBatch` entry shape). */
export interface ChildEntry {
  // biome-ignore lint/suspicious/noExplicitAny: a batch mixes job types; each entry is checked when enqueued.
  readonly job: JobDefinition<any, any>;
  readonly data: unknown;
  readonly options?: SendOptions;
}

/** Outcome of a batch send (the `JobClient.sendBatch` result shape). */
export interface ChildSendResult {
  readonly sent: readonly { readonly index: number; readonly id: string }[];
  readonly failed: readonly {
    readonly index: number;
    readonly id: string;
    readonly code: string;
    readonly message: string;
    readonly senderFault: boolean;
  }[];
}

/** What sends children: `JobClient` and `JobSender` (the default, child-sender.ts) satisfy it. */
export interface ChildSender {
  sendBatch(entries: ChildEntry[]): Promise<ChildSendResult>;
  /**
   * The envelope `source` the children are sent with (the worker's `source`), when known: with
   * it the parent's record links its children ({@link childRecordKeys}).
   */
  readonly source?: string;
  /** Sends a built envelope (a batch's completion job, kept on its batch item); batches need it. */
  sendEnvelope?(queue: string, body: string): Promise<unknown>;
  /**
   * Starts a batch of `ctx.startBatch` (lib/client/batch-start.ts), its item written to the
   * idempotency table `tableName`; batches need it.
   */
  startBatch?(spec: BatchSpec, starter: BatchStarter, tableName: string): Promise<BatchStarted>;
}

/** The parent's identity the children derive from. */
export interface ParentIdentity {
  readonly source: string;
  readonly id: string;
  readonly partitionKey: string | undefined;
  /** The parent's own lineage and trace attributes (its envelope). */
  readonly lineage?: EnvelopeLineage;
  /** The parent's job reference: its idempotency record key `<type>#<key>` (`jobRecordKey`). */
  readonly job?: string;
  /** The X-Ray trace header the children carry (`AWSTraceHeader`, chain-trace.ts); undefined: none. */
  readonly awsTraceHeader?: string | undefined;
}

/**
 * The lineage options of a child of `parent` whose trace span id is `spanId` (16 hex digits):
 * parent link, correlation id, trace (`traceId` gives the trace a parent without a traceparent
 * starts), and the X-Ray header. Shared by `ctx.enqueue` and the children of `ctx.startBatch`.
 */
export function childLineageOptions(
  parent: ParentIdentity,
  spanId: string,
  traceId: () => string,
): SendOptions {
  const lineage = parent.lineage;
  return {
    parent: {
      id: parent.id,
      rootId: lineage?.rootid ?? parent.id,
      ...(parent.job === undefined ? {} : { job: parent.job }),
    },
    ...(lineage?.correlationid === undefined ? {} : { correlationId: lineage.correlationid }),
    traceparent: childTraceparent(lineage?.traceparent, spanId, traceId),
    ...(lineage?.tracestate === undefined ? {} : { tracestate: lineage.tracestate }),
    ...(parent.awsTraceHeader === undefined ? {} : { awsTraceHeader: parent.awsTraceHeader }),
  };
}

/** Collects the children of one run, with ids fixed at enqueue time. */
export class ChildCollector {
  readonly #entries: ChildEntry[] = [];
  readonly #perType = new Map<string, number>();
  readonly #parent: ParentIdentity;
  #traceId: string | undefined;

  constructor(parent: ParentIdentity) {
    this.#parent = parent;
  }

  /** The trace id children of a parent without a traceparent start (made once per run). */
  readonly #derivedTraceId = (): string => {
    this.#traceId ??= derivedTraceId(this.#parent);
    return this.#traceId;
  };

  /** The lineage options of a child whose trace span id is `spanId`. */
  #lineage(spanId: string): SendOptions {
    return childLineageOptions(this.#parent, spanId, this.#derivedTraceId);
  }

  /**
   * Adds a child. Its id is `childJobId(parent, childType, n)` where n counts the earlier
   * children of the same type in this run (0-based): counting per type keeps ids stable even when
   * a re-run enqueues different types in a different order. Partition key defaults to the parent's.
   *
   * The child's data is taken in its JSON form, as the child's worker will see it (a later change
   * to the object does not reach the child). Checked here, at the `ctx.enqueue` call, with the
   * producer's rules (`JobClient`): data JSON cannot carry as it is (NaN, a Map, a class instance,
   * a cycle... `jsonValueProblems`, lib/core/json-value.ts) and a partition key that is not a valid
   * `MessageGroupId` throw here; the schema, queue and size are checked when the children are sent.
   *
   * @throws {ChildRejectedError} (permanent: the parent is dead-lettered) naming the path at fault.
   */
  add<D>(job: JobDefinition<D>, data: D, options: EnqueueOptions | undefined): void {
    const problems = jsonValueProblems(data).map((problem) => `${problem.path}: ${problem.message}`);
    if (options?.partitionKey !== undefined && !isValidMessageGroupId(options.partitionKey)) {
      problems.push(
        'options.partitionKey must be 1-128 characters of a-z, A-Z, 0-9 and punctuation (printable ASCII, no space): it becomes the MessageGroupId',
      );
    }
    if (problems.length > 0) {
      throw new ChildRejectedError(`ctx.enqueue(${job.type}) refused: ${problems.join('; ')}`, {
        context: { childType: job.type },
      });
    }
    // The child's identity type: a renamed child job keeps the ids it had under its oldest name.
    const identityType = identityTypeOf(job);
    const index = this.#perType.get(identityType) ?? 0;
    this.#perType.set(identityType, index + 1);
    const partitionKey = options?.partitionKey ?? this.#parent.partitionKey;
    const child = childIdentity(this.#parent, identityType, index);
    this.#entries.push({
      job,
      data: jsonFormOf(data),
      options: {
        id: child.id,
        ...(partitionKey === undefined ? {} : { partitionKey }),
        ...(options?.delaySeconds === undefined ? {} : { delaySeconds: options.delaySeconds }),
        ...this.#lineage(child.spanId),
      },
    });
  }

  get entries(): readonly ChildEntry[] {
    return this.#entries;
  }
}

/**
 * The idempotency record keys (`jobRecordKey`) of children sent with envelope `source`: what the
 * parent's record links to. A child's key is its job's `idempotency.key(data)`, else the default
 * key of `source` and its id. A key function that throws here leaves that child out (its own
 * worker will meet the same error).
 */
export function childRecordKeys(children: readonly ChildEntry[], source: string): string[] {
  const keys: string[] = [];
  for (const child of children) {
    const id = child.options?.id;
    if (id === undefined) continue;
    try {
      const keyOf = child.job.idempotency?.key;
      keys.push(
        jobRecordKey(identityTypeOf(child.job), keyOf ? keyOf(child.data) : defaultJobKey(source, id)),
      );
    } catch {
      // left out: the link is evidence, not a condition of the run
    }
  }
  return keys;
}

/**
 * Sends the collected children in one batch.
 * @throws {ChildEnqueueError} (transient) listing the children that were not sent; the parent
 *   then counts as failed and its re-run sends the same child ids again.
 */
export async function sendChildren(sender: ChildSender, children: readonly ChildEntry[]): Promise<number> {
  if (children.length === 0) return 0;
  const result = await sender.sendBatch([...children]);
  if (result.failed.length > 0) {
    const list = result.failed.map((f) => `${f.id} (${f.code}: ${f.message})`).join('; ');
    throw new ChildEnqueueError(
      `${result.failed.length} of ${children.length} child jobs not sent: ${list}`,
      {
        context: { failed: result.failed },
      },
    );
  }
  return result.sent.length;
}
