/**
 * Checks and encodes the entries of a send before anything goes out: resolves the queue,
 * validates the data with the job's Standard Schema, builds the CloudEvents envelope, applies
 * the FIFO and delay rules of the SendMessage API, and measures the message against the size
 * limit. Every problem of every entry is collected, so one error can list them all.
 *
 * Why one file: every check feeds the one list of problems per entry (queue, options, data,
 * envelope, size) that the one error names together; it is the one place that says what a send
 * refuses.
 */

import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { isSendableTraceHeader } from '../core/aws-trace-header.ts';
import { firstRefusedCharacter, stringifyForSqs } from '../core/characters.ts';
import {
  createEnvelope,
  deduplicationIdOf,
  EnvelopeError,
  type EnvelopeLineage,
  type JobEnvelope,
  parseEnvelope,
} from '../core/envelope.ts';
import { jsonNumberProblems } from '../core/json-numbers.ts';
import { appendPath, jsonFormOf, jsonValueProblems } from '../core/json-value.ts';
import { isValidMessageGroupId, MAX_DELAY_SECONDS } from '../core/message-parameters.ts';
import { messageSizeBytes, utf8Bytes } from '../core/message-size.ts';
import { isFifoQueueUrl, UNKNOWN_QUEUE_ADVICE } from '../core/queue-urls.ts';
import { shownValue } from '../core/shown-value.ts';
import { newTraceparent } from '../core/trace-context.ts';
import type { EntryProblem } from './job-client-error.ts';
import { describeValue, isPlainObject, unknownKeyProblems } from './option-keys.ts';

/** What the client needs of a job definition: a {@link JobDefinition} has it. */
export interface SendableJob<Data = unknown> {
  /** The envelope `type`. */
  readonly type: string;
  /** Logical queue name, resolved to a URL through the client's `queueUrls`. */
  readonly queue: string;
  /** Standard Schema of the job's data; the data must pass it before it is sent. */
  readonly schema: StandardSchemaV1<unknown, Data>;
  /** The job needs order per key (`defineJob({ ordered: true })`): refused for a standard queue's URL. */
  readonly ordered?: boolean;
}

/** Options of one job sent. */
export interface SendOptions {
  /**
   * Partitioning key (e.g. the user or tenant id): the envelope `partitionkey` and the message's
   * `MessageGroupId`. On a FIFO queue it is required and orders the key's jobs; on a standard
   * queue it is optional and makes a fair queue (the key is the tenant: no order, but one busy
   * tenant does not hold the others back; Amazon SQS fair queues). 1–128 printable ASCII
   * characters, no space (SendMessage API, MessageGroupId).
   */
  readonly partitionKey?: string;
  /** The envelope `id` (1–256 characters); with the client's `source` the job's identity. @default a random UUID */
  readonly id?: string;
  /** Seconds before the message becomes visible, integer 0–900. Standard queues only. @default the queue's delay */
  readonly delaySeconds?: number;
  /**
   * When the job is due: a `Date` or an RFC 3339 time with an offset (`2026-12-24T18:00:00Z`), at
   * most 366 days ahead; on FIFO and standard queues. A time at or before now is due now (sent at
   * once). The job becomes a job sent for later: it can be cancelled or rescheduled by its identity
   * (`jobClient.cancel`, `jobClient.reschedule`) until it starts, and never runs before `runAt`. On a
   * standard queue within 15 minutes it goes with SQS `DelaySeconds`; otherwise as a one-time
   * EventBridge schedule (the client's `scheduling` option names where). Not with `delaySeconds`
   * or `delayMs`. docs/schedules.md. @default none: the job runs now
   */
  readonly runAt?: Date | string;
  /** `runAt` as a delay from now, in milliseconds (any length up to 366 days). Not with `runAt` or `delaySeconds`. @default none */
  readonly delayMs?: number;
  /**
   * An id of the whole flow (an order, a request), 1–256 characters: the envelope `correlationid`
   * (CloudEvents Correlation extension). Every job the job enqueues, and theirs, keeps it; the
   * worker logs it with every failure. @default none
   */
  readonly correlationId?: string;
  /**
   * The W3C traceparent to continue (`00-<trace id>-<span id>-<flags>`), e.g. the caller's current
   * span (OpenTelemetry `propagation.inject`). The job and all it enqueues are then part of that
   * trace. @default a new trace: random ids, flags `00` (nothing recorded for it)
   */
  readonly traceparent?: string;
  /** The W3C tracestate that goes with `traceparent` (needs it). @default none */
  readonly tracestate?: string;
  /**
   * The job this one follows from, when a service sends follow-up jobs of its own: its envelope
   * `id`, the chain's root `id` and, to link the idempotency records, its job reference. The
   * worker sets it on every child of `ctx.enqueue`. @default none: the job is a chain's root
   */
  readonly parent?: ParentLink;
  /**
   * The X-Ray trace header SQS keeps with the message (its `AWSTraceHeader` system attribute,
   * taken over the request's `X-Amzn-Trace-Id` header), e.g. `Root=1-...;Parent=...;Sampled=0`.
   * Lambda's recursive loop detection counts with its `Lineage`: the worker sets it on every
   * child of `ctx.enqueue` so each chain counts its own steps (lib/runtime/chain-trace.ts).
   * Printable ASCII with a `Root` field. [SendMessage API, MessageSystemAttributes]
   * @default none: SQS keeps the request's header (the AWS SDK's, inside Lambda)
   */
  readonly awsTraceHeader?: string;
  /**
   * The batch the job is a child of (envelope `batchid`, 1–128 characters): its completion or dead
   * letter is counted in that batch. Set by `startBatch` on every child (lib/client/batch-start.ts);
   * a job sent with the id of a batch that does not exist completes as an ordinary job.
   * @default none
   */
  readonly batchId?: string;
}

