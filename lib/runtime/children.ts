/**
 * Job chaining: `ctx.enqueue` inside `run` only collects children; they are sent after `run`
 * succeeded and before the parent is completed. Each child's id derives from the parent's
 * identity ({@link childJobId}), so a parent that runs again sends the same ids: the FIFO dedup
 * id and the child's idempotency key follow from it, and no second child is made.
 */
import { childJobId } from './envelope.ts';
import type { EnqueueOptions, JobDefinition } from './job.ts';
import { ChildEnqueueError } from './worker-errors.ts';

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
   */
  add<D>(job: JobDefinition<D>, data: D, options: EnqueueOptions | undefined): void {
    const index = this.#perType.get(job.type) ?? 0;
    this.#perType.set(job.type, index + 1);
    const partitionKey = options?.partitionKey ?? this.#parent.partitionKey;
    this.#entries.push({
      job,
      data,
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
