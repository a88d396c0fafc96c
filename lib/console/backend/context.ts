/**
 * What every page module of the backend works with: the setup, the clock, the sampler, the
 * shared DLQ reads and the lookup of a queue by the id the page uses. Built once by
 * `ConsoleBackend` (lib/console/backend.ts).
 */
import type { ConsoleQueue, ConsoleSetup } from '../setup.ts';
import type { DeadLetterReads } from './dlq-reads.ts';
import type { QueueSampler } from './sampler.ts';

/** The state the page modules share. */
export interface ConsoleContext {
  readonly setup: ConsoleSetup;
  readonly readOnly: boolean;
  /** Epoch ms. */
  readonly now: () => number;
  readonly sampler: QueueSampler;
  readonly dlqs: DeadLetterReads;
  /**
   * The queue of a page id.
   * @throws {ConsoleRequestError} 404 when the console has no such queue.
   */
  queue(id: string): ConsoleQueue;
}