/** The job a sent job follows from (envelope `causationid`, `rootid`, `parentjob`). */
export interface ParentLink {
  /** The parent's envelope `id` (`causationid`). */
  readonly id: string;
  /** The envelope `id` of the chain's first job (`rootid`): the parent's `rootid`, else the parent's `id`. */
  readonly rootId: string;
  /** The parent's job reference, `<type>#<key>` as its idempotency record key (`parentjob`). */
  readonly job?: string;
}

/** One entry of `sendBatch`. */
export interface BatchEntry {
  readonly job: SendableJob<unknown>;
  readonly data: unknown;
  readonly options?: SendOptions;
}

/** An entry ready to send. */
export interface PreparedEntry {
  readonly index: number;
  readonly id: string;
  readonly type: string;
  readonly queue: string;
  readonly queueUrl: string;
  /** The SendMessageBatch entry; its `Id` is the entry's index. */
  readonly request: SendMessageBatchRequestEntry;
  /** Message size as SQS counts it (body + attributes, UTF-8). */
  readonly bytes: number;
  /** UTF-8 bytes of the JSON of `data`, for the payload-size warning. */
  readonly dataBytes: number;
  /** A job sent for later (`runAt`/`delayMs`): when it is due, epoch ms (the envelope's `runat`). */
  readonly runAtMs?: number;
  /** The time came from `delayMs` (so a retry of the send asks for a later time than the first try's). */
  readonly runAtFromDelay?: boolean;
  /** The envelope's `partitionkey`, when set. */
  readonly partitionKey?: string;
  /** The caller gave `options.id` (so the id may be that of a job sent for later). */
  readonly idGiven?: boolean;
}

/** Settings of {@link prepareEntries}. */
export interface PrepareSettings {
  readonly source: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly maxMessageBytes: number;
  /** The checks of what an entry holds besides its job and data. @default {@link SENT_NOW} */
  readonly entryChecks?: EntryChecks;
}

/**
 * The checks of an entry's own keys and options, and when it is due: a producer's
 * (`producerEntryChecks`, entry-options.ts: every key named, hints, `parent`, `runAt`/`delayMs`)
 * or {@link SENT_NOW}. Apart so that a worker's bundle holds only what its sends need: a worker
 * builds its entries itself (a child's options from `ctx.enqueue`'s checked ones, a batch's from
 * its checked spec) and never sends for later (issue 21: bundle bytes).
 */
