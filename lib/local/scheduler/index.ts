/**
 * The local EventBridge Scheduler: an emulator of the Scheduler API (http.ts) over a store of
 * schedules and groups (store.ts) that fires them (engine.ts) into SQS queues (delivery.ts), on
 * an injectable clock (clock.ts). The local runtime starts one next to fauxqs and dynalite and
 * points `AWS_ENDPOINT_URL_SCHEDULER` at it, so `JobClient`'s one-time schedules and the
 * template's recurring ones fire locally.
 *
 * ```ts
 * const scheduler = await startSchedulerEmulator({ sqs, region: 'us-east-1', accountId: '000000000000',
 *   queueUrlOf: async (arn) => urls.get(arn)! });
 * new SchedulerClient({ endpoint: scheduler.url, region: 'us-east-1', credentials });
 * await scheduler.fireNow('nightly-invoices', { groupName: 'jobs' });
 * await scheduler.stop();
 * ```
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { RateFault, seededRandom } from '../faults.ts';
import { type SchedulerClock, systemClock } from './clock.ts';
import type { FiringRecord } from './delivery.ts';
import { type FireNowOptions, SchedulerEngine, type SchedulerStats } from './engine.ts';
import { startSchedulerHttpServer } from './http.ts';
import { type ScheduleInput, ScheduleStore } from './store.ts';

export { ManualClock, type SchedulerClock, systemClock } from './clock.ts';
export type { FiringRecord } from './delivery.ts';
export type { FireNowOptions, SchedulerStats } from './engine.ts';
export type { Schedule, ScheduleInput, ScheduleTarget } from './store.ts';

/** Options of {@link startSchedulerEmulator}. */
export interface SchedulerEmulatorOptions {
  /** Sends the firings (Scheduler's side of SQS: give a client exempt from the runtime's faults). */
  readonly sqs: SQSClient;
  /** Region and account in the schedule ARNs. */
  readonly region: string;
  readonly accountId: string;
  /**
   * The queue URL of a target or dead-letter queue ARN, as the local endpoint serves it.
   * @throws the SQS error when there is no such queue (the firing then fails as on AWS).
   */
  readonly queueUrlOf: (arn: string) => Promise<string>;
  /** @default the system clock */
  readonly clock?: SchedulerClock;
  /** Probability in [0, 1] that a schedule's firing is delivered twice. @default 0 */
  readonly duplicateDeliveryRate?: number;
  /** Seed of the duplicate-delivery decisions. @default 1 */
  readonly seed?: number;
  /** Where notes go (a firing dropped without a dead-letter queue...). @default ignored */
  readonly onNote?: (note: string) => void;
  /** Port to listen on. @default a free port */
  readonly port?: number;
}

/** A running local Scheduler. */
export interface SchedulerEmulator {
  /** The endpoint for `@aws-sdk/client-scheduler` (`AWS_ENDPOINT_URL_SCHEDULER`). */
  readonly url: string;
  /** Creates a schedule group directly (the template's groups). @throws {SchedulerApiError} */
  createScheduleGroup(name: string): void;
  /** Creates a schedule directly (the template's schedules), timestamps in epoch ms. @throws {SchedulerApiError} */
  createSchedule(input: ScheduleInput): void;
  /** See {@link SchedulerEngine.fireNow}. */
  fireNow(name: string, options?: FireNowOptions): Promise<FiringRecord>;
  /** Changes the probability that a schedule's firing is delivered twice. @throws {RangeError} outside [0, 1] */
  setDuplicateDeliveryRate(rate: number): void;
  /** Delivers the next `count` schedule firings twice, whatever the rate. */
  duplicateNextFirings(count: number): void;
  /** The firings so far, oldest first (the last 10,000). */
  firings(): readonly FiringRecord[];
  /** The next planned firing of each enabled schedule, by `<group>/<name>`, epoch ms. */
  planned(): ReadonlyMap<string, number>;
  stats(): SchedulerStats;
  /** Resolves once no delivery is working (all settled or waiting for a retry's time). */
  idle(): Promise<void>;
  /** Stops firing and serving. Idempotent. */
  stop(): Promise<void>;
}

/** The local runtime's Scheduler as its users see it (`LocalRuntime.scheduler`). */
export type LocalScheduler = Omit<SchedulerEmulator, 'stop' | 'createSchedule' | 'createScheduleGroup'>;

/** Starts the emulator on 127.0.0.1. @throws the listen error. */
export async function startSchedulerEmulator(options: SchedulerEmulatorOptions): Promise<SchedulerEmulator> {
  const clock = options.clock ?? systemClock;
  const abort = new AbortController();
  const duplicates = new RateFault(
    options.duplicateDeliveryRate ?? 0,
    seededRandom((options.seed ?? 1) + 31_337),
    'duplicateDeliveryRate',
  );
  let engine: SchedulerEngine | undefined;
  const store = new ScheduleStore({
    region: options.region,
    accountId: options.accountId,
    now: () => clock.now(),
    onChange: (change) => engine?.onChange(change),
  });
  engine = new SchedulerEngine(
    store,
    clock,
    {
      sqs: options.sqs,
      queueUrlOf: options.queueUrlOf,
      signal: abort.signal,
      onNote: options.onNote ?? (() => {}),
    },
    duplicates,
  );
  const running = engine;
  const server = await startSchedulerHttpServer(store, running, options.port);
  let stopped: Promise<void> | undefined;
  return {
    url: server.url,
    createScheduleGroup: (name) => void store.createGroup(name),
    createSchedule: (input) => void store.create(input),
    fireNow: (name, fireOptions) => running.fireNow(name, fireOptions),
    setDuplicateDeliveryRate: (rate) => duplicates.setRate(rate),
    duplicateNextFirings: (count) => duplicates.forceNext(count),
    firings: () => running.firings(),
    planned: () => running.planned(),
    stats: () => running.stats(),
    idle: () => running.idle(),
    stop() {
      stopped ??= (async () => {
        running.stop();
        abort.abort();
        // Retry waits end at the abort; sends in flight finish before the runtime closes its clients.
        await running.settled();
        await server.close();
      })();
      return stopped;
    },
  };
}
