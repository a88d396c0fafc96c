/**
 * The console's reads of dead-letter queues, shared by every page that shows dead letters (the
 * DLQ page, a job's page, its chain): `readDeadLetters` + `summarizeDeadLetters` of sqs-jobs/ops
 * (reads never delete: each message is held, then made visible again), kept
 * {@link CONSOLE_DEFAULTS.deadLetterCacheMs} unless a refresh is asked for.
 *
 * Reads and redrives of one DLQ never overlap (one lock per DLQ, {@link DeadLetterReads.exclusive}):
 * two overlapping reads would each see the other's held messages as missing.
 */
import { type DeadLetterRead, readDeadLetters } from '../../ops/dlq-reader.ts';
import { type DeadLetterSummary, summarizeDeadLetters } from '../../ops/summary.ts';
import type { ConsoleQueue, ConsoleSetup } from '../setup.ts';
import { CONSOLE_DEFAULTS } from './defaults.ts';
import type { QueueSampler } from './sampler.ts';

/** One read of a DLQ, when it was made (epoch ms) and its messages grouped by cause. */
export interface DlqRead {
  readonly at: number;
  readonly read: DeadLetterRead;
  readonly summary: DeadLetterSummary;
}

/** Runs tasks one after the other. */
class Lock {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(task, task);
    this.#tail = next.catch(() => {});
    return next;
  }
}

/** Cached, serialized reads of the DLQs of a setup. */
export class DeadLetterReads {
  readonly #setup: ConsoleSetup;
  readonly #sampler: QueueSampler;
  readonly #now: () => number;
  readonly #locks = new Map<string, Lock>();
  readonly #reads = new Map<string, DlqRead>();

  constructor(setup: ConsoleSetup, sampler: QueueSampler, now: () => number) {
    this.#setup = setup;
    this.#sampler = sampler;
    this.#now = now;
  }

  /** `WaitTimeSeconds` of every DLQ receive: the setup's, else 1 on AWS and 0 on emulators. */
  get waitTimeSeconds(): number {
    return this.#setup.dlqWaitSeconds ?? (this.#setup.mode === 'aws' ? 1 : 0);
  }

  /** The DLQ of a queue as last read (at most {@link CONSOLE_DEFAULTS.deadLetterCacheMs} old unless `refresh`). */
  async read(queue: ConsoleQueue, refresh: boolean): Promise<DlqRead> {
    const dlqUrl = await this.#sampler.dlqUrlOf(queue);
    const cached = this.#reads.get(dlqUrl);
    if (!refresh && cached !== undefined && this.#now() - cached.at < CONSOLE_DEFAULTS.deadLetterCacheMs) {
      return cached;
    }
    return this.#lock(dlqUrl).run(async () => {
      const again = this.#reads.get(dlqUrl);
      if (again !== undefined && again !== cached) return again;
      const read = await readDeadLetters({
        sqs: this.#setup.sqs,
        queueUrl: dlqUrl,
        waitTimeSeconds: this.waitTimeSeconds,
        now: this.#now,
      });
      const entry = { at: this.#now(), read, summary: summarizeDeadLetters(read.messages) };
      this.#reads.set(dlqUrl, entry);
      return entry;
    });
  }

  /** Runs `task` (a redrive, a verification) alone on a DLQ, then forgets its cached read. */
  async exclusive<T>(dlqUrl: string, task: () => Promise<T>): Promise<T> {
    const result = await this.#lock(dlqUrl).run(task);
    this.#reads.delete(dlqUrl);
    return result;
  }

  #lock(dlqUrl: string): Lock {
    let lock = this.#locks.get(dlqUrl);
    if (lock === undefined) {
      lock = new Lock();
      this.#locks.set(dlqUrl, lock);
    }
    return lock;
  }
}