export interface EntryChecks {
  /** The entry's options as a send reads them, and the problems of its keys and options (a new list). */
  shape(entry: BatchEntry): { options: SendOptions; problems: string[] };
  /** When the job is due (epoch ms; undefined: now), adding the problems of its time options to `problems`. */
  due(options: SendOptions, problems: string[]): number | undefined;
}

/**
 * The checks of entries built by sqs-jobs itself (a worker's children and batches): options as
 * given, every job sent now (`JobSender.sendBatch` refuses `runAt`/`delayMs` before preparing).
 */
export const SENT_NOW: EntryChecks = {
  shape: (entry) => ({ options: entry.options ?? {}, problems: [] }),
  due: () => undefined,
};

/** Result of {@link prepareEntries}: `problems` is empty when every entry is ready. */
export interface Prepared {
  readonly entries: PreparedEntry[];
  readonly problems: EntryProblem[];
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `data.items[0].id` style path of a Standard Schema issue. */
export function formatIssuePath(path: StandardSchemaV1.Issue['path']): string {
  let out = 'data';
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    out = appendPath(out, typeof key === 'number' ? key : String(key));
  }
  return out;
}

function isSendableJob(job: unknown): job is SendableJob<unknown> {
  const candidate = job as Partial<SendableJob<unknown>> | undefined;
  return (
    typeof candidate?.type === 'string' &&
    typeof candidate.queue === 'string' &&
    typeof candidate.schema?.['~standard']?.validate === 'function'
  );
}

/** Names the envelope field of an EnvelopeError as the caller spelled it. */
const ENVELOPE_FIELD_AS_INPUT: Record<string, string> = {
  id: 'options.id',
  partitionkey: 'options.partitionKey',
  source: 'client source',
  type: 'job type',
  correlationid: 'options.correlationId',
  traceparent: 'options.traceparent',
  tracestate: 'options.tracestate',
  causationid: 'options.parent.id',
  rootid: 'options.parent.rootId',
  parentjob: 'options.parent.job',
  batchid: 'options.batchId',
};

/**
 * The lineage and trace attributes of a send: as given, and a new trace when no traceparent
 * is (unless a tracestate is, which then fails for want of its traceparent).
 */
function lineageOf(options: SendOptions): EnvelopeLineage {
  const parent = isPlainObject(options.parent) ? options.parent : undefined;
  const traceparent =
    options.traceparent ?? (options.tracestate === undefined ? newTraceparent() : undefined);
  return {
    ...(options.correlationId === undefined ? {} : { correlationid: options.correlationId }),
    ...(parent === undefined ? {} : { causationid: parent.id, rootid: parent.rootId }),
    ...(parent?.job === undefined ? {} : { parentjob: parent.job }),
    ...(traceparent === undefined ? {} : { traceparent }),
    ...(options.tracestate === undefined ? {} : { tracestate: options.tracestate }),
  };
}

/** The value at a Standard Schema issue path, or undefined when the path does not lead anywhere. */
function valueAtPath(root: unknown, path: StandardSchemaV1.Issue['path']): unknown {
  let current = root;
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key as PropertyKey];
  }
  return current;
}

/**
 * Validates the JSON form of the data (what the worker will parse and validate), so a schema
 * that only the in-memory value passes (`z.date()` given a `Date`) is refused here, not
 * dead-lettered by the worker. Where the value given differs from its JSON form, the problem says so.
 */
async function schemaProblems(
  job: SendableJob<unknown>,
  data: unknown,
  jsonData: unknown,
): Promise<string[]> {
  try {
    const result = await job.schema['~standard'].validate(jsonData);
    if (!result.issues) return [];
    return result.issues.map((issue) => {
      const given = valueAtPath(data, issue.path);
      const note =
        typeof given === 'object' &&
        given !== null &&
        typeof (given as { toJSON?: unknown }).toJSON === 'function'
          ? ` (checked as the worker receives it, in JSON: ${given instanceof Date ? 'a Date' : 'a value with toJSON()'} travels as ${JSON.stringify(valueAtPath(jsonData, issue.path))})`
          : '';
      return `${formatIssuePath(issue.path)}: ${issue.message}${note}`;
    });
  } catch (error) {
    return [`data: the schema threw while validating (${describeError(error)})`];
  }
}

/** How the checks name the partition key and the delay: as `send` options or as envelope fields. */
interface OptionNames {
  readonly partitionKey: string;
  readonly delaySeconds: string;
}

