/**
 * `JobClient`: how other services send jobs. Each job travels as a CloudEvents envelope
 * (lib/core/envelope.ts) in the SQS message body; the partition key becomes the `MessageGroupId`
 * (FIFO: order per key; standard: the tenant of a fair queue, Amazon SQS fair queues) and FIFO
 * queues get a `MessageDeduplicationId` derived from `source`, `id`, `type` and `data`.
 *
 * Rules and their sources:
 * - SendMessageBatch API reference: at most 10 entries per request; the sum of the message sizes
 *   within the 1 MiB message limit; a 200 response can still carry `Failed` entries, each with
 *   `SenderFault` (BatchResultErrorEntry).
 * - SendMessage API reference: 1 MiB (1,048,576 bytes) per message, attributes included
 *   (raised from 256 KiB in August 2025); `DelaySeconds` 0–900 and not per message on FIFO
 *   queues; `MessageGroupId` required on FIFO queues, 1–128 printable ASCII characters.
 * - Amazon SQS FIFO key terms: a `MessageDeduplicationId` (max 128 chars) is remembered for 5
 *   minutes; a retried entry keeps its dedup id, so a FIFO queue never gets it twice.
 *
 * Where the parts are: what sends now (the options checked, the batching by count and bytes, the
 * retry loop) is job-sender.ts, which workers also send their children through; the checks
 * before sending are in prepare.ts, the retry policy in retry.ts; this class adds jobs sent for
 * later (scheduled-jobs.ts, loaded at first use) and batches (batch-start.ts).
 */
