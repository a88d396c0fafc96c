/**
 * Job chaining: `ctx.enqueue` inside `run` only collects children; they are sent after `run`
 * succeeded and before the parent is completed. Each child's id derives from the parent's
 * identity ({@link childJobId}), so a parent that runs again sends the same ids: the FIFO dedup
 * id and the child's idempotency key follow from it, and no second child is made.
 */
import { jsonFormOf, jsonValueProblems } from '../sqs/json-value.ts';
import { isValidMessageGroupId } from '../sqs/message-parameters.ts';
import { childJobId } from './envelope.ts';
import type { EnqueueOptions, JobDefinition } from './job.ts';
import { ChildEnqueueError, ChildRejectedError } from './worker-errors.ts';

/** One entry of {@link ChildSender.sendBatch} (the `JobClient.sendBatch` entry shape). */
export interface ChildEntry {
  // biome-ignore lint/suspicious/noExplicitAny: a batch mixes job types; each entry is checked when enqueued.
  readonly job: JobDefinition<any, any>;
  readonly data: unknown;
  readonly options?: { readonly partitionKey?: string; readonly id?: string; readonly delaySeconds?: number };
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

/** What sends children: `JobClient` satisfies it. */
export interface ChildSender {
  sendBatch(entries: ChildEntry[]): Promise<ChildSendResult>;
}

/** The parent's identity the children derive from. */
export interface ParentIdentity {
  readonly source: string;
  readonly id: string;
  readonly partitionKey: string | undefined;
}

/** Collects the children of one run, with ids fixed at enqueue time. */
export class ChildCollector {
  readonly #entries: ChildEntry[] = [];
  readonly #perType = new Map<string, number>();
  readonly #parent: ParentIdentity;

  constructor(parent: ParentIdentity) {
    this.#parent = parent;
  }

  /**
   * Adds a child. Its id is `childJobId(parent, childType, n)` where n counts the earlier
   * children of the same type in this run (0-based): counting per type keeps ids stable even when
   * a re-run enqueues different types in a different order. Partition key defaults to the parent's.
   *
   * The child's data is taken in its JSON form, as the child's worker will see it (a later change
   * to the object does not reach the child). Checked here, at the `ctx.enqueue` call, with the
   * producer's rules (`JobClient`): data JSON cannot carry as it is (NaN, a Map, a class instance,
   * a cycle... `jsonValueProblems`, lib/sqs/json-value.ts) and a partition key that is not a valid
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
    const index = this.#perType.get(job.type) ?? 0;
    this.#perType.set(job.type, index + 1);
    const partitionKey = options?.partitionKey ?? this.#parent.partitionKey;
    this.#entries.push({
      job,
      data: jsonFormOf(data),
      options: {
        id: childJobId(this.#parent, job.type, index),
        ...(partitionKey === undefined ? {} : { partitionKey }),
        ...(options?.delaySeconds === undefined ? {} : { delaySeconds: options.delaySeconds }),
      },
    });
  }

  get entries(): readonly ChildEntry[] {
    return this.#entries;
  }
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
