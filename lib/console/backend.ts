/**
 * What the console's API does, independent of HTTP: samples the queues on a timer (so the chart
 * has a history before the page is opened), reads dead-letter queues, plans and runs redrives,
 * checks what came back, and looks jobs up. Every operation is one of `sqs-jobs/ops`:
 * `readQueueStats`, `readDeadLetters` + `summarizeDeadLetters` (reads never delete: each message
 * is held, then made visible again), `redriveDeadLetters` (FIFO-safe, dry run first) and
 * `verifyRedrive`; the same holding rules as `sqs-jobs dlq`.
 *
 * Reads and redrives of one DLQ never overlap (one lock per DLQ): two overlapping reads would each
 * see the other's held messages as missing. What the page receives is built here field by field;
 * no client, credential or receipt handle ever leaves this module.
 */
import { randomUUID } from 'node:crypto';
import type { DeadLetterMessage } from '../ops/dead-letter-message.ts';
import { type DeadLetterRead, readDeadLetters } from '../ops/dlq-reader.ts';
import type { DeadLetterFilter } from '../ops/filters.ts';
import { compileFilter, describeFilter } from '../ops/filters.ts';
import { type ChainDeadLetterQueue, type JobChain, walkJobChain } from '../ops/job-chain.ts';
import { type OldestMessageAgeSource, unknownOldestAges } from '../ops/oldest-age.ts';
import { type MovedItem, redriveDeadLetters, redriveScope, verifyRedrive } from '../ops/redrive.ts';
import { type QueueStats, readQueueStats } from '../ops/stats.ts';
import { type DeadLetterSummary, summarizeDeadLetters } from '../ops/summary.ts';
import { decodeDefaultJobKey } from '../runtime/idempotency/keys.ts';
import { type JobLookup, type JobRecordView, lookupJobRecord, lookupKey, readItemOf } from './jobs.ts';
import type { ConsoleAlarm, ConsoleQueue, ConsoleSetup } from './setup.ts';

/** Defaults of the backend, defined once. */
export const CONSOLE_DEFAULTS = {
  /** Seconds between samples on emulators / on AWS. */
  sampleSecondsLocal: 2,
  sampleSecondsAws: 10,
  /** How long samples are kept for the chart, minutes. */
  historyMinutes: 60,
  /** A DLQ read younger than this is served from memory unless a refresh is asked for, ms. */
  deadLetterCacheMs: 5_000,
  /** Alarm states and CloudWatch series are read at most this often, ms. */
  cloudWatchCacheMs: 60_000,
  /** A dry run's plan can be confirmed within this long, ms. */
  planTtlMs: 10 * 60_000,
  /** Messages listed per DLQ on the page. */
  maxListedMessages: 500,
  /** Longest body returned for one message, characters. */
  maxBodyChars: 256 * 1024,
} as const;

