/**
 * The queues page (`GET /api/queues`): each queue's latest numbers, the samples for the chart,
 * completions (counted locally, or a CloudWatch series on AWS) and alarm states. CloudWatch is
 * read at most every {@link CONSOLE_DEFAULTS.cloudWatchCacheMs}.
 */
import type { ConsoleAlarm } from '../setup.ts';
import type { ConsoleContext } from './context.ts';
import { CONSOLE_DEFAULTS } from './defaults.ts';
import { errorText } from './errors.ts';
import type { QueueSample } from './sampler.ts';

/** One queue's numbers as the page sees them. */
export interface QueueView {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly fifo: boolean;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly oldestAgeSeconds: number | null;
  readonly oldestAgeNote: string | undefined;
  readonly dlq: {
    readonly name: string;
    readonly url: string;
    readonly visible: number;
    readonly inFlight: number;
    readonly maxReceiveCount: number;
  } | null;
  readonly dlqNote: string | undefined;
}

/** The queues page. */
export interface QueuesView {
  readonly at: string | undefined;
  readonly queues: readonly QueueView[];
  readonly history: readonly QueueSample[];
  /** What the completions in the samples count, or (AWS) a per-minute series read separately. */
  readonly completions:
    | { readonly kind: 'counter'; readonly label: string }
    | {
        readonly kind: 'series';
        readonly label: string;
        readonly t: readonly number[];
        readonly series: Record<string, readonly (number | null)[]>;
        readonly notes: readonly string[];
      }
    | { readonly kind: 'none'; readonly label: string };
  readonly alarms: {
    readonly label: string;
    readonly items: readonly ConsoleAlarm[];
    readonly error?: string;
  } | null;
  /** The latest sampling error, when the last sample failed. */
  readonly error: string | undefined;
}

/** The queues page over a context, with its CloudWatch reads cached. */
export class QueuesPage {
  readonly #ctx: ConsoleContext;
  #alarms: { at: number; value: QueuesView['alarms'] } | undefined;
  #series: { at: number; value: QueuesView['completions'] } | undefined;

  constructor(ctx: ConsoleContext) {
    this.#ctx = ctx;
  }

  /** Latest numbers, samples after `sinceMs` (epoch ms), completions and alarms. */
  async view(sinceMs = 0): Promise<QueuesView> {
    const { setup, sampler } = this.#ctx;
    const latest = sampler.latest;
    const queues = (latest?.queues ?? []).flatMap((stats): QueueView[] => {
      const queue = setup.queues.find((c) => c.url === stats.url);
      if (queue === undefined) return [];
      return [
        {
          id: queue.id,
          name: stats.name,
          url: stats.url,
          fifo: stats.fifo,
          visible: stats.visible,
          inFlight: stats.inFlight,
          delayed: stats.delayed,
          oldestAgeSeconds: stats.oldestMessageAge.seconds,
          oldestAgeNote: stats.oldestMessageAge.note,
          dlq:
            stats.deadLetterQueue === null
              ? null
              : {
                  name: stats.deadLetterQueue.name,
                  url: stats.deadLetterQueue.url,
                  visible: stats.deadLetterQueue.visible,
                  inFlight: stats.deadLetterQueue.inFlight,
                  maxReceiveCount: stats.deadLetterQueue.maxReceiveCount,
                },
          dlqNote: stats.deadLetterQueueNote,
        },
      ];
    });
    return {
      at: latest?.at,
      queues,
      history: sampler.historySince(sinceMs),
      completions: await this.#completions(),
      alarms: await this.#readAlarms(),
      error: sampler.error,
    };
  }

  async #completions(): Promise<QueuesView['completions']> {
    const { setup } = this.#ctx;
    const source = setup.completions;
    if (source === undefined) {
      return {
        kind: 'none',
        label:
          'completions are not available here: the workers run elsewhere and this endpoint has no metrics ' +
          '(sqs-jobs local --console counts them; on AWS they come from CloudWatch)',
      };
    }
    if (source.kind === 'counter') return { kind: 'counter', label: source.label };
    const now = this.#ctx.now();
    if (this.#series !== undefined && now - this.#series.at < CONSOLE_DEFAULTS.cloudWatchCacheMs) {
      return this.#series.value;
    }
    let value: QueuesView['completions'];
    try {
      const read = await source.read(setup.queues, CONSOLE_DEFAULTS.historyMinutes);
      value = { kind: 'series', label: source.label, ...read };
    } catch (error) {
      value = { kind: 'series', label: source.label, t: [], series: {}, notes: [errorText(error)] };
    }
    this.#series = { at: now, value };
    return value;
  }

  async #readAlarms(): Promise<QueuesView['alarms']> {
    const { setup, sampler } = this.#ctx;
    const source = setup.alarms;
    if (source === undefined) return null;
    const now = this.#ctx.now();
    if (this.#alarms !== undefined && now - this.#alarms.at < CONSOLE_DEFAULTS.cloudWatchCacheMs) {
      return this.#alarms.value;
    }
    const names = new Map<string, string>();
    for (const stats of sampler.latest?.queues ?? []) {
      const queue = setup.queues.find((c) => c.url === stats.url);
      if (queue === undefined) continue;
      names.set(stats.name, queue.id);
      if (stats.deadLetterQueue) names.set(stats.deadLetterQueue.name, queue.id);
    }
    let value: QueuesView['alarms'];
    try {
      value = { label: source.label, items: await source.read(setup.queues, names) };
    } catch (error) {
      value = { label: source.label, items: [], error: errorText(error) };
    }
    this.#alarms = { at: now, value };
    return value;
  }
}