const SEND_OPTION_NAMES: OptionNames = {
  partitionKey: 'options.partitionKey',
  delaySeconds: 'options.delaySeconds',
};

function optionProblems(
  options: SendOptions,
  fifo: boolean,
  queue: string,
  names: OptionNames = SEND_OPTION_NAMES,
): string[] {
  const problems: string[] = [];
  const { delaySeconds, partitionKey, awsTraceHeader } = options;
  if (awsTraceHeader !== undefined && !isSendableTraceHeader(awsTraceHeader)) {
    problems.push(
      `options.awsTraceHeader must be an X-Ray trace header of printable ASCII with a Root field (Root=1-...;Parent=...;Sampled=0), got ${describeValue(awsTraceHeader)}`,
    );
  }
  if (delaySeconds !== undefined) {
    if (fifo) {
      problems.push(
        `${names.delaySeconds} is not allowed on FIFO queue "${queue}": SQS only takes a queue-level delay there (SendMessage API, DelaySeconds)`,
      );
    } else if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
      problems.push(
        `${names.delaySeconds} must be an integer from 0 to ${MAX_DELAY_SECONDS}, got ${shownValue(delaySeconds)}`,
      );
    }
  }
  // On a standard queue the key obeys the same MessageGroupId rule (it is a fair queue's tenant):
  // createEnvelope / parseEnvelope check it there, with the length named when that is what is wrong.
  if (fifo) {
    if (partitionKey === undefined) {
      problems.push(
        `${names.partitionKey} is required on FIFO queue "${queue}": it becomes the MessageGroupId (e.g. the user id)`,
      );
    } else if (typeof partitionKey === 'string' && !isValidMessageGroupId(partitionKey)) {
      problems.push(
        `${names.partitionKey} must be 1-128 characters of a-z, A-Z, 0-9 and punctuation (printable ASCII, no space) on a FIFO queue: it becomes the MessageGroupId`,
      );
    }
  }
  return problems;
}

/** The queue URL of a logical queue name, or the problem naming the known queues. */
function resolveQueue(
  queue: string,
  settings: PrepareSettings,
): { queueUrl: string; problem?: undefined } | { queueUrl?: undefined; problem: string } {
  const queueUrl = Object.hasOwn(settings.queueUrls, queue) ? settings.queueUrls[queue] : undefined;
  if (queueUrl !== undefined) return { queueUrl };
  const known = Object.keys(settings.queueUrls).sort().join(', ') || 'none';
  return {
    problem: `unknown queue "${queue}" (known queues: ${known}); ${UNKNOWN_QUEUE_ADVICE}`,
  };
}

