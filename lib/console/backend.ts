/**
 * What the console's API does, independent of HTTP, one module per page under backend/:
 * - queues (backend/queues.ts, sampled on a timer by backend/sampler.ts, so the chart has a
 *   history before the page is opened);
 * - dead letters and one message (backend/dead-letters.ts, over the shared, locked DLQ reads of
 *   backend/dlq-reads.ts);
 * - redrive with a dry run first (backend/redrive.ts) and what came back (backend/verify.ts);
 * - a job, its record, dead letters and chain (backend/job.ts);
 * - schedules: pending jobs sent for later, recurring schedules, cancel and fire now, and the
 *   flow-control limits panel (backend/schedules.ts).
 * Every operation is one of `sqs-jobs/ops`, with the same holding rules as `sqs-jobs dlq`. What
 * the page receives is built field by field; no client, credential or receipt handle leaves.
 *
 * This class only wires them together: lib/console/server.ts routes each request to one method.
 */

import { type ConfigView, configView } from './backend/config.ts';
import type { ConsoleContext } from './backend/context.ts';
import { deadLettersView, messageView } from './backend/dead-letters.ts';
import { CONSOLE_DEFAULTS } from './backend/defaults.ts';
import { DeadLetterReads } from './backend/dlq-reads.ts';
import { ConsoleRequestError } from './backend/errors.ts';
import { type JobView, jobView } from './backend/job.ts';
import { QueuesPage, type QueuesView } from './backend/queues.ts';
import { type RedriveRequest, Redrives } from './backend/redrive.ts';
import { QueueSampler } from './backend/sampler.ts';
import { type LimitsView, SchedulesPage, type SchedulesView } from './backend/schedules.ts';
import { verifyView } from './backend/verify.ts';
import type { JobLookup } from './jobs.ts';
import type { ConsoleQueue, ConsoleSetup } from './setup.ts';

/** The console's operations over a {@link ConsoleSetup}. */
export class ConsoleBackend {
  readonly setup: ConsoleSetup;
  readonly readOnly: boolean;
  /** Seconds between samples: the setup's, else 10 on AWS and 2 elsewhere. */
  readonly sampleSeconds: number;
  readonly #ctx: ConsoleContext;
  readonly #queuesPage: QueuesPage;
  readonly #redrives: Redrives;
  readonly #schedules: SchedulesPage;

  /** @throws {RangeError} when two queues of the setup share an id. */
  constructor(
    setup: ConsoleSetup,
    options: { readonly readOnly?: boolean; readonly now?: () => number } = {},
  ) {
    this.setup = setup;
    this.readOnly = options.readOnly ?? false;
    this.sampleSeconds =
      setup.sampleSeconds ??
      (setup.mode === 'aws' ? CONSOLE_DEFAULTS.sampleSecondsAws : CONSOLE_DEFAULTS.sampleSecondsLocal);
    const byId = new Map(setup.queues.map((q) => [q.id, q]));
    if (byId.size !== setup.queues.length) throw new RangeError('console queue ids must be unique');
    const now = options.now ?? Date.now;
    const sampler = new QueueSampler(setup, now);
    this.#ctx = {
      setup,
      readOnly: this.readOnly,
      now,
      sampler,
      dlqs: new DeadLetterReads(setup, sampler, now),
      queue(id: string): ConsoleQueue {
        const queue = byId.get(id);
        if (queue === undefined) throw new ConsoleRequestError(404, `no queue "${id}" in this console`);
        return queue;
      },
    };
    this.#queuesPage = new QueuesPage(this.#ctx);
    this.#redrives = new Redrives(this.#ctx);
    this.#schedules = new SchedulesPage(this.#ctx);
  }

  /** What the page learns first (backend/config.ts). */
  config(): ConfigView {
    return configView(this.setup, this.readOnly, this.sampleSeconds);
  }

  /** Takes a sample now, then every {@link sampleSeconds} until {@link stop}. */
  start(): Promise<void> {
    return this.#ctx.sampler.start(this.sampleSeconds);
  }

  /** Stops sampling; waits for a sample in progress. */
  stop(): Promise<void> {
    return this.#ctx.sampler.stop();
  }

  /** Reads the numbers of every queue once and keeps them as a sample. Never throws. */
  sample(): Promise<void> {
    return this.#ctx.sampler.sample();
  }

  /** The queues page: latest numbers, samples after `sinceMs` (epoch ms), completions and alarms. */
  queues(sinceMs = 0): Promise<QueuesView> {
    return this.#queuesPage.view(sinceMs);
  }

  /** The dead letters of a queue's DLQ, grouped by cause (backend/dead-letters.ts). */
  deadLetters(queueId: string, options: { readonly refresh?: boolean } = {}) {
    return deadLettersView(this.#ctx, queueId, options.refresh ?? false);
  }

  /** One DLQ message with its body and evidence (backend/dead-letters.ts). */
  message(queueId: string, messageId: string) {
    return messageView(this.#ctx, queueId, messageId);
  }

  /** A dry run, or the confirmed run of a dry run's plan (backend/redrive.ts). */
  redrive(queueId: string, request: RedriveRequest) {
    return this.#redrives.run(queueId, request);
  }

  /** What came back of a redrive of this console (backend/verify.ts). */
  verify(redriveId: string) {
    return verifyView(this.#ctx, this.#redrives.find(redriveId));
  }

  /** Pending jobs sent for later and recurring schedules (backend/schedules.ts). */
  schedules(): Promise<SchedulesView> {
    return this.#schedules.view();
  }

  /** Cancels a job sent for later (backend/schedules.ts). */
  cancelScheduledJob(request: { readonly jobId: string; readonly source?: string }) {
    return this.#schedules.cancel(request);
  }

  /** Fires a recurring schedule now (backend/schedules.ts). */
  fireSchedule(request: { readonly name: string; readonly group: string }) {
    return this.#schedules.fire(request);
  }

  /** Each flow-control limit's current rate and holders (backend/schedules.ts). */
  limits(): Promise<LimitsView> {
    return this.#schedules.limits();
  }

  /** A job: its record and steps, its dead letters and its chain (backend/job.ts). */
  job(lookup: JobLookup): Promise<JobView> {
    return jobView(this.#ctx, lookup);
  }
}