/** A client error of the console API (the server answers 4xx with its message). */
export class ConsoleRequestError extends Error {
  override readonly name = 'ConsoleRequestError';
  constructor(
    readonly status: 400 | 403 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

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

/** One sample: per queue id `[visible, inFlight, delayed, dlqVisible, dlqInFlight, completedSoFar]`. */
export interface QueueSample {
  readonly t: number;
  readonly q: Record<string, readonly [number, number, number, number, number, number | null]>;
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

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

interface DlqRead {
  readonly at: number;
  readonly read: DeadLetterRead;
  readonly summary: DeadLetterSummary;
}

interface Plan {
  readonly id: string;
  readonly queueId: string;
  readonly filter: DeadLetterFilter;
  /** Messages the dry run selected (shown; a confirmed run moves what matches when it runs). */
  readonly count: number;
  readonly createdAt: number;
  used: boolean;
}

interface Redrive {
  readonly id: string;
  readonly queueId: string;
  readonly dlqUrl: string;
  readonly redriven: readonly MovedItem[];
  readonly seen: readonly string[];
  readonly at: number;
}

/** A DLQ message as the page lists it. */
function listedMessage(m: DeadLetterMessage) {
  return {
    messageId: m.messageId,
    jobId: m.job?.id,
    jobSource: m.job?.source,
    jobType: m.jobType,
    reason: m.reason,
    errorName: m.errorName,
    errorMessage: m.evidence.errorMessage,
    attempts: m.evidence.attempts,
    lastFailureAt: m.evidence.lastFailureAt,
    sentAt: m.sentAtMs === undefined ? undefined : new Date(m.sentAtMs).toISOString(),
    messageGroupId: m.messageGroupId,
  };
}

/** A DLQ message with its body and evidence (never its receipt handle). */
function fullMessage(m: DeadLetterMessage) {
  const body =
    m.body.length <= CONSOLE_DEFAULTS.maxBodyChars
      ? m.body
      : `${m.body.slice(0, CONSOLE_DEFAULTS.maxBodyChars)}…[${m.body.length - CONSOLE_DEFAULTS.maxBodyChars} more characters]`;
  return {
    ...listedMessage(m),
    body,
    evidence: m.evidence,
    hasEvidence: m.hasEvidence,
    job: m.job,
    sequenceNumber: m.sequenceNumber,
    receiveCount: m.receiveCount,
  };
}

/** `source` and `id` of a redriven item's job key (`["<source>","<id>"]`), when it has one. */
function identityOfJobKey(jobKey: string): { source: string; id: string } | undefined {
  if (!jobKey.startsWith('[')) return undefined;
  try {
    const [source, id] = JSON.parse(jobKey) as [unknown, unknown];
    return typeof source === 'string' && typeof id === 'string' ? { source, id } : undefined;
  } catch {
    return undefined;
  }
}

/** The console's operations over a {@link ConsoleSetup}. */
export class ConsoleBackend {
  readonly setup: ConsoleSetup;
  readonly readOnly: boolean;
  readonly sampleSeconds: number;
  readonly #now: () => number;
  readonly #oldestAge: OldestMessageAgeSource;
  readonly #byId: Map<string, ConsoleQueue>;
  readonly #dlqUrlsByArn = new Map<string, string>();
  readonly #history: QueueSample[] = [];
  #latest: { at: string; queues: QueueStats[] } | undefined;
  #sampleError: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> | undefined;
  #stopped = false;
  readonly #locks = new Map<string, Lock>();
  readonly #reads = new Map<string, DlqRead>();
  readonly #plans = new Map<string, Plan>();
  readonly #redrives = new Map<string, Redrive>();
  #alarms: { at: number; value: QueuesView['alarms'] } | undefined;
  #series: { at: number; value: QueuesView['completions'] } | undefined;

  constructor(
    setup: ConsoleSetup,
    options: { readonly readOnly?: boolean; readonly now?: () => number } = {},
  ) {
    this.setup = setup;
    this.readOnly = options.readOnly ?? false;
    this.#now = options.now ?? Date.now;
    this.sampleSeconds =
      setup.sampleSeconds ??
      (setup.mode === 'aws' ? CONSOLE_DEFAULTS.sampleSecondsAws : CONSOLE_DEFAULTS.sampleSecondsLocal);
    this.#oldestAge =
      setup.oldestAge ??
      unknownOldestAges(
        'SQS reports the age of the oldest message only as a CloudWatch metric, which this endpoint does not have',
      );
    this.#byId = new Map(setup.queues.map((q) => [q.id, q]));
    if (this.#byId.size !== setup.queues.length) throw new RangeError('console queue ids must be unique');
  }

  /** Takes a sample now, then every {@link sampleSeconds} until {@link stop}. */
  start(): Promise<void> {
    const loop = async () => {
      if (this.#stopped) return;
      this.#sampling = this.sample();
      await this.#sampling;
      if (this.#stopped) return;
      this.#timer = setTimeout(loop, this.sampleSeconds * 1000);
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
        sqs: this.setup.sqs,
        queueUrls: this.setup.queues.map((q) => q.url),
        oldestAge: this.#oldestAge,
        deadLetterQueueUrls: this.#dlqUrlsByArn,
        nowMs: this.#now,
      });
      const counted =
        this.setup.completions?.kind === 'counter'
          ? this.setup.completions.read()
          : new Map<string, number>();
      const q: Record<string, [number, number, number, number, number, number | null]> = {};
      for (const stats of report.queues) {
        const queue = this.setup.queues.find((c) => c.url === stats.url);
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
      this.#sampleError = undefined;
    } catch (error) {
      this.#sampleError = errorText(error);
    }
  }

  #queue(id: string): ConsoleQueue {
    const queue = this.#byId.get(id);
    if (queue === undefined) throw new ConsoleRequestError(404, `no queue "${id}" in this console`);
    return queue;
  }

  /** The DLQ URL of a queue: from the setup, else from its redrive policy (a sample reads it). */
  async #dlqUrl(queue: ConsoleQueue): Promise<string> {
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
        `queue ${queue.id} has no dead-letter queue: ${found?.deadLetterQueueNote ?? this.#sampleError ?? 'its redrive policy names none'}`,
      );
    }
    return url;
  }

  #lock(dlqUrl: string): Lock {
    let lock = this.#locks.get(dlqUrl);
    if (lock === undefined) {
      lock = new Lock();
      this.#locks.set(dlqUrl, lock);
    }
    return lock;
  }