/** Builds the SendMessageBatch entry of a checked envelope and measures it against the size limit. */
function encodeEntry(
  input: {
    readonly index: number;
    readonly envelope: JobEnvelope;
    readonly body: string;
    readonly queue: string;
    readonly queueUrl: string;
    readonly fifo: boolean;
    readonly delaySeconds: number | undefined;
    readonly awsTraceHeader?: string | undefined;
    readonly runAtFromDelay?: boolean;
    readonly idGiven?: boolean;
  },
  settings: PrepareSettings,
): { prepared: PreparedEntry; problem?: undefined } | { prepared?: undefined; problem: string } {
  const { index, envelope, body, fifo, delaySeconds } = input;
  const request: SendMessageBatchRequestEntry = {
    Id: String(index),
    MessageBody: body,
    // A partition key is the MessageGroupId on both kinds: FIFO order per key, or the tenant of a
    // fair standard queue (no order promised; Amazon SQS fair queues).
    ...(envelope.partitionkey === undefined ? {} : { MessageGroupId: envelope.partitionkey }),
    ...(fifo ? { MessageDeduplicationId: deduplicationIdOf(envelope) } : {}),
    ...(!fifo && delaySeconds !== undefined ? { DelaySeconds: delaySeconds } : {}),
    // System attributes do not count towards the message size (SendMessage API).
    ...(input.awsTraceHeader === undefined
      ? {}
      : {
          MessageSystemAttributes: {
            AWSTraceHeader: { DataType: 'String', StringValue: input.awsTraceHeader },
          },
        }),
  };
  const bytes = messageSizeBytes(request);
  if (bytes > settings.maxMessageBytes) {
    return {
      problem: `message is ${bytes} bytes, over the limit of ${settings.maxMessageBytes} bytes (body + attributes, UTF-8; SendMessage API); send ids and let the worker reload the data`,
    };
  }
  if (envelope.runat !== undefined && bytes > MAX_SCHEDULED_MESSAGE_BYTES) {
    return {
      problem: `message is ${bytes} bytes, over the limit of ${MAX_SCHEDULED_MESSAGE_BYTES} bytes of a job sent for later (it may travel as an EventBridge schedule, whose Input is at most 256 KB: CreateSchedule API, Target.Input); send ids and let the worker reload the data`,
    };
  }
  if (envelope.runat !== undefined && body.includes(SCHEDULER_KEYWORD)) {
    return {
      problem: `the job's message holds "${SCHEDULER_KEYWORD}", which EventBridge Scheduler replaces in a schedule's Input (its context attributes: scheduler UserGuide, managing-schedule-context-attributes); a job sent for later cannot carry it: change the data`,
    };
  }
  return {
    prepared: {
      index,
      id: envelope.id,
      type: envelope.type,
      queue: input.queue,
      queueUrl: input.queueUrl,
      request,
      bytes,
      dataBytes: utf8Bytes(JSON.stringify(envelope.data) ?? ''),
      ...(envelope.runat === undefined ? {} : { runAtMs: Date.parse(envelope.runat) }),
      ...(input.runAtFromDelay ? { runAtFromDelay: true } : {}),
      ...(input.idGiven ? { idGiven: true } : {}),
      ...(envelope.partitionkey === undefined ? {} : { partitionKey: envelope.partitionkey }),
    },
  };
}

/** Largest job sent for later, in UTF-8 bytes: EventBridge Scheduler's `Input` limit, 256 KB (CreateSchedule API). */
export const MAX_SCHEDULED_MESSAGE_BYTES = 262_144;

/** The start of EventBridge Scheduler's context attribute keywords (`<aws.scheduler.scheduled-time>`...). */
const SCHEDULER_KEYWORD = '<aws.scheduler.';

async function prepareOne(
  entry: BatchEntry,
  index: number,
  settings: PrepareSettings,
): Promise<{ prepared?: PreparedEntry; problems: string[]; type: string | undefined }> {
  const job: unknown = (entry as Partial<BatchEntry> | undefined)?.job;
  if (!isSendableJob(job)) {
    return {
      type: undefined,
      problems: ['job must be a job definition (from defineJob) with type, queue and schema'],
    };
  }
  const checks = settings.entryChecks ?? SENT_NOW;
  const { options, problems } = checks.shape(entry);
  const { queueUrl, problem: queueProblem } = resolveQueue(job.queue, settings);
  if (queueProblem !== undefined) problems.push(queueProblem);
  const fifo = queueUrl !== undefined && isFifoQueueUrl(queueUrl);
  if (queueUrl !== undefined) problems.push(...optionProblems(options, fifo, job.queue));
  const runAtMs = checks.due(options, problems);
  if (queueUrl !== undefined && !fifo && job.ordered === true) {
    // The worker would dead-letter it (OrderedJobWithoutGroupError): say so at the call site.
    problems.push(
      `queue "${job.queue}" resolves to a standard queue (${queueUrl}), but ${job.type} needs order per key (ordered: true), which only a FIFO queue keeps: point queueUrls.${job.queue} at the job's FIFO queue (its URL ends in .fifo)`,
    );
  }
  // The worker sees the JSON form of the data: refuse what JSON would change, check the rest as
  // the worker will (JSON.parse of the body, then the schema).
  let jsonData: unknown = null;
  if (entry.data === undefined) {
    problems.push('data must be a JSON value (undefined is not)');
  } else {
    const jsonProblems = jsonValueProblems(entry.data);
    if (jsonProblems.length > 0) {
      const list = jsonProblems.map((problem) => `${problem.path}: ${problem.message}`).join('; ');
      problems.push(`data is not JSON-serializable (${list})`);
    } else {
      jsonData = jsonFormOf(entry.data);
      problems.push(...(await schemaProblems(job, entry.data, jsonData)));
    }
  }

  let envelope: JobEnvelope | undefined;
  try {
    envelope = createEnvelope({
      type: job.type,
      source: settings.source,
      data: jsonData,
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(options.partitionKey === undefined ? {} : { partitionKey: options.partitionKey }),
      lineage: lineageOf(options),
      ...(runAtMs === undefined
        ? {}
        : { schedule: { runat: new Date(runAtMs).toISOString(), schedulegeneration: '1' } }),
      ...(options.batchId === undefined ? {} : { batch: { batchid: options.batchId } }),
    });
  } catch (error) {
    if (error instanceof EnvelopeError) {
      const asInput = ENVELOPE_FIELD_AS_INPUT[error.field] ?? error.field;
      // The FIFO option check may have named this field already: one problem, one line.
      if (problems.some((problem) => problem.startsWith(`${asInput} `))) return { type: job.type, problems };
      const detail = error.message.replace(`invalid job envelope: ${error.field} `, '');
      problems.push(`${asInput} ${detail}`);
    } else {
      problems.push(`the envelope is not JSON-serializable (${describeError(error)})`);
    }
  }
  if (!envelope || queueUrl === undefined || problems.length > 0) return { type: job.type, problems };

  const encoded = encodeEntry(
    {
      index,
      envelope,
      body: stringifyForSqs(envelope) as string,
      queue: job.queue,
      queueUrl,
      fifo,
      delaySeconds: options.delaySeconds,
      awsTraceHeader: options.awsTraceHeader,
      runAtFromDelay: runAtMs !== undefined && options.delayMs !== undefined,
      idGiven: options.id !== undefined,
    },
    settings,
  );
  if (encoded.problem !== undefined) return { type: job.type, problems: [encoded.problem] };
  return { prepared: encoded.prepared, problems, type: job.type };
}

