/**
 * `JobSender`: what sends jobs now, with `JobClient`'s checks, batching and retries: the options
 * checked, entries prepared (prepare.ts), SendMessageBatch requests of at most 10 entries and
 * `maxMessageBytes`, entries SQS did not take retried with backoff (retry.ts), every entry in
 * `sent` or `failed`. `JobClient` (job-client.ts) sends through it and adds what a producer needs
 * beyond that: jobs sent for later (`runAt`, `cancel`, `reschedule`, through the Scheduler and
 * DynamoDB) and `startBatch`.
 *
 * Why a module of its own: workers send their children through it (lib/runtime/child-sender.ts).
 * In a worker bundled into one file (esbuild without splitting inlines a dynamic import), whatever
 * the class that sends children can reach is in the bundle: through `JobClient`, the scheduled
 * paths (scheduled-jobs.ts, the Scheduler client imported at cold start, croner) were in every
 * worker, though a child is never sent for later (issue 21: bundle bytes).
 *
 * Rules and their sources: job-client.ts's top-of-file docstring (SendMessageBatch and
 * SendMessage API references, FIFO deduplication).
 */
import type { SendMessageBatchResult } from '@aws-sdk/client-sqs';
import { chunkByCountAndBytes } from '../core/chunk.ts';
import type { JobEnvelope } from '../core/envelope.ts';
import { classifyError } from '../core/errors.ts';
import type { LogWriter } from '../core/logger.ts';
import { SQS_MAX_BATCH_ENTRIES, SQS_MAX_MESSAGE_BYTES } from '../core/message-size.ts';
import type { TransientNetworkCode } from '../core/network-errors.ts';
import { shownValue } from '../core/shown-value.ts';
import { loadSqsModule } from '../core/sqs-module.ts';
import type {
  BatchResult,
  CheckedEnvelope,
  FailedEntry,
  JobClientOptions,
  SendResult,
  SentEntry,
  SqsBatchSender,
} from './job-client.ts';
import { type EntryProblem, JobClientError } from './job-client-error.ts';
import { describeValue, isPlainObject } from './option-keys.ts';
import {
  type BatchEntry,
  type EntryChecks,
  type PreparedEntry,
  prepareEntries,
  prepareEnvelopeEntry,
  type SendEnvelopeOptions,
} from './prepare.ts';
import { type ClientRetryOptions, clientRetryDelayMs, DEFAULT_CLIENT_RETRY, sleep } from './retry.ts';

/** Default size above which the job data draws a warning: 16 KiB. Payloads should carry ids. */
export const DEFAULT_PAYLOAD_WARN_BYTES = 16_384;

const defaultLogger: LogWriter = {
  debug() {},
  info() {},
  warn(message, extra) {
    console.warn(JSON.stringify({ level: 'WARN', message, ...extra }));
  },
  error(message, extra) {
    console.error(JSON.stringify({ level: 'ERROR', message, ...extra }));
  },
};

/** The checked options every send uses. */
export interface Settings {
  readonly source: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly payloadWarnBytes: number;
  readonly maxMessageBytes: number;
  readonly retry: ClientRetryOptions;
  /** The checks of an entry's keys, options and time (prepare.ts). @default `SENT_NOW`: a worker's */
  readonly entryChecks?: EntryChecks;
}

/**
 * The queue URLs of the options, checked: a plain object of logical name → http(s) URL with a
 * queue path and no query or fragment; trailing slashes are dropped (`…/booking.fifo/` is the
 * FIFO queue `…/booking.fifo`), so the URL sent and the FIFO rules see the same queue.
 */
