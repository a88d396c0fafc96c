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
 * Why one file: `JobClient` is one class whose send paths (send, sendBatch, sendEnvelope,
 * checkEnvelope) share its settings, the batching by count and bytes and the retry loop; the
 * checks before sending are in prepare.ts, the retry policy in retry.ts.
 */
import { randomUUID } from 'node:crypto';
import type { SendMessageBatchCommand, SendMessageBatchResult } from '@aws-sdk/client-sqs';
import { batchIdProblem } from '../core/batch.ts';
import { chunkByCountAndBytes } from '../core/chunk.ts';
import type { JobEnvelope } from '../core/envelope.ts';
import { classifyError } from '../core/errors.ts';
import type { JobLogger } from '../core/logger.ts';
import { SQS_MAX_BATCH_ENTRIES, SQS_MAX_MESSAGE_BYTES } from '../core/message-size.ts';
import type { TransientNetworkCode } from '../core/network-errors.ts';
import { isFifoQueueUrl } from '../core/queue-urls.ts';
import { shownValue } from '../core/shown-value.ts';
import {
  type BatchSpec,
  type BatchStarted,
  delayedWatchdogScheduler,
  startBatchWith,
  type WatchdogScheduler,
} from './batch-start.ts';
import { BATCH_OPTION_KEYS, batchTable, type JobClientBatchOptions } from './batch-table.ts';
import { type EntryProblem, JobClientError } from './job-client-error.ts';
import { describeValue, isPlainObject, unknownKeyProblems } from './option-keys.ts';
import {
  type BatchEntry,
  type PreparedEntry,
  prepareEntries,
  prepareEnvelopeEntry,
  type SendableJob,
  type SendEnvelopeOptions,
  type SendOptions,
} from './prepare.ts';
import { type ClientRetryOptions, clientRetryDelayMs, DEFAULT_CLIENT_RETRY, sleep } from './retry.ts';
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

export type { BatchEntry, ParentLink, SendableJob, SendEnvelopeOptions, SendOptions } from './prepare.ts';

/** Default size above which the job data draws a warning: 16 KiB. Payloads should carry ids. */
export const DEFAULT_PAYLOAD_WARN_BYTES = 16_384;

let sqsModule: Promise<typeof import('@aws-sdk/client-sqs')> | undefined;

/**
 * `@aws-sdk/client-sqs`, imported at the first send (a failed import is tried again on the next).
 * A static import would be hoisted to the top of every bundle that holds the JobClient, the
 * workers' included (they send children through it), and with the SDK left external (as the
 * Lambda runtime provides it) the SDK module would be loaded at every cold start: about 15 ms of
 * CPU and its heap, for workers whose batches mostly send nothing (issue 21).
 */
function loadSqsModule(): Promise<typeof import('@aws-sdk/client-sqs')> {
  sqsModule ??= import('@aws-sdk/client-sqs').catch((error: unknown) => {
    sqsModule = undefined;
    throw error;
  });
  return sqsModule;
}
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
  /** @default JSON lines on stderr for warnings and errors; debug and info dropped */
  readonly logger?: JobLogger;
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

const defaultLogger: JobLogger = {
  debug() {},
  info() {},
  warn(message, extra) {
    console.warn(JSON.stringify({ level: 'WARN', message, ...extra }));
  },
  error(message, extra) {
    console.error(JSON.stringify({ level: 'ERROR', message, ...extra }));
  },
};

interface Settings {
  readonly source: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly payloadWarnBytes: number;
  readonly maxMessageBytes: number;
  readonly retry: ClientRetryOptions;
}

/** The keys of {@link JobClientOptions}. */
const CLIENT_OPTION_KEYS = [
  'source',
  'queueUrls',
  'sqs',
  'logger',
  'payloadWarnBytes',
  'maxMessageBytes',
  'retry',
  'scheduling',
  'scheduler',
  'dynamodb',
  'batches',
  'scheduleBatchWatchdog',
] as const satisfies readonly (keyof JobClientOptions)[];