import { randomUUID } from 'node:crypto';
import type { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { batchIdProblem } from '../core/batch.ts';
import type { JobEnvelope } from '../core/envelope.ts';
import type { LogWriter } from '../core/logger.ts';
import { isFifoQueueUrl } from '../core/queue-urls.ts';
import {
  type BatchSpec,
  type BatchStarted,
  delayedWatchdogScheduler,
  startBatchWith,
  type WatchdogScheduler,
} from './batch-start.ts';
import { BATCH_OPTION_KEYS, batchTable, type JobClientBatchOptions } from './batch-table.ts';
import { checkClientOptions } from './client-options.ts';
import { type EntryProblem, JobClientError } from './job-client-error.ts';
import { JobSender, refusal, singleResult } from './job-sender.ts';
import { describeValue, isPlainObject, unknownKeyProblems } from './option-keys.ts';
import type { BatchEntry, PreparedEntry, SendableJob, SendEnvelopeOptions, SendOptions } from './prepare.ts';
import type { ClientRetryOptions } from './retry.ts';
import { runAtMsOf, travelOf } from './run-at.ts';
import type { ScheduledJobs } from './scheduled-jobs.ts';
import {
  type CancelResult,
  type DynamoDbSender,
  isTableName,
  missingQueueScheduling,
  missingStateTable,
  type RescheduleResult,
  type ScheduledJobIdentity,
  type SchedulerSender,
  type SchedulingOptions,
  schedulingProblems,
} from './scheduling.ts';

export { DEFAULT_PAYLOAD_WARN_BYTES, setupProblem } from './job-sender.ts';
export type { BatchEntry, ParentLink, SendableJob, SendEnvelopeOptions, SendOptions } from './prepare.ts';

/**
 * The part of an SQS client the JobClient uses. An `SQSClient` of `@aws-sdk/client-sqs`
 * satisfies it; tests pass a small fake. The output is read as a `SendMessageBatchResult`.
 */
export interface SqsBatchSender {
  send(command: SendMessageBatchCommand): Promise<unknown>;
}

/** Options of {@link JobClient}. */
export interface JobClientOptions {
  /** Envelope `source` of every job sent, e.g. `"/services/checkout"`. Non-empty. */
  readonly source: string;
  /**
   * Logical queue name → queue URL, e.g. `{ booking: 'https://sqs.eu-west-1.amazonaws.com/123/booking.fifo' }`.
   * A URL ending in `.fifo` is a FIFO queue; trailing slashes are dropped; a plain object only
   * (not an array or a Map). Inside Lambda use {@link queueUrlsFromEnv}.
   */
  readonly queueUrls: Readonly<Record<string, string>>;
  /** @default `new SQSClient({})`, created on first send (region and endpoint from the environment) */
  readonly sqs?: SqsBatchSender;
  /**
   * Where warnings go, keys as one object (`ctx.logger`, a Powertools Logger and `console` fit).
   * @default JSON lines on stderr for warnings and errors; debug and info dropped
   */
  readonly logger?: LogWriter;
  /** Warn when a job's data is larger than this, in UTF-8 bytes of its JSON. @default 16,384 (16 KiB) */
  readonly payloadWarnBytes?: number;
  /**
   * Largest message (body + attributes, UTF-8 bytes) and largest batch request. Integer
   * 1–1,048,576; lower it to the queue's `MaximumMessageSize` when that is smaller.
   * @default 1,048,576 (1 MiB, the SQS limit since August 2025)
   */
  readonly maxMessageBytes?: number;
  /** Retries of entries SQS did not take. @default { maxAttempts: 3, baseDelayMs: 100 } */
  readonly retry?: Partial<ClientRetryOptions>;
  /**
   * Where jobs sent for later go (`send(..., { runAt })`, `cancel`, `reschedule`): each queue's
   * schedule group and scheduler role, and the idempotency table that keeps each job's state.
   * Inside Lambda use {@link schedulingFromEnv} (the variables `jobQueue.grantScheduleJobs(fn)` sets).
   * @default none: sending a job for later fails with `MissingScheduling`, saying what to set
   */
  readonly scheduling?: SchedulingOptions;
  /** @default `new SchedulerClient({})` of `@aws-sdk/client-scheduler`, loaded and created on the first job that goes as a schedule */
  readonly scheduler?: SchedulerSender;
  /**
   * The DynamoDB client of every path that reads or writes the idempotency table: jobs sent for
   * later, `cancel`, `reschedule`, and `startBatch`'s batch item.
   * @default `new DynamoDBClient({})` of `@aws-sdk/client-dynamodb`, loaded and created on first use
   *   (region and endpoint from the environment)
   */
  readonly dynamodb?: DynamoDbSender;
  /**
   * Where {@link JobClient.startBatch} keeps batches: the idempotency table of the workers that run
   * the children and the completion job (written with the `dynamodb` client above).
   * @default none: `startBatch` throws `BatchesNeedTable`
   */
  readonly batches?: JobClientBatchOptions;
  /**
   * How a batch's watchdog is sent to be checked at the batch's open limit.
   * @default an SQS delay of up to 900 s, then visibility timeouts until due (`delayedWatchdogScheduler`)
   */
  readonly scheduleBatchWatchdog?: WatchdogScheduler;
}

/** A job that was sent. */
export interface SentEntry {
  /** Position in the `sendBatch` input. */
  readonly index: number;
  /** Envelope `id`. */
  readonly id: string;
  /** SQS `MessageId`. */
  readonly messageId: string;
  /** Logical queue name. */
  readonly queue: string;
  /** FIFO queues only: the SQS `SequenceNumber`. */
  readonly sequenceNumber?: string;
  /** A job sent for later: when it is due, RFC 3339 UTC. */
  readonly runAt?: string;
  /**
   * A job sent for later: how it travels: `delay` (an SQS message with `DelaySeconds`, or sent at
   * once when due now) or `schedule` (a one-time EventBridge schedule; `messageId` is then empty:
   * the message is sent when the schedule fires).
   */
  readonly via?: 'delay' | 'schedule';
  /** `via: 'schedule'`: the schedule's name in its queue's group. */
  readonly scheduleName?: string;
}

/** A job that was not sent. */
export interface FailedEntry {
  /** Position in the `sendBatch` input. */
  readonly index: number;
  /** Envelope `id`: resending with the same `options.id` keeps the job's identity. */
  readonly id: string;
  /** Logical queue name. */
  readonly queue: string;
  /** SQS error code of the entry (`InternalError`, `InvalidParameterValue`, ...) or of the whole request. */
  readonly code: string;
  readonly message: string;
  /** True when resending the same message cannot help (SQS `SenderFault`, or a permanent request error). */
  readonly senderFault: boolean;
  /** The error of the whole request, when the request failed (not enumerable). */
  readonly cause?: unknown;
}

/** Result of {@link JobClient.sendBatch}: every entry is in exactly one list, each sorted by index. */
export interface BatchResult {
  readonly sent: SentEntry[];
  readonly failed: FailedEntry[];
}

/** Result of {@link JobClient.send}. */
export interface SendResult {
  readonly id: string;
  /** The SQS MessageId; empty for a job that went as a schedule (`via: 'schedule'`). */
  readonly messageId: string;
  readonly queue: string;
  /** FIFO queues only. */
  readonly sequenceNumber?: string;
  /** A job sent for later: when it is due, RFC 3339 UTC. */
  readonly runAt?: string;
  /** A job sent for later: `delay` (SQS `DelaySeconds`) or `schedule` (a one-time EventBridge schedule). */
  readonly via?: 'delay' | 'schedule';
  /** `via: 'schedule'`: the schedule's name. */
  readonly scheduleName?: string;
}

/**
 * A job envelope checked for a queue by {@link JobClient.checkEnvelope}: the parsed envelope and
 * the SendMessage parameters it would be sent with.
 */
export interface CheckedEnvelope {
  /** The envelope as the worker will parse it (extension attributes left out). */
  readonly envelope: JobEnvelope;
  /** Logical queue name. */
  readonly queue: string;
  readonly queueUrl: string;
  /** `MessageBody`: exactly the text given (or `JSON.stringify` of the object given). */
  readonly body: string;
  /** The envelope's `partitionkey`, when it has one (FIFO: required; standard: a fair queue's tenant). */
  readonly messageGroupId?: string;
  /** FIFO queues: SHA-256 of `source`, `id`, `type` and `data` ({@link deduplicationIdOf}). */
  readonly messageDeduplicationId?: string;
  /** Standard queues, when given. */
  readonly delaySeconds?: number;
  /** Message size as SQS counts it (body + attributes, UTF-8 bytes). */
  readonly bytes: number;
}

/**
 * Builds a `sendBatch` entry with its data checked against the job's type at compile time.
 * @example client.sendBatch([batchEntry(reserve, { bookingId }, { partitionKey: userId })])
 */
export function batchEntry<Data>(
  job: SendableJob<Data>,
  data: NoInfer<Data>,
  options?: SendOptions,
): BatchEntry {
  return options === undefined ? { job, data } : { job, data, options };
}

/** What is wrong with the `batches` option; empty when it is fine or absent. */
function batchesProblems(batches: unknown): string[] {
  if (batches === undefined) return [];
  if (!isPlainObject(batches)) {
    return [
      `batches must be an object { tableName } (the workers' idempotency table), got ${describeValue(batches)}`,
    ];
  }
  const problems = unknownKeyProblems(batches, BATCH_OPTION_KEYS, 'batches', {
    dynamodb: 'the JobClient option dynamodb: new JobClient({ dynamodb, batches: { tableName } })',
  });
  const table = batches.tableName;
  if (!isTableName(table)) {
    problems.push(
      `batches.tableName must be a DynamoDB table name (3-255 of a-z A-Z 0-9 _ . -), the workers' JOBS_IDEMPOTENCY_TABLE, got ${describeValue(table)}`,
    );
  }
  return problems;
}

/** Checks the identity given to cancel or reschedule. @throws {JobClientError} `InvalidArguments` naming what is wrong. */
function checkIdentity(identity: ScheduledJobIdentity, queueUrls: Readonly<Record<string, string>>): void {
  const problems: string[] = [];
  if (!isPlainObject(identity)) {
    problems.push(
      `the job's identity must be an object { queue, id, source? }, got ${describeValue(identity)}`,
    );
  } else {
    problems.push(...unknownKeyProblems(identity, ['queue', 'id', 'source'], 'identity'));
    if (typeof identity.queue !== 'string' || !Object.hasOwn(queueUrls, identity.queue)) {
      const known = Object.keys(queueUrls).sort().join(', ') || 'none';
      problems.push(
        `identity.queue must be a queue of queueUrls (known queues: ${known}), got ${describeValue(identity.queue)}`,
      );
    }
    if (typeof identity.id !== 'string' || identity.id === '') {
      problems.push(
        `identity.id must be the job's envelope id (the id send returned), got ${describeValue(identity.id)}`,
      );
    }
    if (identity.source !== undefined && (typeof identity.source !== 'string' || identity.source === '')) {
      problems.push(
        `identity.source must be a non-empty string (the envelope source), got ${describeValue(identity.source)}`,
      );
    }
  }
  if (problems.length > 0) {
    throw new JobClientError(`invalid job identity: ${problems.join('; ')}`, {
      code: 'InvalidArguments',
      senderFault: true,
      problems: problems.map((message) => ({ index: 0, type: undefined, message })),
    });
  }
}

/**
 * Sends jobs to their queues.
 *
 * @example
 * ```ts
 * import { defineJob } from 'sqs-jobs'; // or a job's { type, queue, schema } from plain JavaScript
 * import { JobClient, queueUrlsFromEnv } from 'sqs-jobs/client';
 * import { z } from 'zod';
 *
 * const reserveInventory = defineJob({
 *   type: 'booking.reserve-inventory',
 *   queue: 'booking',
 *   schema: z.object({ bookingId: z.string() }),
 *   async run() {},
 * });
 *
 * // Queue URLs from JOBS_QUEUE_URL_<NAME> variables, e.g. JOBS_QUEUE_URL_BOOKING.
 * const client = new JobClient({ source: '/services/checkout', queueUrls: queueUrlsFromEnv() });
 * const { id } = await client.send(reserveInventory, { bookingId: 'b-1' }, { partitionKey: 'user-7' });
 * console.log(`sent job ${id}`);
 * ```
 *
 * @throws {JobClientError} `InvalidOptions` from the constructor, listing every bad option (an
 *   unknown key too, with the nearest known one: options from plain JavaScript are not typed).
 */
export class JobClient {
  /** Sends what goes now; has the checked options. */
  readonly #sender: JobSender;
  readonly #scheduling: SchedulingOptions;
  readonly #scheduler: SchedulerSender | undefined;
  readonly #dynamodb: DynamoDbSender | undefined;
  /** The scheduled paths, loaded on first use (lib/client/scheduled-jobs.ts and the Scheduler and DynamoDB clients). */
  #scheduled: Promise<ScheduledJobs> | undefined;
  readonly #batches: JobClientBatchOptions | undefined;
  readonly #scheduleWatchdog: WatchdogScheduler;

  constructor(options: JobClientOptions) {
    this.#sender = new JobSender(
      options,
      checkClientOptions(options, (checked) => [
        ...schedulingProblems(checked.scheduling),
        ...batchesProblems(checked.batches),
      ]),
    );
    this.#scheduling = options.scheduling ?? {};
    this.#scheduler = options.scheduler;
    this.#dynamodb = options.dynamodb;
    this.#batches = options.batches;
    this.#scheduleWatchdog = options.scheduleBatchWatchdog ?? delayedWatchdogScheduler(this, Date.now);
  }

  /** The scheduled paths; a failed load is tried again on the next call. */
  #scheduledJobs(): Promise<ScheduledJobs> {
    this.#scheduled ??= import('./scheduled-jobs.ts').then(
      ({ ScheduledJobs }) =>
        new ScheduledJobs({
          source: this.#sender.settings.source,
          queueUrls: this.#sender.settings.queueUrls,
          scheduling: this.#scheduling,
          scheduler: this.#scheduler,
          dynamodb: this.#dynamodb,
          now: Date.now,
          sendNow: (entries) => this.#sender.sendPrepared(entries),
        }),
      (error: unknown) => {
        this.#scheduled = undefined;
        throw error;
      },
    );
    return this.#scheduled;
  }

  /**
   * Cancels a job sent for later (`send(..., { runAt })`) that has not started: one conditional
   * UpdateItem of its state item (`pending` → `cancelled`), then DeleteSchedule of its schedule,
   * if it has one (already fired or deleted is fine). From then on the job never runs: a message
   * of it that still arrives (a schedule that had fired, a `DelaySeconds` message) is recorded by
   * the worker as cancelled (`JobCancelled`) and deleted. Never throws for a job that already
   * started: it answers so.
   *
   * @param identity the job's `queue` (logical name) and `id`; `source` defaults to the client's.
   * @returns `cancelled` (with `scheduleDeleted`), `already-started` (a worker started it: too
   *   late), `already-cancelled`, or `not-found` (no job sent for later with that identity on that
   *   queue, or its state expired 14 days after its time).
   * @throws {JobClientError} `MissingScheduling` when the client has no `scheduling.idempotencyTableName`
   *   (set `JOBS_IDEMPOTENCY_TABLE` and pass `schedulingFromEnv()`); the DynamoDB error when the
   *   state could not be written (nothing changed then: call again).
   */
  async cancel(identity: ScheduledJobIdentity): Promise<CancelResult> {
    checkIdentity(identity, this.#sender.settings.queueUrls);
    return (await this.#scheduledJobs()).cancel(identity);
  }

  /**
   * Moves a job sent for later that has not started to a new time: its state item goes to the
   * next generation (conditional UpdateItem), then the new generation is sent: its schedule moved
   * (UpdateSchedule), or a new schedule `…-g<generation>` when the first had fired or the job went
   * with `DelaySeconds`, or an SQS message with `DelaySeconds` when the new time is within 15
   * minutes on a standard queue. A message of an earlier generation that still arrives is recorded
   * by the worker as superseded and deleted: the job runs once, at the new time.
   *
   * @param identity the job's `queue` (logical name) and `id`; `source` defaults to the client's.
   * @param runAt the new time: a `Date` or an RFC 3339 time with an offset, at most 366 days
   *   ahead; at or before now: due now.
   * @returns `rescheduled` (with the new `runAt`, `generation` and `via`), or why not:
   *   `already-started`, `already-cancelled`, `not-found`.
   * @throws {JobClientError} `InvalidArguments` for a bad identity or `runAt`; `MissingScheduling`
   *   when the client has no table, or no scheduling for the queue and the new time needs a
   *   schedule; the AWS error when the new generation could not be sent (the job then keeps its
   *   previous time, the message says so).
   */
  async reschedule(identity: ScheduledJobIdentity, runAt: Date | string): Promise<RescheduleResult> {
    checkIdentity(identity, this.#sender.settings.queueUrls);
    const due = runAtMsOf({ runAt }, Date.now(), 'reschedule');
    if (due === undefined || 'problem' in due) {
      throw new JobClientError(due?.problem ?? 'reschedule needs a runAt (a Date or an RFC 3339 time)', {
        code: 'InvalidArguments',
        senderFault: true,
      });
    }
    return (await this.#scheduledJobs()).reschedule(identity, due.runAtMs);
  }

  /**
   * Starts a batch: its children now, and its completion job (`spec.completion`) once every child is
   * counted (completed, or dead-lettered under `complete-with-failures`), exactly once
   * (docs/architecture.md, "Batches"). The batch is kept in the idempotency table of
   * `options.batches`; the children's and completion job's workers count it there.
   *
   * Writes the batch item (one PutItem), sends the children (SendMessageBatch, 10 per request) and
   * the batch's watchdog (checked at `openLimitSeconds`). Starting again with the same `spec.id`
   * (after an error, or a retry of the caller) starts nothing new and sends no second child.
   *
   * @param spec children, completion job (`completion`), `onChildDeadLettered`, `openLimitSeconds`, `id`;
   *   each child's and the completion job's data is type-checked against its job.
   * @returns the batch id, its number of children, and whether this call created it.
   * @throws {JobClientError} `BatchesNeedTable` when the client has no `batches.tableName`;
   *   `InvalidBatch` listing what is wrong with `spec` (nothing written or sent); `InvalidEntries`
   *   when a child is refused before sending (schema, queue, partition key).
   * @throws {TransientError} when some children could not be sent: call again with the same `id`.
   */
  async startBatch<const Children extends readonly unknown[], CompletionData>(
    spec: BatchSpec<Children, CompletionData>,
  ): Promise<BatchStarted> {
    if (this.#batches === undefined || typeof this.#batches.tableName !== 'string') {
      throw new JobClientError(
        'startBatch needs the idempotency table where batches are kept: new JobClient({ ..., batches: { tableName } }) with the table of the workers that run the children (JOBS_IDEMPOTENCY_TABLE)',
        { code: 'BatchesNeedTable', senderFault: true },
      );
    }
    const id = spec?.id ?? randomUUID();
    const idProblem = batchIdProblem(id);
    if (idProblem !== undefined) {
      throw new JobClientError(`startBatch refused: ${idProblem}`, {
        code: 'InvalidBatch',
        senderFault: true,
      });
    }
    return startBatchWith(
      spec,
      { batchId: id, source: this.#sender.settings.source, now: Date.now() },
      this,
      batchTable({ tableName: this.#batches.tableName, dynamodb: this.#dynamodb }),
      this.#scheduleWatchdog,
    );
  }

  /**
   * Sends one job.
   *
   * @param job a job definition (`defineJob`); its `queue` picks the URL from `queueUrls`.
   * @param data the job's input, checked against `job.schema` before sending; ids only.
   * @param options `partitionKey` (the `MessageGroupId`: required on FIFO queues, a fair queue's
   *   tenant on standard queues), `id`, `delaySeconds` (standard queues),
   *   `correlationId` (kept by every job the chain enqueues), `traceparent`/`tracestate` (the trace
   *   to continue; by default the job starts a new trace), `parent` (the job it follows from),
   *   `runAt` (a Date or RFC 3339 time) or `delayMs` (milliseconds, any length up to 366 days): a
   *   job sent for later, cancellable until it starts (docs/schedules.md).
   * @returns the envelope id, the SQS MessageId, the logical queue and, on FIFO, the SequenceNumber;
   *   for a job sent for later also `runAt` and `via` (`delay` or `schedule`, then `scheduleName`
   *   and an empty `messageId`).
   * @throws {JobClientError} `InvalidEntries` when the job is refused before sending (unknown queue,
   *   schema failure naming the path, FIFO without partition key, delay on FIFO, message over
   *   `maxMessageBytes`, `runAt` not a time or more than 366 days ahead, `runAt` with `delaySeconds`);
   *   `MissingScheduling` for a job sent for later when the client has no `scheduling` for it
   *   (naming the variables to set); `AlreadyScheduled` when the id was sent for later before
   *   with another time (use `reschedule`); `MissingRegion` / `MissingCredentials` / `InvalidRegion` /
   *   `InvalidEndpoint` at once (no retries) when the SQS client is not configured, saying what to
   *   set; otherwise the SQS error `code` when the message could not be sent after the retries,
   *   with `senderFault`.
   */
  async send<Data>(job: SendableJob<Data>, data: NoInfer<Data>, options?: SendOptions): Promise<SendResult> {
    return singleResult(await this.sendBatch([batchEntry(job, data, options)]), job.type);
  }

  /**
   * Checks a job envelope that is already built (by another service or language, a file, an
   * operator) as {@link sendEnvelope} would, and returns what would be sent; sends nothing.
   *
   * @param queue logical queue name, resolved through `queueUrls`.
   * @param envelope the SQS body: a JSON string (kept exactly as given) or an object (`JSON.stringify`).
   * @param options `delaySeconds` (standard queues only, 0–900).
   * @throws {JobClientError} `InvalidEntries` naming every problem: envelope rules of
   *   {@link parseEnvelope} (= envelope.schema.json; the first problem only), unknown queue,
   *   FIFO queue without a `partitionkey`, a `partitionkey` that is not a valid `MessageGroupId`
   *   (SendMessage API), delay on a FIFO queue, a character SQS refuses in a body, a number in a
   *   text body that JavaScript would not read as written (`1e400` → Infinity; an integer beyond
   *   `Number.MAX_SAFE_INTEGER` that would lose precision: send it as a string), a message
   *   over `maxMessageBytes`.
   */
  checkEnvelope(
    queue: string,
    envelope: string | object,
    options: SendEnvelopeOptions = {},
  ): CheckedEnvelope {
    return this.#sender.checkEnvelope(queue, envelope, options);
  }

  /**
   * Sends a job envelope that is already built, body unchanged: for forwarding jobs, jobs from
   * other languages (by envelope.schema.json) and the `sqs-jobs send` command. The envelope keeps
   * its own `source`, `id`, `time` and `partitionkey` (the client's `source` is not used);
   * `partitionkey` becomes the `MessageGroupId` (on a standard queue, a fair queue's tenant) and
   * on a FIFO queue `source` + `id` the
   * `MessageDeduplicationId`, as for {@link send}. Sent and retried like {@link send}.
   *
   * @param queue logical queue name, resolved through `queueUrls`.
   * @param envelope the SQS body: a JSON string (sent exactly as given) or an object (`JSON.stringify`).
   * @param options `delaySeconds` (standard queues only, 0–900).
   * @returns the envelope id, the SQS MessageId, the logical queue and, on FIFO, the SequenceNumber.
   * @throws {JobClientError} `InvalidEntries` before sending, as {@link checkEnvelope} says; otherwise
   *   the SQS error `code` when the message could not be sent after the retries, with `senderFault`.
   */
  async sendEnvelope(
    queue: string,
    envelope: string | object,
    options: SendEnvelopeOptions = {},
  ): Promise<SendResult> {
    return this.#sender.sendEnvelope(queue, envelope, options);
  }

  /**
   * Checks entries exactly as {@link sendBatch} does before sending, and sends nothing: what a
   * caller runs before writing state that the sends must match (a batch's item, say).
   * @throws {JobClientError} `InvalidEntries` as {@link sendBatch} would, naming every problem.
   */
  async checkBatch(entries: ReadonlyArray<BatchEntry>): Promise<void> {
    return this.#sender.checkBatch(entries);
  }

  /**
   * Sends many jobs, possibly to several queues, with SendMessageBatch: entries are grouped by
   * queue (in input order), then split into requests of at most 10 entries and at most
   * `maxMessageBytes` in total. Requests to one queue go one after another (a FIFO queue keeps
   * the order of its groups across requests); different queues are sent to concurrently.
   *
   * Entries that SQS reports failed with `SenderFault: false`, and whole requests that fail
   * with a transient error (`classifyError`), are retried up to `retry.maxAttempts` tries with
   * exponential backoff and full jitter; a retried entry keeps its envelope id and FIFO dedup id.
   * A request that fails because the SQS client is not configured (no region, no credentials:
   * {@link setupProblem}) is not retried: its entries are reported in `failed` at once with
   * `MissingRegion` / `MissingCredentials` and what to set (inside a worker, its caller still
   * retries the parent job with backoff: there a credentials failure can be passing).
   * Everything else is reported in `failed`. On a FIFO queue an entry retried after a partial
   * failure can land after later entries of its own group that were accepted in the same request.
   *
   * @returns every entry exactly once: `sent.length + failed.length === entries.length`.
   * @throws {JobClientError} `InvalidEntries` when `entries` is not an array, or when any entry is
   *   refused before sending (unknown keys of an entry or its options included), listing every
   *   problem of every bad entry by index; then nothing at all is sent.
   */
  async sendBatch(entries: ReadonlyArray<BatchEntry>): Promise<BatchResult> {
    const prepared = await this.#sender.prepareBatch(entries);
    const later = prepared.filter((entry) => entry.runAtMs !== undefined);
    let forNow = prepared.filter((entry) => entry.runAtMs === undefined);
    // A job for now whose given id is that of a job pending for later would run it early (and a
    // cancel would then be untrue): refused. Checked only with a state table and a given id, so a
    // plain send of a client without scheduling costs no DynamoDB read.
    const pendingRefused: FailedEntry[] = [];
    if (this.#scheduling.idempotencyTableName !== undefined && forNow.some((entry) => entry.idGiven)) {
      const checked = await (await this.#scheduledJobs()).refusePending(forNow);
      forNow = checked.clear;
      pendingRefused.push(...checked.refused);
    }
    if (later.length === 0) {
      const now = await this.#sender.sendPrepared(forNow);
      return { sent: now.sent, failed: [...now.failed, ...pendingRefused].sort((a, b) => a.index - b.index) };
    }
    const missing = this.#schedulingProblems(later);
    if (missing.length > 0) throw refusal(missing, entries.length, 'MissingScheduling');
    const scheduled = await this.#scheduledJobs();
    const [now, forLater] = await Promise.all([this.#sender.sendPrepared(forNow), scheduled.send(later)]);
    return {
      sent: [...now.sent, ...forLater.sent].sort((a, b) => a.index - b.index),
      failed: [...now.failed, ...forLater.failed, ...pendingRefused].sort((a, b) => a.index - b.index),
    };
  }

  /** What the client lacks to send these jobs for later: the table, or a queue's scheduling. */
  #schedulingProblems(later: readonly PreparedEntry[]): EntryProblem[] {
    const problems: EntryProblem[] = [];
    const nowMs = Date.now();
    for (const entry of later) {
      if (this.#scheduling.idempotencyTableName === undefined) {
        problems.push({ index: entry.index, type: entry.type, message: missingStateTable() });
      } else if (
        travelOf(entry.runAtMs as number, nowMs, isFifoQueueUrl(entry.queueUrl)).via === 'schedule' &&
        this.#scheduling.queues?.[entry.queue] === undefined
      ) {
        problems.push({ index: entry.index, type: entry.type, message: missingQueueScheduling(entry.queue) });
      }
    }
    return problems;
  }
}