  /** The queues page: latest numbers, samples after `sinceMs`, completions and alarms. */
  async queues(sinceMs = 0): Promise<QueuesView> {
    const latest = this.#latest;
    const queues = (latest?.queues ?? []).flatMap((stats): QueueView[] => {
      const queue = this.setup.queues.find((c) => c.url === stats.url);
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
      history: this.#history.filter((s) => s.t > sinceMs),
      completions: await this.#completions(),
      alarms: await this.#readAlarms(),
      error: this.#sampleError,
    };
  }

  async #completions(): Promise<QueuesView['completions']> {
    const source = this.setup.completions;
    if (source === undefined) {
      return {
        kind: 'none',
        label:
          'completions are not available here: the workers run elsewhere and this endpoint has no metrics ' +
          '(sqs-jobs local --console counts them; on AWS they come from CloudWatch)',
      };
    }
    if (source.kind === 'counter') return { kind: 'counter', label: source.label };
    const now = this.#now();
    if (this.#series !== undefined && now - this.#series.at < CONSOLE_DEFAULTS.cloudWatchCacheMs) {
      return this.#series.value;
    }
    let value: QueuesView['completions'];
    try {
      const read = await source.read(this.setup.queues, CONSOLE_DEFAULTS.historyMinutes);
      value = { kind: 'series', label: source.label, ...read };
    } catch (error) {
      value = { kind: 'series', label: source.label, t: [], series: {}, notes: [errorText(error)] };
    }
    this.#series = { at: now, value };
    return value;
  }