/** What to write instead of keys other SDKs and clients take. */
const CLIENT_OPTION_HINTS: Readonly<Record<string, string>> = {
  region: 'sqs: new SQSClient({ region }) (or set AWS_REGION)',
  endpoint: 'sqs: new SQSClient({ endpoint }) (or set AWS_ENDPOINT_URL_SQS)',
  credentials: 'sqs: new SQSClient({ credentials }) (or AWS_PROFILE)',
  maxattempts: 'retry: { maxAttempts }',
  queueurl: 'queueUrls: { <name>: <url> }',
  queues: 'queueUrls: { <name>: <url> }',
};

const RETRY_OPTION_KEYS = [
  'maxAttempts',
  'baseDelayMs',
] as const satisfies readonly (keyof ClientRetryOptions)[];

/**
 * The queue URLs of the options, checked: a plain object of logical name → http(s) URL with a
 * queue path and no query or fragment; trailing slashes are dropped (`…/booking.fifo/` is the
 * FIFO queue `…/booking.fifo`), so the URL sent and the FIFO rules see the same queue.
 */
function checkQueueUrls(queueUrls: unknown, problems: string[]): Record<string, string> {
  const example = "e.g. { booking: 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo' }";
  if (!isPlainObject(queueUrls)) {
    const got = describeValue(queueUrls);
    problems.push(
      `queueUrls must be an object of logical queue name → queue URL (${example}), got ${got}${queueUrls instanceof Map ? ': pass Object.fromEntries(map)' : ''}`,
    );
    return {};
  }
  const checked: Record<string, string> = {};
  for (const [name, url] of Object.entries(queueUrls)) {
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (typeof url !== 'string' || !parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
      problems.push(`queueUrls.${name} must be an http(s) queue URL, got ${shownValue(url)}`);
    } else if (/\s/.test(url) || parsed.search !== '' || parsed.hash !== '') {
      problems.push(
        `queueUrls.${name} must be a queue URL without spaces, query or fragment (https://sqs.<region>.amazonaws.com/<account-id>/<queue-name>), got ${shownValue(url)}`,
      );
    } else if (parsed.pathname.replace(/\/+$/, '') === '') {
      problems.push(
        `queueUrls.${name} has no queue in its path (https://sqs.<region>.amazonaws.com/<account-id>/<queue-name>), got ${shownValue(url)}`,
      );
    } else {
      checked[name] = url.replace(/\/+$/, '');
    }
  }
  return checked;
}

