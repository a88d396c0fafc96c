/**
 * Jobs sent for later, cancelled and rescheduled: what `JobClient` does for `send(..., { runAt })`,
 * `cancel` and `reschedule` (docs/schedules.md). Loaded by `JobClient` with a dynamic import the
 * first time it is needed, with the Scheduler and DynamoDB clients: a producer that never sends
 * for later loads neither.
 *
 * Per job sent for later: one PutItem of its state item (lib/core/scheduled-job.ts), then one
 * SendMessage with `DelaySeconds` (a standard queue, due within 15 minutes, or due now) or one
 * CreateSchedule. The state item is written first, so the job can be cancelled from the moment
 * `send` returns, and a retried `send` (same `options.id`) finds it and sends the same message
 * again: one schedule (its name is the job's), or a second SQS message of the same generation,
 * which the worker's idempotency absorbs.
 */

import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { canonicalJson } from '../core/canonical-json.ts';
import { stringifyForSqs } from '../core/characters.ts';
import { classifyError } from '../core/errors.ts';
import { messageSizeBytes } from '../core/message-size.ts';
import { isFifoQueueUrl } from '../core/queue-urls.ts';
import {
  oneTimeScheduleName,
  type ScheduledJobState,
  scheduledJobKey,
  stateExpiresAt,
} from '../core/scheduled-job.ts';
import type { BatchResult, FailedEntry, SentEntry } from './job-client.ts';
import { JobClientError } from './job-client-error.ts';
import {
  createOneTimeSchedule,
  deleteOneTimeSchedule,
  type OneTimeSchedule,
  ScheduleConflictError,
  updateOneTimeSchedule,
} from './one-time-schedules.ts';
import type { PreparedEntry } from './prepare.ts';
import { travelOf } from './run-at.ts';
import { ScheduledStateTable } from './scheduled-state.ts';
import {
  type CancelResult,
  type DynamoDbSender,
  missingQueueScheduling,
  missingScheduleDeadLetterQueue,
  missingStateTable,
  queueArnOf,
  type RescheduleResult,
  type ScheduledJobIdentity,
  type SchedulerSender,
  type SchedulingOptions,
} from './scheduling.ts';

/**
 * How much later than its first try a retried send with `delayMs` may ask the job to run and
 * still be taken for the same send (15 minutes): the time of a retry moves with the clock.
 */
export const RETRY_WINDOW_MS = 15 * 60_000;

/** What the scheduled paths need of the `JobClient`. */
export interface ScheduledJobsContext {
  readonly source: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly scheduling: SchedulingOptions;
  readonly scheduler: SchedulerSender | undefined;
  readonly dynamodb: DynamoDbSender | undefined;
  readonly now: () => number;
  /** Sends entries with SQS (JobClient's batching and retries). */
  readonly sendNow: (entries: readonly PreparedEntry[]) => Promise<BatchResult>;
}

/** The clients of a `JobClient`, built on first use (region, credentials and endpoint from the environment). */
export class ScheduledJobs {
  readonly #context: ScheduledJobsContext;
  #scheduler: SchedulerSender | undefined;
  #dynamodb: DynamoDbSender | undefined;
  readonly #warnedNoDeadLetter = new Set<string>();

  constructor(context: ScheduledJobsContext) {
    this.#context = context;
    this.#scheduler = context.scheduler;
    this.#dynamodb = context.dynamodb;
  }

  get #table(): ScheduledStateTable {
    const tableName = this.#context.scheduling.idempotencyTableName;
    if (tableName === undefined) {
      throw new JobClientError(missingStateTable(), { code: 'MissingScheduling', senderFault: true });
    }
    this.#dynamodb ??= new DynamoDBClient({});
    return new ScheduledStateTable(this.#dynamodb, tableName, this.#context.now);
  }