export function checkQueueUrls(queueUrls: unknown, problems: string[]): Record<string, string> {
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

/** The options {@link JobSender} reads: those a worker gives it (lib/runtime/child-sender.ts). */
export type SenderOptions = Pick<JobClientOptions, 'source' | 'queueUrls' | 'sqs' | 'logger'>;

/** The error of invalid options, listing every problem. */
export function invalidOptions(problems: readonly string[]): JobClientError {
  return new JobClientError(`invalid JobClient options: ${problems.join('; ')}`, {
    code: 'InvalidOptions',
    senderFault: true,
    problems: problems.map((message) => ({ index: 0, type: undefined, message })),
  });
}

/**
 * The settings of a sender built from a worker's options: `source` and `queueUrls` checked (a
 * worker's come from `createWorker` options or its environment), the rest at their defaults.
 * `JobClient` checks every option of its own (client-options.ts): those checks and their advice
 * are a producer's, so they stay out of worker bundles (issue 21: bundle bytes).
 * @throws {JobClientError} `InvalidOptions`, naming every problem.
 */
export function senderSettings(options: SenderOptions): Settings {
  const problems: string[] = [];
  const { source } = options;
  if (typeof source !== 'string' || source.length === 0) problems.push('source must be a non-empty string');
  const queueUrls = checkQueueUrls(options.queueUrls, problems);
  if (problems.length > 0) throw invalidOptions(problems);
  return {
    source,
    queueUrls,
    payloadWarnBytes: DEFAULT_PAYLOAD_WARN_BYTES,
    maxMessageBytes: SQS_MAX_MESSAGE_BYTES,
    retry: DEFAULT_CLIENT_RETRY,
  };
}

/** The error of entries refused before sending: nothing was sent. */
export function refusal(
  problems: readonly EntryProblem[],
  total: number,
  code = 'InvalidEntries',
): JobClientError {
  const badEntries = new Set(problems.map((p) => p.index)).size;
  const lines = problems.map(
    (p) => `  entry ${p.index}${p.type === undefined ? '' : ` (${p.type})`}: ${p.message}`,
  );
  return new JobClientError(
    `${badEntries} of ${total} job${total === 1 ? '' : 's'} refused before sending; nothing was sent:\n${lines.join('\n')}`,
    { code, senderFault: true, problems },
  );
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
export function singleResult({ sent, failed }: BatchResult, type: string): SendResult {
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
 * Sends jobs now, as `JobClient` does (its `sendBatch`, `sendEnvelope`, `checkEnvelope`,
 * `checkBatch` say what each checks and returns). A job sent for later (`runAt`, `delayMs`) is
 * refused with `MissingScheduling`: that takes a `JobClient`.
 *
 * @throws {JobClientError} `InvalidOptions` from the constructor, listing every bad option
 *   ({@link senderSettings}).
 */
export class JobSender {
  readonly settings: Settings;
  readonly #logger: LogWriter;
  #sqs: SqsBatchSender | undefined;

  /**
   * @param options where to send (`source`, `queueUrls`), the SQS client and the logger.
   * @param settings the checked settings: `JobClient` passes those of all its options
   *   (client-options.ts); by default {@link senderSettings} of `options`.
   */
  constructor(options: SenderOptions, settings: Settings = senderSettings(options)) {
    this.settings = settings;
    this.#logger = options.logger ?? defaultLogger;
    this.#sqs = options.sqs;
  }

  /** `JobClient.checkEnvelope`. */
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

  /** `JobClient.sendEnvelope`. */
  async sendEnvelope(
    queue: string,
    envelope: string | object,
    options: SendEnvelopeOptions = {},
  ): Promise<SendResult> {
    const { prepared } = this.#prepareEnvelope(queue, envelope, options);
    return singleResult(await this.sendPrepared([prepared]), prepared.type);
  }

  #prepareEnvelope(
    queue: string,
    envelope: string | object,
    options: SendEnvelopeOptions,
  ): { prepared: PreparedEntry; envelope: JobEnvelope } {
    const result = prepareEnvelopeEntry(queue, envelope, options ?? {}, this.settings);
    if (!result.prepared || !result.envelope || result.problems.length > 0) {
      throw refusal(
        result.problems.map((message) => ({ index: 0, type: result.type, message })),
        1,
      );
    }
    return { prepared: result.prepared, envelope: result.envelope };
  }

  /** `JobClient.checkBatch`. */
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
    const { problems } = await prepareEntries(entries, this.settings);
    if (problems.length > 0) throw refusal(problems, entries.length);
  }

  /**
   * Checks and prepares entries as `JobClient.sendBatch` does, sending nothing.
   * @throws {JobClientError} `InvalidEntries` when `entries` is not an array or an entry is refused,
   *   listing every problem of every bad entry by index.
   */
  async prepareBatch(entries: ReadonlyArray<BatchEntry>): Promise<readonly PreparedEntry[]> {
    if (!Array.isArray(entries)) {
      throw new JobClientError(
        `sendBatch takes an array of entries [{ job, data, options }, ...], got ${describeValue(entries)}; to send one job use send(job, data, options)`,
        { code: 'InvalidEntries', senderFault: true },
      );
    }
    const { entries: prepared, problems } = await prepareEntries(entries, this.settings);
    if (problems.length > 0) throw refusal(problems, entries.length);
    return prepared;
  }

  /**
   * `JobClient.sendBatch` for jobs that go now.
   * @throws {JobClientError} `MissingScheduling` for an entry with `runAt` or `delayMs`, checked
   *   first (nothing sent): sending for later takes a `JobClient` with `scheduling`; else as
   *   {@link prepareBatch}.
   */
  async sendBatch(entries: ReadonlyArray<BatchEntry>): Promise<BatchResult> {
    // Before preparing: the default entry checks (a worker's, SENT_NOW) do not read the time options.
    const later = (Array.isArray(entries) ? entries : []).flatMap((entry, index) => {
      const options = (entry as Partial<BatchEntry> | undefined)?.options;
      return options?.runAt === undefined && options?.delayMs === undefined
        ? []
        : [
            {
              index,
              type: (entry as Partial<BatchEntry>).job?.type,
              message:
                'runAt/delayMs: a job sent for later needs a JobClient with scheduling (docs/schedules.md)',
            },
          ];
    });
    if (later.length > 0) throw refusal(later, entries.length, 'MissingScheduling');
    return this.sendPrepared(await this.prepareBatch(entries));
  }

  /** Warns about large payloads, then sends per queue; every entry ends in `sent` or `failed`. */
  async sendPrepared(prepared: readonly PreparedEntry[]): Promise<BatchResult> {
    for (const entry of prepared) {
      if (entry.dataBytes > this.settings.payloadWarnBytes) {
        this.#logger.warn('job data is larger than payloadWarnBytes: payloads should carry ids only', {
          index: entry.index,
          jobType: entry.type,
          jobId: entry.id,
          queue: entry.queue,
          dataBytes: entry.dataBytes,
          payloadWarnBytes: this.settings.payloadWarnBytes,
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
      maxBytes: this.settings.maxMessageBytes,
    });
    for (const chunk of chunks) await this.#sendChunk(chunk, outcome);
  }

  /** Sends one request's entries, retrying what may be retried; records every entry's outcome. */
  async #sendChunk(chunk: readonly PreparedEntry[], outcome: Outcome): Promise<void> {
    const { maxAttempts, baseDelayMs } = this.settings.retry;
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