function checkOptions(options: JobClientOptions): Settings {
  const problems: string[] = [];
  if (!isPlainObject(options)) {
    const problem = `expected an object { source, queueUrls, ... }, got ${describeValue(options)}`;
    throw new JobClientError(`invalid JobClient options: ${problem}`, {
      code: 'InvalidOptions',
      senderFault: true,
      problems: [{ index: 0, type: undefined, message: problem }],
    });
  }
  problems.push(...unknownKeyProblems(options, CLIENT_OPTION_KEYS, '', CLIENT_OPTION_HINTS));
  const source = options?.source;
  if (typeof source !== 'string' || source.length === 0) problems.push('source must be a non-empty string');
  const queueUrls = checkQueueUrls(options.queueUrls, problems);
  problems.push(...schedulingProblems(options.scheduling));
  if (options.retry !== undefined) {
    if (!isPlainObject(options.retry)) {
      problems.push(
        `retry must be an object { maxAttempts, baseDelayMs }, got ${describeValue(options.retry)}`,
      );
    } else {
      problems.push(...unknownKeyProblems(options.retry, RETRY_OPTION_KEYS, 'retry'));
    }
  }
  if (
    options.logger !== undefined &&
    (typeof options.logger !== 'object' ||
      options.logger === null ||
      typeof options.logger.warn !== 'function')
  ) {
    problems.push('logger must have warn(message, extra) and error(message, extra), e.g. console');
  }
  const payloadWarnBytes = options?.payloadWarnBytes ?? DEFAULT_PAYLOAD_WARN_BYTES;
  if (typeof payloadWarnBytes !== 'number' || Number.isNaN(payloadWarnBytes) || payloadWarnBytes < 0) {
    problems.push(`payloadWarnBytes must be a number >= 0, got ${payloadWarnBytes}`);
  }
  const maxMessageBytes = options?.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1 || maxMessageBytes > SQS_MAX_MESSAGE_BYTES) {
    problems.push(
      `maxMessageBytes must be an integer from 1 to ${SQS_MAX_MESSAGE_BYTES} (1 MiB, the SQS limit), got ${maxMessageBytes}`,
    );
  }
  const retry: ClientRetryOptions = {
    maxAttempts: options?.retry?.maxAttempts ?? DEFAULT_CLIENT_RETRY.maxAttempts,
    baseDelayMs: options?.retry?.baseDelayMs ?? DEFAULT_CLIENT_RETRY.baseDelayMs,
  };
  if (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1 || retry.maxAttempts > 20) {
    problems.push(`retry.maxAttempts must be an integer from 1 to 20, got ${retry.maxAttempts}`);
  }
  if (!Number.isFinite(retry.baseDelayMs) || retry.baseDelayMs < 0) {
    problems.push(`retry.baseDelayMs must be a finite number >= 0, got ${retry.baseDelayMs}`);
  }
  for (const [key, client] of [
    ['sqs', 'an SQS client (new SQSClient({}))'],
    ['scheduler', 'an EventBridge Scheduler client (new SchedulerClient({}))'],
    ['dynamodb', 'a DynamoDB client (new DynamoDBClient({}))'],
  ] as const) {
    const value = options[key] as { send?: unknown } | undefined;
    if (value !== undefined && typeof value?.send !== 'function') {
      problems.push(`${key} must be ${client}: an object with send(command), got ${describeValue(value)}`);
    }
  }
  problems.push(...batchesProblems(options.batches));
  if (problems.length > 0) {
    throw new JobClientError(`invalid JobClient options: ${problems.join('; ')}`, {
      code: 'InvalidOptions',
      senderFault: true,
      problems: problems.map((message) => ({ index: 0, type: undefined, message })),
    });
  }
  return { source, queueUrls, payloadWarnBytes, maxMessageBytes, retry };
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