  get #schedulerClient(): SchedulerSender {
    this.#scheduler ??= new SchedulerClient({});
    return this.#scheduler;
  }

  /**
   * Sends prepared jobs that carry a `runAtMs`: the state item of each, then its message or its
   * schedule. Every entry ends in `sent` or `failed`.
   */
  async send(entries: readonly PreparedEntry[]): Promise<BatchResult> {
    const sent: SentEntry[] = [];
    const failed: FailedEntry[] = [];
    const now: PreparedEntry[] = [];
    const runAtOf = new Map<number, string>();
    await Promise.all(
      entries.map(async (entry) => {
        try {
          const begun = await this.#begin(entry);
          runAtOf.set(entry.index, begun.state.runAt);
          if (begun.travel.via === 'delay') {
            now.push(withMessage(entry, begun.state.body, begun.travel.delaySeconds));
            return;
          }
          const schedule = await this.#oneTimeSchedule(
            begun.state,
            begun.state.scheduleName ?? '',
            begun.state.body,
          );
          await this.#createOrRollBack(entry, begun, schedule);
          sent.push({
            index: entry.index,
            id: entry.id,
            queue: entry.queue,
            messageId: '',
            runAt: begun.state.runAt,
            via: 'schedule',
            scheduleName: schedule.name,
          });
        } catch (error) {
          failed.push(failedEntry(entry, error));
        }
      }),
    );
    if (now.length > 0) {
      const result = await this.#context.sendNow(now);
      for (const s of result.sent) sent.push({ ...s, runAt: runAtOf.get(s.index) ?? '', via: 'delay' });
      failed.push(...result.failed);
    }
    return { sent: sent.sort((a, b) => a.index - b.index), failed: failed.sort((a, b) => a.index - b.index) };
  }

  /**
   * Splits jobs for now into those that may go and those refused because their given id is that
   * of a job pending for later (one strongly consistent GetItem per entry with a given id).
   */
  async refusePending(
    entries: readonly PreparedEntry[],
  ): Promise<{ clear: PreparedEntry[]; refused: FailedEntry[] }> {
    const table = this.#table;
    const clear: PreparedEntry[] = [];
    const refused: FailedEntry[] = [];
    await Promise.all(
      entries.map(async (entry) => {
        if (!entry.idGiven) {
          clear.push(entry);
          return;
        }
        try {
          const state = await table.read(scheduledJobKey(this.#context.source, entry.id));
          if (state?.state !== 'pending') {
            clear.push(entry);
            return;
          }
          refused.push(
            failedEntry(
              entry,
              new JobClientError(
                `job ${entry.id} of source ${this.#context.source} is pending for later (${state.type} on queue "${state.queue}" at ${state.runAt}): a send for now with its id would run it early; to run it now use jobClient.reschedule({ queue, id }, new Date()), or cancel it first, or send with another options.id`,
                { code: 'AlreadyScheduled', senderFault: true },
              ),
            ),
          );
        } catch (error) {
          refused.push(failedEntry(entry, error));
        }
      }),
    );
    return { clear: clear.sort((a, b) => a.index - b.index), refused };
  }

  /** Writes the state item (or finds this job's own from an earlier try) and decides how the message travels. */
  async #begin(entry: PreparedEntry): Promise<{
    state: ScheduledJobState;
    travel: ReturnType<typeof travelOf>;
    /** Whether this call wrote the state item (false: a retry found its own). */
    created: boolean;
  }> {
    const runAtMs = entry.runAtMs as number;
    const nowMs = this.#context.now();
    const fifo = isFifoQueueUrl(entry.queueUrl);
    const travel = travelOf(runAtMs, nowMs, fifo);
    const { source } = this.#context;
    const state: ScheduledJobState = {
      pk: scheduledJobKey(source, entry.id),
      state: 'pending',
      generation: 1,
      runAt: new Date(runAtMs).toISOString(),
      runAtMs,
      queue: entry.queue,
      type: entry.type,
      source,
      jobId: entry.id,
      ...(entry.partitionKey === undefined ? {} : { partitionKey: entry.partitionKey }),
      via: travel.via,
      ...(travel.via === 'schedule' ? { scheduleName: oneTimeScheduleName(source, entry.id) } : {}),
      body: entry.request.MessageBody ?? '',
      expiresAt: stateExpiresAt(runAtMs, this.#context.now()),
    };
    const written = await this.#table.create(state);
    if (written.ok) return { state, travel, created: true };
    const existing = written.existing;
    // Gone between the failed put and the read (expired): a rare race; the caller may send again.
    if (existing === undefined) {
      throw new JobClientError(`the state of job ${entry.id} changed while it was sent; send it again`, {
        code: 'StateChanged',
        senderFault: false,
      });
    }
    // The same send retried: the same time, or (given as a delay) a time up to RETRY_WINDOW_MS
    // after the first try's (a retry comes within minutes; a longer delay is another request).
    const later = runAtMs - existing.runAtMs;
    const sameTime = later === 0 || (entry.runAtFromDelay === true && later > 0 && later <= RETRY_WINDOW_MS);
    const sameSend =
      existing.state === 'pending' &&
      existing.generation === 1 &&
      sameTime &&
      existing.type === entry.type &&
      existing.queue === entry.queue;
    // The same message too: another job's data under a reused id is a different job, not a retry.
    const sameMessage =
      dataOf(existing.body) === dataOf(entry.request.MessageBody ?? '') &&
      existing.partitionKey === entry.partitionKey;
    if (sameSend && !sameMessage) {
      throw new JobClientError(
        `job ${entry.id} of source ${source} was already sent for later (${existing.type} on queue "${existing.queue}" at ${existing.runAt}) with other data or partition key: a retried send must carry the same message; use jobClient.cancel then send again, or send with another options.id`,
        { code: 'AlreadyScheduled', senderFault: true },
      );
    }
    if (!sameSend) {
      throw new JobClientError(
        `job ${entry.id} of source ${source} was already sent for later (${existing.type} on queue "${existing.queue}" at ${existing.runAt}, ${existing.state}, generation ${existing.generation}): use jobClient.reschedule to move it, or send with another options.id`,
        { code: 'AlreadyScheduled', senderFault: true },
      );
    }
    // A retry of this send: its stored message again, travelling as time now allows (a message of
    // the same generation sent twice is one job: the worker's idempotency absorbs the second). A
    // job stored as a delayed message stays one (its time is nearer now, never further).
    const retried = travelOf(runAtMs, nowMs, fifo);
    if (retried.via === 'schedule' && existing.scheduleName === undefined) {
      return {
        state: existing,
        travel: { via: 'delay', delaySeconds: Math.ceil(Math.max(0, runAtMs - nowMs) / 1000) },
        created: false,
      };
    }
    return { state: existing, travel: retried, created: false };
  }

  /**
   * CreateSchedule of a job whose state item this send wrote. When Scheduler refuses it for good
   * (a 4xx: the group does not exist, access denied, a bad request), no schedule was made: the
   * state item is expired at once (treated as absent everywhere, so `schedules list` shows no
   * phantom pending job and a fixed send may write it again), as a failed reschedule restores its
   * item. A transient failure keeps the item: the schedule may exist, and a retried send finds it.
   * @throws {JobClientError} naming the group and what to do, with the SDK error as `cause`.
   */
  async #createOrRollBack(
    entry: PreparedEntry,
    begun: { state: ScheduledJobState; created: boolean },
    schedule: OneTimeSchedule,
  ): Promise<void> {
    try {
      await createOneTimeSchedule(this.#schedulerClient, schedule);
    } catch (error) {
      if (
        !begun.created ||
        error instanceof ScheduleConflictError ||
        classifyError(error).kind !== 'permanent'
      )
        throw error;
      const rolledBack = await this.#table
        .expire(begun.state.pk, begun.state.generation)
        .then((w) => w.ok || w.existing === undefined)
        .catch(() => false);
      const what =
        errorName(error) === 'ResourceNotFoundException'
          ? `schedule group "${schedule.groupName}" does not exist: deploy the JobQueue of queue "${entry.queue}" with its scheduling (jobQueue.grantScheduleJobs(fn) makes the group), or fix scheduling.queues.${entry.queue}.groupName`
          : `fix the producer's scheduling of queue "${entry.queue}" (group "${schedule.groupName}", role ${schedule.roleArn}) or its permissions (jobQueue.grantScheduleJobs(fn))`;
      throw new JobClientError(
        `job ${entry.id} was not sent for later: CreateSchedule in group "${schedule.groupName}" failed (${errorText(error)}); ${what}. ${
          rolledBack
            ? 'Nothing is pending: send it again once fixed.'
            : 'Its pending state item could not be removed: it stays listed as pending until it expires; cancel it with sqs-jobs schedules cancel.'
        }`,
        { code: errorName(error), senderFault: true, cause: error },
      );
    }
  }

  /** The one-time schedule of a state's generation, with its queue's scheduling. */
  async #oneTimeSchedule(state: ScheduledJobState, name: string, body: string): Promise<OneTimeSchedule> {
    const queueScheduling = this.#context.scheduling.queues?.[state.queue];
    const queueUrl = this.#context.queueUrls[state.queue];
    if (queueScheduling === undefined || queueUrl === undefined) {
      throw new JobClientError(missingQueueScheduling(state.queue), {
        code: 'MissingScheduling',
        senderFault: true,
      });
    }
    const fifo = isFifoQueueUrl(queueUrl);
    if (queueScheduling.deadLetterQueueArn === undefined && !this.#warnedNoDeadLetter.has(state.queue)) {
      // Warned, not refused: a producer configured before the field existed keeps working, and
      // the operator is told, once per queue, that such a job can be dropped.
      this.#warnedNoDeadLetter.add(state.queue);
      console.warn(missingScheduleDeadLetterQueue(state.queue));
    }
    return {
      name,
      groupName: queueScheduling.groupName,
      runAtMs: state.runAtMs,
      queueArn:
        queueScheduling.queueArn ?? queueArnOf(queueUrl, queueScheduling.roleArn, await this.#region()),
      roleArn: queueScheduling.roleArn,
      body,
      ...(fifo && state.partitionKey !== undefined ? { messageGroupId: state.partitionKey } : {}),
      ...(queueScheduling.deadLetterQueueArn === undefined
        ? {}
        : { deadLetterQueueArn: queueScheduling.deadLetterQueueArn }),
      description: `sqs-jobs ${state.type} ${state.jobId}`,
    };
  }

  /** The Scheduler client's region, else the environment's (for a queue ARN from a URL without one). */
  async #region(): Promise<string | undefined> {
    const config = (this.#schedulerClient as { config?: { region?: unknown } }).config;
    if (typeof config?.region === 'function') {
      try {
        return String(await (config.region as () => Promise<string>)());
      } catch {
        // No region configured: the environment's, below.
      }
    }
    return process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  }

  /** `JobClient.cancel`. */
  async cancel(identity: ScheduledJobIdentity): Promise<CancelResult> {
    const { queue, id } = identity;
    const source = identity.source ?? this.#context.source;
    const pk = scheduledJobKey(source, id);
    const written = await this.#table.cancel(pk, queue);
    if (!written.ok) return answerOf(written.existing, queue, id);
    const { state } = written;
    let scheduleDeleted = false;
    const groupName = this.#context.scheduling.queues?.[state.queue]?.groupName;
    if (state.via === 'schedule' && state.scheduleName !== undefined && groupName !== undefined) {
      try {
        scheduleDeleted =
          (await deleteOneTimeSchedule(this.#schedulerClient, state.scheduleName, groupName)) === 'deleted';
      } catch {
        // The state says cancelled: if the schedule fires, the worker records the job as cancelled.
      }
    }
    return { status: 'cancelled', id, queue, runAt: state.runAt, scheduleDeleted };
  }

  /** `JobClient.reschedule`, with `runAtMs` checked. */
  async reschedule(identity: ScheduledJobIdentity, runAtMs: number): Promise<RescheduleResult> {
    const { queue, id } = identity;
    const source = identity.source ?? this.#context.source;
    const pk = scheduledJobKey(source, id);
    const table = this.#table;
    // Two tries: a concurrent reschedule that moved the generation between read and write.
    for (let round = 0; ; round++) {
      const state = await table.read(pk);
      if (state === undefined || state.queue !== queue || state.state !== 'pending')
        return answerOf(state, queue, id);
      const queueUrl = this.#context.queueUrls[queue];
      if (queueUrl === undefined) {
        throw new JobClientError(
          `unknown queue "${queue}": pass its URL in queueUrls or set JOBS_QUEUE_URL_<NAME>`,
          {
            code: 'InvalidArguments',
            senderFault: true,
          },
        );
      }
      const generation = state.generation + 1;
      const travel = travelOf(runAtMs, this.#context.now(), isFifoQueueUrl(queueUrl));
      // The same schedule moved when there is one (UpdateSchedule); else a new one of this generation.
      const scheduleName =
        travel.via === 'delay'
          ? undefined
          : state.via === 'schedule' && state.scheduleName !== undefined
            ? state.scheduleName
            : oneTimeScheduleName(source, id, generation);
      const runAt = new Date(runAtMs).toISOString();
      const advanced = await table.advance(pk, state.generation, {
        runAt,
        runAtMs,
        via: travel.via,
        ...(scheduleName === undefined ? {} : { scheduleName }),
        expiresAt: stateExpiresAt(runAtMs, this.#context.now()),
      });
      if (!advanced.ok) {
        if (round === 0 && advanced.existing?.state === 'pending') continue;
        return answerOf(advanced.existing, queue, id);
      }
      const body = bodyOfGeneration(state.body, runAt, generation);
      try {
        await this.#deliver(advanced.state, state, body, travel);
      } catch (error) {
        const restored = await table
          .restore(pk, generation, state)
          .catch(() => ({ ok: false as const, existing: undefined }));
        throw new JobClientError(
          restored.ok
            ? `job ${id} was not rescheduled (its new time could not be set: ${errorText(error)}); it keeps its time ${state.runAt}`
            : `job ${id} was not rescheduled (its new time could not be set: ${errorText(error)}) and its previous time could not be restored: call reschedule again, or the job does not run`,
          { code: errorName(error), senderFault: classifyError(error).kind === 'permanent', cause: error },
        );
      }
      return { status: 'rescheduled', id, queue, runAt, generation, via: travel.via };
    }
  }

  /** Sends the new generation of a rescheduled job: SQS with DelaySeconds, the same schedule moved, or a new one. */
  async #deliver(
    state: ScheduledJobState,
    previous: ScheduledJobState,
    body: string,
    travel: ReturnType<typeof travelOf>,
  ): Promise<void> {
    const groupName = this.#context.scheduling.queues?.[state.queue]?.groupName;
    if (travel.via === 'delay') {
      const result = await this.#context.sendNow([this.#entryOf(state, body, travel.delaySeconds)]);
      const failure = result.failed[0];
      if (failure) throw Object.assign(new Error(failure.message), { name: failure.code });
      // The old schedule would only bring a superseded message: delete it (it may have fired).
      if (previous.via === 'schedule' && previous.scheduleName !== undefined && groupName !== undefined) {
        await deleteOneTimeSchedule(this.#schedulerClient, previous.scheduleName, groupName).catch(
          () => undefined,
        );
      }
      return;
    }
    const name = state.scheduleName as string;
    const schedule = await this.#oneTimeSchedule(state, name, body);
    if (name === previous.scheduleName && previous.via === 'schedule') {
      if ((await updateOneTimeSchedule(this.#schedulerClient, schedule)) === 'updated') return;
      // It fired (its message, of the previous generation, will be superseded): a new schedule.
      const fresh = oneTimeScheduleName(state.source, state.jobId, state.generation);
      await createOneTimeSchedule(this.#schedulerClient, { ...schedule, name: fresh });
      await this.#table.setSchedule(state.pk, state.generation, fresh);
      return;
    }
    await createOneTimeSchedule(this.#schedulerClient, schedule);
  }

  /** A prepared SQS entry of a state's message (a reschedule that goes with DelaySeconds). */
  #entryOf(state: ScheduledJobState, body: string, delaySeconds: number): PreparedEntry {
    const queueUrl = this.#context.queueUrls[state.queue] as string;
    const fifo = isFifoQueueUrl(queueUrl);
    const request = {
      Id: '0',
      MessageBody: body,
      ...(fifo
        ? {
            MessageGroupId: state.partitionKey,
            MessageDeduplicationId: generationDeduplicationId(state.source, state.jobId, state.generation),
          }
        : { DelaySeconds: delaySeconds }),
    };
    return {
      index: 0,
      id: state.jobId,
      type: state.type,
      queue: state.queue,
      queueUrl,
      request,
      bytes: messageSizeBytes(request),
      dataBytes: 0,
      runAtMs: state.runAtMs,
    };
  }
}

/**
 * FIFO `MessageDeduplicationId` of a generation after the first: SHA-256 of source, id and the
 * generation, so a rescheduled job sent within 5 minutes of its first message is not taken for a
 * duplicate of it and dropped (the first generation keeps the usual id of source + id).
 */
export function generationDeduplicationId(source: string, id: string, generation: number): string {
  return createHash('sha256')
    .update(JSON.stringify([source, id, generation]))
    .digest('hex');
}

/** The entry of a job sent for later with its message (the stored one on a retry) and delay. */
function withMessage(entry: PreparedEntry, body: string, delaySeconds: number): PreparedEntry {
  const fifo = isFifoQueueUrl(entry.queueUrl);
  const request = { ...entry.request, MessageBody: body, ...(fifo ? {} : { DelaySeconds: delaySeconds }) };
  return { ...entry, request, bytes: messageSizeBytes(request) };
}

/** The message of a later generation: the first one's envelope with the new `runat` and `schedulegeneration`. */
export function bodyOfGeneration(body: string, runAt: string, generation: number): string {
  const envelope = JSON.parse(body) as Record<string, unknown>;
  envelope.runat = runAt;
  envelope.schedulegeneration = String(generation);
  return stringifyForSqs(envelope) as string;
}

/**
 * The `data` of an envelope body as canonical JSON (keys sorted): what a retried send must carry
 * again, whatever key order it was built in.
 */
function dataOf(body: string): string {
  try {
    return canonicalJson((JSON.parse(body) as { data?: unknown }).data);
  } catch {
    return body;
  }
}

/** The answer of a cancel or reschedule that found no pending job. */
function answerOf(
  state: ScheduledJobState | undefined,
  queue: string,
  id: string,
): Exclude<CancelResult, { status: 'cancelled' }> {
  if (state === undefined || state.queue !== queue) return { status: 'not-found', id, queue };
  if (state.state === 'cancelled') return { status: 'already-cancelled', id, queue, runAt: state.runAt };
  return { status: 'already-started', id, queue, runAt: state.runAt };
}

/** The code of an error: a JobClientError's, the Node `code` (ECONNRESET), else the AWS error name. */
function errorName(error: unknown): string {
  if (error instanceof JobClientError) return error.code;
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  if (typeof code === 'string' && code !== '') return code;
  return typeof name === 'string' && name !== '' ? name : 'Error';
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The failed entry of a job sent for later whose state or schedule could not be written. */
function failedEntry(entry: PreparedEntry, error: unknown): FailedEntry {
  const senderFault =
    error instanceof JobClientError
      ? error.senderFault
      : error instanceof ScheduleConflictError || classifyError(error).kind === 'permanent';
  const failed: FailedEntry = {
    index: entry.index,
    id: entry.id,
    queue: entry.queue,
    code: error instanceof ScheduleConflictError ? 'AlreadyScheduled' : errorName(error),
    message: error instanceof Error ? error.message : String(error),
    senderFault,
  };
  Object.defineProperty(failed, 'cause', { value: error, enumerable: false });
  return failed;
}
