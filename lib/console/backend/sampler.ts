/**
 * The queues' numbers over time: samples every queue on a timer (so the chart has a history
 * before the page is opened) with `readQueueStats` of sqs-jobs/ops, keeps
 * {@link CONSOLE_DEFAULTS.historyMinutes} of samples, and knows each queue's DLQ from its
 * redrive policy (what the other pages need when the setup does not name the DLQ).
 */
import { type OldestMessageAgeSource, unknownOldestAges } from '../../ops/oldest-age.ts';
import { type QueueStats, readQueueStats } from '../../ops/stats.ts';
import type { ConsoleQueue, ConsoleSetup } from '../setup.ts';
import { CONSOLE_DEFAULTS } from './defaults.ts';
import { ConsoleRequestError, errorText } from './errors.ts';

/** One sample: per queue id `[visible, inFlight, delayed, dlqVisible, dlqInFlight, completedSoFar]`. */
export interface QueueSample {
  readonly t: number;
  readonly q: Record<string, readonly [number, number, number, number, number, number | null]>;
}

/** Samples a setup's queues until stopped. */
export class QueueSampler {
  readonly #setup: ConsoleSetup;
  readonly #now: () => number;
  readonly #oldestAge: OldestMessageAgeSource;
  readonly #dlqUrlsByArn = new Map<string, string>();
  readonly #history: QueueSample[] = [];
  #latest: { at: string; queues: QueueStats[] } | undefined;
  #error: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> | undefined;
  #stopped = false;

  constructor(setup: ConsoleSetup, now: () => number) {
    this.#setup = setup;
    this.#now = now;
    this.#oldestAge =
      setup.oldestAge ??
      unknownOldestAges(
        'SQS reports the age of the oldest message only as a CloudWatch metric, which this endpoint does not have',
      );
  }

  /** The latest numbers of every queue (ISO 8601 `at`), undefined before the first sample. */
  get latest(): { readonly at: string; readonly queues: readonly QueueStats[] } | undefined {
    return this.#latest;
  }

  /** The latest sampling error, when the last sample failed. */
  get error(): string | undefined {
    return this.#error;
  }

  /** Samples taken after `sinceMs` (epoch ms), oldest first. */
  historySince(sinceMs: number): QueueSample[] {
    return this.#history.filter((s) => s.t > sinceMs);
  }

  /** Takes a sample now, then every `seconds` until {@link stop}. */
  start(seconds: number): Promise<void> {
    const loop = async () => {
      if (this.#stopped) return;
      this.#sampling = this.sample();
      await this.#sampling;
      if (this.#stopped) return;
      this.#timer = setTimeout(loop, seconds * 1000);
      this.#timer.unref();
    };
    return loop();
  }

  /** Stops sampling; waits for a sample in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#sampling;
  }

  /** Reads the numbers of every queue once and keeps them as a sample. Never throws. */
  async sample(): Promise<void> {
    try {
      const report = await readQueueStats({
        sqs: this.#setup.sqs,
        queueUrls: this.#setup.queues.map((q) => q.url),
        oldestAge: this.#oldestAge,
        deadLetterQueueUrls: this.#dlqUrlsByArn,
        nowMs: this.#now,
      });
      const counted =
        this.#setup.completions?.kind === 'counter'
          ? this.#setup.completions.read()
          : new Map<string, number>();
      const q: Record<string, [number, number, number, number, number, number | null]> = {};
      for (const stats of report.queues) {
        const queue = this.#setup.queues.find((c) => c.url === stats.url);
        if (queue === undefined) continue;
        q[queue.id] = [
          stats.visible,
          stats.inFlight,
          stats.delayed,
          stats.deadLetterQueue?.visible ?? 0,
          stats.deadLetterQueue?.inFlight ?? 0,
          counted.get(stats.url) ?? null,
        ];
      }
      const t = this.#now();
      this.#history.push({ t, q });
      const oldest = t - CONSOLE_DEFAULTS.historyMinutes * 60_000;
      while ((this.#history[0]?.t ?? t) < oldest) this.#history.shift();
      this.#latest = { at: report.at, queues: report.queues };
      this.#error = undefined;
    } catch (error) {
      this.#error = errorText(error);
    }
  }

  /**
   * The DLQ URL of a queue: from the setup, else from its redrive policy (a sample reads it).
   * @throws {ConsoleRequestError} 409 when the queue has no DLQ.
   */
  async dlqUrlOf(queue: ConsoleQueue): Promise<string> {
    if (queue.dlqUrl !== undefined) return queue.dlqUrl;
    let found = this.#latest?.queues.find((q) => q.url === queue.url);
    if (found === undefined) {
      await this.sample();
      found = this.#latest?.queues.find((q) => q.url === queue.url);
    }
    const url = found?.deadLetterQueue?.url;
    if (url === undefined) {
      throw new ConsoleRequestError(
        409,
        `queue ${queue.id} has no dead-letter queue: ${found?.deadLetterQueueNote ?? this.#error ?? 'its redrive policy names none'}`,
      );
    }
    return url;
  }
}