function refusal(problems: readonly EntryProblem[], total: number, code = 'InvalidEntries'): JobClientError {
  const badEntries = new Set(problems.map((p) => p.index)).size;
  const lines = problems.map(
    (p) => `  entry ${p.index}${p.type === undefined ? '' : ` (${p.type})`}: ${p.message}`,
  );
  return new JobClientError(
    `${badEntries} of ${total} job${total === 1 ? '' : 's'} refused before sending; nothing was sent:\n${lines.join('\n')}`,
    { code, senderFault: true, problems },
  );
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

/** Code of a whole-request failure: the Node/undici `code` (ECONNRESET), else the AWS error name. */
function errorCode(error: unknown): string {
  const { code, name } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    name?: unknown;
  };
  if (typeof code === 'string' && code.length > 0) return code;
  return typeof name === 'string' && name.length > 0 ? name : 'Error';
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** SDK errors of a credential or token provider (`@smithy/property-provider`). */
const PROVIDER_ERROR_NAMES = new Set(['CredentialsProviderError', 'TokenProviderError', 'ProviderError']);

/**
 * Network codes that, named in a provider's message, make its failure retryable: deliberately
 * narrower than the transient list (core/network-errors.ts), since a credentials endpoint whose
 * host does not resolve or route (ENOTFOUND, EHOSTUNREACH) is a setup problem to report at once.
 */
const PROVIDER_RETRYABLE_CODES = [
  'ECONNRESET',
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ETIMEDOUT',
] as const satisfies readonly TransientNetworkCode[];

/** A provider's failure that a retry can outlive: the credentials endpoint timed out or throttled. */
const TRANSIENT_PROVIDER_MESSAGE = new RegExp(
  `throttl|too many requests|timed? ?out|timeout|${PROVIDER_RETRYABLE_CODES.join('|')}|socket hang up|\\b(?:429|5\\d\\d)\\b`,
  'i',
);

/**
 * The setup problem of a request that failed before it was sent, or undefined. The SDK resolves
 * the region and the credentials when a command is sent; when the client is not configured it
 * throws a plain `Error('Region is missing')` or a `CredentialsProviderError` (no `$metadata`:
 * the request never left), which `classifyError` would call transient. No retry can fix them:
 * fail at once, saying what to configure. A provider error that says it timed out or was
 * throttled (an instance or container credentials endpoint under load) stays retryable.
 */
export function setupProblem(error: unknown): { code: string; message: string } | undefined {
  if (typeof error !== 'object' || error === null || '$metadata' in error) return undefined;
  const { name, message, code } = error as { name?: unknown; message?: unknown; code?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (/^Region is missing/i.test(text)) {
    return {
      code: 'MissingRegion',
      message: `${text}: set AWS_REGION (or a region in the AWS_PROFILE profile), or pass sqs: new SQSClient({ region })`,
    };
  }
  if (/^(?:Region not accepted|Invalid region)/i.test(text)) {
    return {
      code: 'InvalidRegion',
      message: `${text}: set AWS_REGION (or the SQSClient region) to a region such as eu-west-1`,
    };
  }
  if (typeof name === 'string' && PROVIDER_ERROR_NAMES.has(name)) {
    const cause = (error as { cause?: unknown }).cause;
    if (TRANSIENT_PROVIDER_MESSAGE.test(text)) return undefined;
    if (cause !== undefined && classifyError(cause).kind === 'transient' && errorCode(cause) !== 'Error')
      return undefined;
    return {
      code: 'MissingCredentials',
      message:
        `${text || name}: configure the AWS credentials chain: AWS_PROFILE (run aws sso login for an SSO profile), ` +
        'or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a role; or pass sqs: new SQSClient({ credentials })',
    };
  }
  if (code === 'ERR_INVALID_URL') {
    return {
      code: 'InvalidEndpoint',
      message: `${text}: the SQS endpoint is not a URL; check AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL or the SQSClient endpoint`,
    };
  }
  return undefined;
}

/** An entry that may be retried, with what went wrong last time. */
interface Retryable {
  readonly entry: PreparedEntry;
  readonly code: string;
  readonly message: string;
  readonly minDelayMs: number;
  /** The error of the whole request, when it failed. */
  readonly cause?: unknown;
}

/** Collects outcomes; every prepared entry ends in exactly one list. */
class Outcome {
  readonly sent: SentEntry[] = [];
  readonly failed: FailedEntry[] = [];

  succeed(entry: PreparedEntry, messageId: string, sequenceNumber: string | undefined): void {
    this.sent.push({
      index: entry.index,
      id: entry.id,
      messageId,
      queue: entry.queue,
      ...(sequenceNumber === undefined ? {} : { sequenceNumber }),
    });
  }

  fail(entry: PreparedEntry, code: string, message: string, senderFault: boolean, cause?: unknown): void {
    const failed: FailedEntry = {
      index: entry.index,
      id: entry.id,
      queue: entry.queue,
      code,
      message,
      senderFault,
    };
    // Not enumerable: a failed entry is logged and kept as evidence; an SDK error is large.
    if (cause !== undefined) Object.defineProperty(failed, 'cause', { value: cause, enumerable: false });
    this.failed.push(failed);
  }

  result(): BatchResult {
    return {
      sent: this.sent.sort((a, b) => a.index - b.index),
      failed: this.failed.sort((a, b) => a.index - b.index),
    };
  }
}

/** The result of a one-entry batch, or the error naming why its job was not sent. */
function singleResult({ sent, failed }: BatchResult, type: string): SendResult {
  const failure = failed[0];
  if (failure) {
    throw new JobClientError(
      `job ${type} (id ${failure.id}) was not sent to queue "${failure.queue}": ${failure.code}: ${failure.message}`,
      {
        code: failure.code,
        senderFault: failure.senderFault,
        problems: [{ index: 0, type, message: `${failure.code}: ${failure.message}` }],
        context: { jobType: type, jobId: failure.id, queue: failure.queue },
        ...(failure.cause === undefined ? {} : { cause: failure.cause }),
      },
    );
  }
  const { index: _index, ...result } = sent[0]!;
  return result;
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
  readonly #settings: Settings;
  readonly #logger: JobLogger;
  #sqs: SqsBatchSender | undefined;
  readonly #scheduling: SchedulingOptions;
  readonly #scheduler: SchedulerSender | undefined;
  readonly #dynamodb: DynamoDbSender | undefined;
  /** The scheduled paths, loaded on first use (lib/client/scheduled-jobs.ts and the Scheduler and DynamoDB clients). */
  #scheduled: Promise<ScheduledJobs> | undefined;
  readonly #batches: JobClientBatchOptions | undefined;
  readonly #scheduleWatchdog: WatchdogScheduler;

  constructor(options: JobClientOptions) {
    this.#settings = checkOptions(options);
    this.#logger = options.logger ?? defaultLogger;
    this.#sqs = options.sqs;
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
          source: this.#settings.source,
          queueUrls: this.#settings.queueUrls,
          scheduling: this.#scheduling,
          scheduler: this.#scheduler,
          dynamodb: this.#dynamodb,
          now: Date.now,
          sendNow: (entries) => this.#sendPrepared(entries),
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
    checkIdentity(identity, this.#settings.queueUrls);
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
    checkIdentity(identity, this.#settings.queueUrls);
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
   * Starts a batch: its children now, and its completion job (`spec.then`) once every child is
   * counted (completed, or dead-lettered under `complete-with-failures`), exactly once
   * (docs/architecture.md, "Batches"). The batch is kept in the idempotency table of
   * `options.batches`; the children's and completion job's workers count it there.
   *
   * Writes the batch item (one PutItem), sends the children (SendMessageBatch, 10 per request) and
   * the batch's watchdog (checked at `openLimitSeconds`). Starting again with the same `spec.id`
   * (after an error, or a retry of the caller) starts nothing new and sends no second child.
   *
   * @param spec children, completion job (`then`), `onChildDeadLettered`, `openLimitSeconds`, `id`.
   * @returns the batch id, its number of children, and whether this call created it.
   * @throws {JobClientError} `BatchesNeedTable` when the client has no `batches.tableName`;
   *   `InvalidBatch` listing what is wrong with `spec` (nothing written or sent); `InvalidEntries`
   *   when a child is refused before sending (schema, queue, partition key).
   * @throws {TransientError} when some children could not be sent: call again with the same `id`.
   */
  async startBatch(spec: BatchSpec): Promise<BatchStarted> {
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
      { batchId: id, source: this.#settings.source, now: Date.now() },
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
    const { prepared, envelope: parsed } = this.#prepareEnvelope(queue, envelope, options);
    const { request } = prepared;
    return {
      envelope: parsed,
      queue: prepared.queue,
      queueUrl: prepared.queueUrl,
      body: request.MessageBody ?? '',
      ...(request.MessageGroupId === undefined ? {} : { messageGroupId: request.MessageGroupId }),
      ...(request.MessageDeduplicationId === undefined
        ? {}
        : { messageDeduplicationId: request.MessageDeduplicationId }),
      ...(request.DelaySeconds === undefined ? {} : { delaySeconds: request.DelaySeconds }),
      bytes: prepared.bytes,
    };
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
    const { prepared } = this.#prepareEnvelope(queue, envelope, options);
    return singleResult(await this.#sendPrepared([prepared]), prepared.type);
  }

  #prepareEnvelope(
    queue: string,
    envelope: string | object,
    options: SendEnvelopeOptions,
  ): { prepared: PreparedEntry; envelope: JobEnvelope } {
    const result = prepareEnvelopeEntry(queue, envelope, options ?? {}, this.#settings);
    if (!result.prepared || !result.envelope || result.problems.length > 0) {
      throw refusal(
        result.problems.map((message) => ({ index: 0, type: result.type, message })),
        1,
      );
    }
    return { prepared: result.prepared, envelope: result.envelope };
  }

  /**
   * Checks entries exactly as {@link sendBatch} does before sending, and sends nothing: what a
   * caller runs before writing state that the sends must match (a batch's item, say).
   * @throws {JobClientError} `InvalidEntries` as {@link sendBatch} would, naming every problem.
   */
  async checkBatch(entries: ReadonlyArray<BatchEntry>): Promise<void> {
    if (!Array.isArray(entries)) {
      throw new JobClientError(
        `checkBatch takes an array of entries [{ job, data, options }, ...], got ${describeValue(entries)}`,
        {
          code: 'InvalidEntries',
          senderFault: true,
        },
      );
    }
    const { problems } = await prepareEntries(entries, this.#settings);
    if (problems.length > 0) throw refusal(problems, entries.length);
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
    if (!Array.isArray(entries)) {
      throw new JobClientError(
        `sendBatch takes an array of entries [{ job, data, options }, ...], got ${describeValue(entries)}; to send one job use send(job, data, options)`,
        { code: 'InvalidEntries', senderFault: true },
      );
    }
    const { entries: prepared, problems } = await prepareEntries(entries, this.#settings);
    if (problems.length > 0) throw refusal(problems, entries.length);
    const later = prepared.filter((entry) => entry.runAtMs !== undefined);
    if (later.length === 0) return this.#sendPrepared(prepared);
    const missing = this.#schedulingProblems(later);
    if (missing.length > 0) throw refusal(missing, entries.length, 'MissingScheduling');
    const scheduled = await this.#scheduledJobs();
    const [now, forLater] = await Promise.all([
      this.#sendPrepared(prepared.filter((entry) => entry.runAtMs === undefined)),
      scheduled.send(later),
    ]);
    return {
      sent: [...now.sent, ...forLater.sent].sort((a, b) => a.index - b.index),
      failed: [...now.failed, ...forLater.failed].sort((a, b) => a.index - b.index),
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

  /** Warns about large payloads, then sends per queue; every entry ends in `sent` or `failed`. */
  async #sendPrepared(prepared: readonly PreparedEntry[]): Promise<BatchResult> {
    for (const entry of prepared) {
      if (entry.dataBytes > this.#settings.payloadWarnBytes) {
        this.#logger.warn('job data is larger than payloadWarnBytes: payloads should carry ids only', {
          index: entry.index,
          jobType: entry.type,
          jobId: entry.id,
          queue: entry.queue,
          dataBytes: entry.dataBytes,
          payloadWarnBytes: this.#settings.payloadWarnBytes,
        });
      }
    }
    const outcome = new Outcome();
    const byQueueUrl = new Map<string, PreparedEntry[]>();
    for (const entry of prepared) {
      const group = byQueueUrl.get(entry.queueUrl);
      if (group) group.push(entry);
      else byQueueUrl.set(entry.queueUrl, [entry]);
    }
    await Promise.all([...byQueueUrl.values()].map((group) => this.#sendToQueue(group, outcome)));
    return outcome.result();
  }

  async #sendToQueue(entries: readonly PreparedEntry[], outcome: Outcome): Promise<void> {
    const chunks = chunkByCountAndBytes(entries, (entry) => entry.bytes, {
      maxEntries: SQS_MAX_BATCH_ENTRIES,
      maxBytes: this.#settings.maxMessageBytes,
    });
    for (const chunk of chunks) await this.#sendChunk(chunk, outcome);
  }

  /** Sends one request's entries, retrying what may be retried; records every entry's outcome. */
  async #sendChunk(chunk: readonly PreparedEntry[], outcome: Outcome): Promise<void> {
    const { maxAttempts, baseDelayMs } = this.#settings.retry;
    let pending = chunk;
    for (let attempt = 1; ; attempt++) {
      const retry = await this.#tryOnce(pending, outcome);
      if (retry.length === 0) return;
      const first = retry[0]!;
      if (attempt >= maxAttempts) {
        for (const r of retry)
          outcome.fail(r.entry, r.code, `${r.message} (after ${attempt} tries)`, false, r.cause);
        this.#logger.warn('jobs not sent: retries used up', {
          queue: first.entry.queue,
          attempts: attempt,
          entries: retry.length,
          codes: [...new Set(retry.map((r) => r.code))],
        });
        return;
      }
      const minDelayMs = Math.max(...retry.map((r) => r.minDelayMs));
      const delayMs = clientRetryDelayMs(attempt, baseDelayMs, minDelayMs);
      this.#logger.warn('SQS did not take some jobs: retrying', {
        queue: first.entry.queue,
        attempt,
        delayMs,
        entries: retry.length,
        codes: [...new Set(retry.map((r) => r.code))],
      });
      await sleep(delayMs);
      pending = retry.map((r) => r.entry);
    }
  }

  /** One SendMessageBatch call; returns the entries worth another try. */
  async #tryOnce(pending: readonly PreparedEntry[], outcome: Outcome): Promise<Retryable[]> {
    let output: Partial<SendMessageBatchResult>;
    try {
      const { SendMessageBatchCommand, SQSClient } = await loadSqsModule();
      this.#sqs ??= new SQSClient({});
      const response = await this.#sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: pending[0]!.queueUrl,
          Entries: pending.map((e) => e.request),
        }),
      );
      output = (response ?? {}) as Partial<SendMessageBatchResult>;
    } catch (error) {
      const setup = setupProblem(error);
      if (setup !== undefined) {
        for (const entry of pending) outcome.fail(entry, setup.code, setup.message, true, error);
        return [];
      }
      const classification = classifyError(error);
      const code = errorCode(error);
      const message = errorMessage(error);
      if (classification.kind === 'permanent') {
        for (const entry of pending) outcome.fail(entry, code, message, true, error);
        return [];
      }
      const minDelayMs = classification.minDelayMs ?? 0;
      return pending.map((entry) => ({ entry, code, message, minDelayMs, cause: error }));
    }
    const waiting = new Map(pending.map((entry) => [entry.request.Id, entry]));
    for (const success of output.Successful ?? []) {
      const entry = waiting.get(success.Id);
      if (!entry) continue;
      waiting.delete(success.Id);
      outcome.succeed(entry, success.MessageId ?? '', success.SequenceNumber);
    }
    const retry: Retryable[] = [];
    for (const failure of output.Failed ?? []) {
      const entry = waiting.get(failure.Id);
      if (!entry) continue;
      waiting.delete(failure.Id);
      const code = failure.Code ?? 'Unknown';
      const message = failure.Message ?? '';
      if (failure.SenderFault === false) retry.push({ entry, code, message, minDelayMs: 0 });
      else outcome.fail(entry, code, message, true);
    }
    // The response must account for every entry (Successful + Failed == sent); one it does not
    // mention may or may not be queued: send it again (its FIFO dedup id and envelope id stay).
    for (const entry of waiting.values()) {
      retry.push({
        entry,
        code: 'MissingFromResponse',
        message: 'SendMessageBatch reported neither success nor failure for this entry',
        minDelayMs: 0,
      });
    }
    return retry;
  }
}