/** Options of a job envelope sent as it is. */
export interface SendEnvelopeOptions {
  /** Seconds before the message becomes visible, integer 0–900. Standard queues only. @default the queue's delay */
  readonly delaySeconds?: number;
}

/** The keys of {@link SendEnvelopeOptions}. */
const ENVELOPE_OPTION_KEYS = ['delaySeconds'] as const satisfies readonly (keyof SendEnvelopeOptions)[];

const ENVELOPE_OPTION_HINTS: Readonly<Record<string, string>> = {
  partitionkey: 'the envelope field partitionkey (a ready envelope carries its own)',
  id: 'the envelope field id (a ready envelope carries its own)',
  delay: 'delaySeconds',
};

/** How the envelope checks name the fields a producer wrote. */
const ENVELOPE_OPTION_NAMES: OptionNames = {
  partitionKey: 'partitionkey',
  delaySeconds: 'delaySeconds',
};

/** The problem of a body given as text that holds a character SQS refuses (lib/core/characters.ts). */
function bodyCharacterProblem(body: string): string | undefined {
  const refused = firstRefusedCharacter(body);
  if (refused === undefined) return undefined;
  const written = `\\u${refused.name.slice(2).toLowerCase()}`;
  return `body has the character ${refused.name} at index ${refused.index}, which SQS does not accept in a message body (SendMessage API, MessageBody); write it as the JSON escape ${written}`;
}

/**
 * Checks a job envelope that is already built (by another service, another language, an
 * operator) against the envelope rules ({@link parseEnvelope}, the same as envelope.schema.json)
 * and the producer rules of the queue (FIFO: `partitionkey` required and valid as
 * `MessageGroupId`; delay only on standard queues; size limit), and encodes it. A body given as
 * text is sent exactly as given (extension attributes, number spelling and whitespace included),
 * so a character SQS refuses in it is a problem, and so is a number the worker's `JSON.parse`
 * would not read as written (`1e400` → Infinity, an integer beyond `Number.MAX_SAFE_INTEGER` that
 * would lose precision: lib/core/json-numbers.ts); an object is serialized with `JSON.stringify`,
 * U+FFFE and U+FFFF written as JSON escapes (`stringifyForSqs`, lib/core/characters.ts).
 */