  async #readAlarms(): Promise<QueuesView['alarms']> {
    const source = this.setup.alarms;
    if (source === undefined) return null;
    const now = this.#now();
    if (this.#alarms !== undefined && now - this.#alarms.at < CONSOLE_DEFAULTS.cloudWatchCacheMs) {
      return this.#alarms.value;
    }
    const names = new Map<string, string>();
    for (const stats of this.#latest?.queues ?? []) {
      const queue = this.setup.queues.find((c) => c.url === stats.url);
      if (queue === undefined) continue;
      names.set(stats.name, queue.id);
      if (stats.deadLetterQueue) names.set(stats.deadLetterQueue.name, queue.id);
    }
    let value: QueuesView['alarms'];
    try {
      value = { label: source.label, items: await source.read(this.setup.queues, names) };
    } catch (error) {
      value = { label: source.label, items: [], error: errorText(error) };
    }
    this.#alarms = { at: now, value };
    return value;
  }

  async #readDlq(queue: ConsoleQueue, refresh: boolean): Promise<DlqRead> {
    const dlqUrl = await this.#dlqUrl(queue);
    const cached = this.#reads.get(dlqUrl);
    if (!refresh && cached !== undefined && this.#now() - cached.at < CONSOLE_DEFAULTS.deadLetterCacheMs) {
      return cached;
    }
    return this.#lock(dlqUrl).run(async () => {
      const again = this.#reads.get(dlqUrl);
      if (again !== undefined && again !== cached) return again;
      const read = await readDeadLetters({
        sqs: this.setup.sqs,
        queueUrl: dlqUrl,
        ...this.#waitSeconds(),
        now: this.#now,
      });
      const entry = { at: this.#now(), read, summary: summarizeDeadLetters(read.messages) };
      this.#reads.set(dlqUrl, entry);
      return entry;
    });
  }

  #waitSeconds(): { waitTimeSeconds: number } {
    return { waitTimeSeconds: this.setup.dlqWaitSeconds ?? (this.setup.mode === 'aws' ? 1 : 0) };
  }

  /** The dead letters of a queue's DLQ, grouped by cause (reason, then job type). */
  async deadLetters(queueId: string, options: { readonly refresh?: boolean } = {}) {
    const queue = this.#queue(queueId);
    const { at, read, summary } = await this.#readDlq(queue, options.refresh ?? false);
    const notes: string[] = [];
    if (read.notRead > 0) {
      notes.push(
        read.queue.fifo
          ? `about ${read.notRead} more messages could not be read: on a FIFO queue a group's later messages stay locked while its first one is held, and reading never deletes (a redrive moves a group in order)`
          : `about ${read.notRead} messages reported visible were not seen (counts are approximate)`,
      );
    }
    if (read.queue.approximateNotVisible > 0) {
      notes.push(
        `${read.queue.approximateNotVisible} messages were in flight (held by another reader) and could not be read`,
      );
    }
    for (const failure of read.release.failed) {
      notes.push(
        `message ${failure.messageId} could not be made visible at once (${failure.code}); visible again by ${failure.visibleBy}`,
      );
    }
    return {
      queue: { id: queue.id, url: queue.url },
      dlq: {
        name: read.queue.name,
        url: read.queue.url,
        fifo: read.queue.fifo,
        approximateVisible: read.queue.approximateVisible,
        approximateNotVisible: read.queue.approximateNotVisible,
      },
      readAt: new Date(at).toISOString(),
      total: read.messages.length,
      stoppedBy: read.stoppedBy,
      notRead: read.notRead,
      notes,
      groups: summary.groups.map((g) => ({
        reason: g.key.reason ?? '',
        jobType: g.key.jobType ?? '',
        count: g.count,
        errorNames: g.errorNames,
        firstFailureAt: g.firstFailureAt,
        lastFailureAt: g.lastFailureAt,
        oldestSentAt: g.oldestSentAt,
        newestSentAt: g.newestSentAt,
        attempts: g.attempts,
        handlerVersions: g.handlerVersions,
        errorMessages: g.errorMessages,
        sample: g.sample,
      })),
      messages: read.messages.slice(0, CONSOLE_DEFAULTS.maxListedMessages).map(listedMessage),
      readOnly: this.readOnly,
    };
  }

  /** One DLQ message with its body and evidence (from the latest read; read again when not in it). */
  async message(queueId: string, messageId: string) {
    const queue = this.#queue(queueId);
    let entry = await this.#readDlq(queue, false);
    let found = entry.read.messages.find((m) => m.messageId === messageId);
    if (found === undefined) {
      entry = await this.#readDlq(queue, true);
      found = entry.read.messages.find((m) => m.messageId === messageId);
    }
    if (found === undefined) {
      throw new ConsoleRequestError(
        404,
        `message ${messageId} is not (or no longer) in ${entry.read.queue.name}`,
      );
    }
    return { queue: { id: queue.id }, dlq: { name: entry.read.queue.name }, message: fullMessage(found) };
  }

  /**
   * A redrive of a queue's DLQ back to the queue, as `sqs-jobs dlq redrive` does it (the same
   * {@link redriveDeadLetters}, the same filter, no other limit). With `dryRun`, reads and selects
   * only and returns a plan id and what a confirmed run will move ({@link redriveScope}: on a FIFO
   * DLQ also the messages behind each group's first, which no dry run can see); without, needs the
   * plan id of a dry run of the same queue (at most {@link CONSOLE_DEFAULTS.planTtlMs} old, used
   * once, that selected something) and moves what matches its filter when it runs.
   */
  async redrive(
    queueId: string,
    request: { readonly filter?: DeadLetterFilter; readonly dryRun: boolean; readonly planId?: string },
  ) {
    if (this.readOnly)
      throw new ConsoleRequestError(403, 'this console is read-only (--read-only): no redrive');
    const queue = this.#queue(queueId);
    const dlqUrl = await this.#dlqUrl(queue);
    let filter = request.filter ?? {};
    let plan: Plan | undefined;
    if (!request.dryRun) {
      plan = request.planId === undefined ? undefined : this.#plans.get(request.planId);
      if (plan === undefined || plan.queueId !== queue.id) {
        throw new ConsoleRequestError(409, 'run a dry run first: a redrive needs the plan of a dry run');
      }
      if (plan.used)
        throw new ConsoleRequestError(409, 'this plan was already carried out: run a new dry run');
      if (this.#now() - plan.createdAt > CONSOLE_DEFAULTS.planTtlMs) {
        throw new ConsoleRequestError(409, 'the dry run is older than 10 minutes: run it again');
      }
      if (plan.count === 0) throw new ConsoleRequestError(409, 'the dry run selected nothing to move');
      plan.used = true;
      filter = plan.filter;
    }
    const result = await this.#lock(dlqUrl).run(() =>
      redriveDeadLetters({
        sqs: this.setup.sqs,
        dlqUrl,
        targetUrl: queue.url,
        filter,
        dryRun: request.dryRun,
        ...this.#waitSeconds(),
        now: this.#now,
      }),
    );
    this.#reads.delete(dlqUrl);
    const skipped = { notSelected: 0, groupBlocked: 0, cameBack: 0 };
    for (const s of result.skipped) {
      if (s.why === 'not-selected') skipped.notSelected += 1;
      else if (s.why === 'group-blocked') skipped.groupBlocked += 1;
      else skipped.cameBack += 1;
    }
    const common = {
      dlq: result.plan.dlq.name,
      target: result.plan.target.name,
      fifo: result.plan.dlq.fifo,
      filter: describeFilter(filter),
      warnings: result.plan.warnings,
      read: result.read,
      notRead: result.notRead,
      skipped,
      releaseFailures: result.release.failed.length,
    };
    const item = (i: { messageId: string; jobId?: string; jobType: string; reason: string }) => ({
      messageId: i.messageId,
      jobId: i.jobId,
      jobType: i.jobType,
      reason: i.reason,
    });
    if (request.dryRun) {
      const id = randomUUID();
      const now = this.#now();
      for (const [key, old] of this.#plans) {
        if (now - old.createdAt > CONSOLE_DEFAULTS.planTtlMs) this.#plans.delete(key);
      }
      this.#plans.set(id, {
        id,
        queueId: queue.id,
        filter,
        count: result.selected.length,
        createdAt: now,
        used: false,
      });
      return {
        ...common,
        dryRun: true as const,
        planId: id,
        selected: result.selected.length,
        scope: redriveScope(result),
        sample: result.selected.slice(0, 20).map(item),
      };
    }
    const redriven = [...result.moved, ...result.notDeleted];
    const id = randomUUID();
    this.#redrives.set(id, {
      id,
      queueId: queue.id,
      dlqUrl,
      redriven,
      seen: result.seenMessageIds,
      at: this.#now(),
    });
    return {
      ...common,
      dryRun: false as const,
      redriveId: id,
      dryRunSelected: plan?.count ?? 0,
      moved: result.moved.map(item),
      failed: result.failed.map((f) => ({ ...item(f), code: f.code, message: f.message })),
      notDeleted: result.notDeleted.map((f) => ({ ...item(f), code: f.code, message: f.message })),
      stoppedBy: result.stoppedBy,
    };
  }

  /**
   * What came back of a redrive: the DLQ is read again (nothing deleted) and the redriven jobs
   * found in it are listed ({@link verifyRedrive}); each redriven job's idempotency status is
   * read too, when the table is known.
   */
  async verify(redriveId: string) {
    const redrive = this.#redrives.get(redriveId);
    if (redrive === undefined) throw new ConsoleRequestError(404, `no redrive ${redriveId} in this console`);
    const queue = this.#queue(redrive.queueId);
    const result = await this.#lock(redrive.dlqUrl).run(() =>
      verifyRedrive({
        sqs: this.setup.sqs,
        dlqUrl: redrive.dlqUrl,
        targetUrl: queue.url,
        redriven: redrive.redriven,
        exclude: redrive.seen,
        ...this.#waitSeconds(),
        now: this.#now,
      }),
    );
    this.#reads.delete(redrive.dlqUrl);
    const jobs: { jobId: string | undefined; jobType: string; status: string | null; source?: string }[] = [];
    for (const item of redrive.redriven.slice(0, 50)) {
      const identity = identityOfJobKey(item.jobKey);
      let status: string | null = null;
      if (
        identity !== undefined &&
        this.setup.dynamodb !== undefined &&
        this.setup.idempotencyTables.length > 0
      ) {
        try {
          const view = await lookupJobRecord(
            this.setup.dynamodb,
            this.setup.idempotencyTables,
            { type: item.jobType, source: identity.source, id: identity.id },
            { scanSteps: false },
          );
          status = typeof view.record?.status === 'string' ? view.record.status : null;
        } catch {
          status = null;
        }
      }
      jobs.push({
        jobId: item.jobId,
        jobType: item.jobType,
        status,
        ...(identity ? { source: identity.source } : {}),
      });
    }
    return {
      redriveId,
      checkedAt: new Date(this.#now()).toISOString(),
      redrivenJobs: result.redrivenJobs,
      cameBack: result.cameBack.map((c) => ({
        jobId: c.redriven.jobId,
        jobType: c.redriven.jobType,
        messageId: c.messageId,
        matchedBy: c.matchedBy,
        reason: c.reason,
        errorName: c.errorName,
        errorMessage: c.errorMessage,
        sentAt: c.sentAt,
      })),
      unverified: result.unverified.map((u) => ({
        jobId: u.redriven.jobId,
        jobType: u.redriven.jobType,
        messageGroupId: u.messageGroupId,
      })),
      read: result.read,
      notRead: result.notRead,
      targetPending: result.targetPending,
      // Jobs parked after the redrive read their group, left first of it: named with the command
      // that moves them (lib/ops/stranded-parks.ts), as `sqs-jobs dlq redrive --verify-seconds` does.
      strandedParked: {
        left: result.strandedParked.left.map((l) => ({
          jobId: l.jobId,
          jobType: l.jobType,
          messageId: l.messageId,
          messageGroupId: l.messageGroupId,
        })),
        command: result.strandedParked.command,
      },
      jobs,
    };
  }

  /**
   * A job: its idempotency record and steps, its dead letters in any DLQ of the console, and its
   * chain (lib/ops/job-chain.ts, as `sqs-jobs job` prints it): parent, children, the whole chain
   * from the first send to the last descendant.
   */
  async job(lookup: JobLookup): Promise<{
    readonly lookup: JobLookup;
    readonly record: JobRecordView | null;
    readonly recordNote: string | undefined;
    readonly deadLetters: readonly {
      readonly queueId: string;
      readonly dlq: string;
      readonly message: ReturnType<typeof fullMessage>;
    }[];
    readonly deadLetterNotes: readonly string[];
    readonly chain: JobChain | null;
    readonly chainNote: string | undefined;
  }> {
    if (lookup.type === '') throw new ConsoleRequestError(400, 'give the job type');
    let key: string;
    try {
      key = lookupKey(lookup);
    } catch (error) {
      throw new ConsoleRequestError(400, errorText(error));
    }
    let record: JobRecordView | null = null;
    let recordNote: string | undefined;
    if (this.setup.dynamodb === undefined || this.setup.idempotencyTables.length === 0) {
      recordNote =
        'no idempotency table is known to this console (pass --idempotency-table or --outputs-file)';
    } else {
      try {
        record = await lookupJobRecord(this.setup.dynamodb, this.setup.idempotencyTables, lookup, {
          scanSteps: this.setup.scanSteps ?? this.setup.mode !== 'aws',
        });
      } catch (error) {
        if (error instanceof RangeError) throw new ConsoleRequestError(400, error.message);
        recordNote = `the idempotency table could not be read: ${errorText(error)}`;
      }
    }
    const decoded = decodeDefaultJobKey(key);
    const id = lookup.id ?? decoded?.id;
    const source = lookup.id !== undefined ? lookup.source : decoded?.source;
    const deadLetters: { queueId: string; dlq: string; message: ReturnType<typeof fullMessage> }[] = [];
    const deadLetterNotes: string[] = [];
    if (id === undefined) {
      deadLetterNotes.push('the key is not an envelope source + id: dead letters are matched by envelope id');
    } else {
      const matches = compileFilter({ jobIds: [id] });
      for (const queue of this.setup.queues) {
        try {
          const { read } = await this.#readDlq(queue, false);
          for (const m of read.messages) {
            if (!matches(m) || m.jobType !== lookup.type) continue;
            if (source !== undefined && source !== '' && m.job?.source !== source) continue;
            deadLetters.push({ queueId: queue.id, dlq: read.queue.name, message: fullMessage(m) });
          }
        } catch (error) {
          deadLetterNotes.push(`${queue.id}: ${errorText(error)}`);
        }
      }
    }
    let chain: JobChain | null = null;
    let chainNote: string | undefined;
    if (this.setup.dynamodb !== undefined && this.setup.idempotencyTables.length > 0) {
      const queueIdOfDlq = new Map<string, string>();
      try {
        const walked = await walkJobChain({
          tables: this.setup.idempotencyTables,
          readItem: readItemOf(this.setup.dynamodb),
          start: { type: lookup.type, key },
          deadLetters: () => this.#chainDeadLetters(queueIdOfDlq),
          now: this.#now,
        });
        // The page links a dead letter to its DLQ view, which is named by the console's queue id.
        chain = {
          ...walked,
          jobs: walked.jobs.map((j) =>
            j.deadLetter === undefined
              ? j
              : { ...j, deadLetter: { ...j.deadLetter, queueId: queueIdOfDlq.get(j.deadLetter.dlq) } },
          ),
        };
      } catch (error) {
        chainNote = `the chain could not be read: ${errorText(error)}`;
      }
    } else {
      chainNote = 'the chain is read from the idempotency table: none is known to this console';
    }
    return { lookup, record, recordNote, deadLetters, deadLetterNotes, chain, chainNote };
  }

  /** Every DLQ of the console as the chain walk reads them (the cached, held-and-released reads). */
  async #chainDeadLetters(queueIdOfDlq: Map<string, string>): Promise<ChainDeadLetterQueue[]> {
    const out: ChainDeadLetterQueue[] = [];
    for (const queue of this.setup.queues) {
      try {
        const { read } = await this.#readDlq(queue, false);
        queueIdOfDlq.set(read.queue.name, queue.id);
        out.push({
          name: read.queue.name,
          messages: read.messages,
          notRead: read.notRead,
          fifo: read.queue.fifo,
        });
      } catch (error) {
        out.push({ name: `${queue.id} DLQ`, messages: [], notRead: 0, fifo: false, error: errorText(error) });
      }
    }
    return out;
  }
}