export function prepareEnvelopeEntry(
  queue: string,
  envelope: string | object,
  options: SendEnvelopeOptions,
  settings: PrepareSettings,
): { prepared?: PreparedEntry; envelope?: JobEnvelope; problems: string[]; type: string | undefined } {
  if (!isPlainObject(options as unknown)) {
    return {
      type: undefined,
      problems: [`options must be an object { delaySeconds }, got ${describeValue(options)}`],
    };
  }
  const keyProblems = unknownKeyProblems(options, ENVELOPE_OPTION_KEYS, 'options', ENVELOPE_OPTION_HINTS);
  if (keyProblems.length > 0) return { type: undefined, problems: keyProblems };
  if (typeof envelope === 'object' && envelope !== null) {
    // An object travels as its JSON: refuse what JSON would change silently (NaN → null, Map → {}).
    const jsonProblems = jsonValueProblems(envelope, 'envelope');
    if (jsonProblems.length > 0) {
      const list = jsonProblems.map((problem) => `${problem.path}: ${problem.message}`).join('; ');
      return { type: undefined, problems: [`envelope is not JSON-serializable (${list})`] };
    }
  }
  let body: string;
  try {
    // Text is sent as given (a refused character is a problem below); an object is serialized
    // so that SQS takes it, losslessly (characters SQS refuses written as JSON escapes).
    body = typeof envelope === 'string' ? envelope : (stringifyForSqs(envelope) as string);
  } catch (error) {
    return { type: undefined, problems: [`envelope is not JSON-serializable (${describeError(error)})`] };
  }
  if (typeof body !== 'string') return { type: undefined, problems: ['envelope must be a JSON object'] };
  let parsed: JobEnvelope;
  try {
    parsed = parseEnvelope(body);
  } catch (error) {
    return { type: undefined, problems: [describeError(error)] };
  }
  const problems: string[] = [];
  // Text can spell numbers the worker's JSON.parse cannot hold (1e400, 2^64): refuse, not round.
  if (typeof envelope === 'string') {
    for (const problem of jsonNumberProblems(body)) problems.push(`${problem.path}: ${problem.message}`);
  }
  const characterProblem = bodyCharacterProblem(body);
  if (characterProblem !== undefined) problems.push(characterProblem);
  const { queueUrl, problem: queueProblem } = resolveQueue(queue, settings);
  if (queueUrl === undefined)
    return { type: parsed.type, envelope: parsed, problems: [queueProblem, ...problems] };
  const fifo = isFifoQueueUrl(queueUrl);
  problems.push(
    ...optionProblems(
      { partitionKey: parsed.partitionkey, delaySeconds: options.delaySeconds },
      fifo,
      queue,
      ENVELOPE_OPTION_NAMES,
    ),
  );
  if (problems.length > 0) return { type: parsed.type, envelope: parsed, problems };
  const encoded = encodeEntry(
    { index: 0, envelope: parsed, body, queue, queueUrl, fifo, delaySeconds: options.delaySeconds },
    settings,
  );
  if (encoded.problem !== undefined)
    return { type: parsed.type, envelope: parsed, problems: [encoded.problem] };
  return { prepared: encoded.prepared, envelope: parsed, problems: [], type: parsed.type };
}

/**
 * Prepares every entry; collects every problem of every entry (nothing is sent here).
 * Also refuses two entries with the same job id: `source` + `id` is the job's identity.
 */
export async function prepareEntries(
  entries: readonly BatchEntry[],
  settings: PrepareSettings,
): Promise<Prepared> {
  const results = await Promise.all(entries.map((entry, index) => prepareOne(entry, index, settings)));
  const problems: EntryProblem[] = [];
  const prepared: PreparedEntry[] = [];
  const firstIndexOfId = new Map<string, number>();
  results.forEach((result, index) => {
    const messages = [...result.problems];
    if (result.prepared) {
      const first = firstIndexOfId.get(result.prepared.id);
      if (first === undefined) firstIndexOfId.set(result.prepared.id, index);
      else
        messages.push(
          `options.id "${result.prepared.id}" is also the id of entry ${first}; job ids must be unique`,
        );
    }
    for (const message of messages) problems.push({ index, type: result.type, message });
    if (result.prepared && messages.length === 0) prepared.push(result.prepared);
  });
  return { entries: prepared, problems };
}
