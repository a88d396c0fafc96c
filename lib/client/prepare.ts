/**
 * Checks and encodes the entries of a send before anything goes out: resolves the queue,
 * validates the data with the job's Standard Schema, builds the CloudEvents envelope, applies
 * the FIFO and delay rules of the SendMessage API, and measures the message against the size
 * limit. Every problem of every entry is collected, so one error can list them all.
 */
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { createEnvelope, deduplicationIdOf, EnvelopeError, type JobEnvelope } from '../runtime/envelope.ts';
import { isValidMessageGroupId, MAX_DELAY_SECONDS } from '../sqs/message-parameters.ts';
import { messageSizeBytes, utf8Bytes } from '../sqs/message-size.ts';
import { isFifoQueueUrl } from '../sqs/queue-urls.ts';
import type { EntryProblem } from './job-client-error.ts';

/** What the client needs of a job definition: a {@link JobDefinition} has it. */
export interface SendableJob<Data = unknown> {
  /** The envelope `type`. */
  readonly type: string;
  /** Logical queue name, resolved to a URL through the client's `queueUrls`. */
  readonly queue: string;
  /** Standard Schema of the job's data; the data must pass it before it is sent. */
  readonly schema: StandardSchemaV1<unknown, Data>;
}

/** Options of one job sent. */
export interface SendOptions {
  /**
   * Partitioning key: the envelope `partitionkey` and, on a FIFO queue, the `MessageGroupId`
   * (e.g. the user id). Required on FIFO queues; 1–128 printable ASCII characters, no space.
   */
  readonly partitionKey?: string;
  /** The envelope `id` (1–256 characters); with the client's `source` the job's identity. @default a random UUID */
  readonly id?: string;
  /** Seconds before the message becomes visible, integer 0–900. Standard queues only. @default the queue's delay */
  readonly delaySeconds?: number;
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
}

/** Settings of {@link prepareEntries}. */
export interface PrepareSettings {
  readonly source: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly maxMessageBytes: number;
}

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
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
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
};

async function schemaProblems(job: SendableJob<unknown>, data: unknown): Promise<string[]> {
  try {
    const result = await job.schema['~standard'].validate(data);
    if (!result.issues) return [];
    return result.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
  } catch (error) {
    return [`data: the schema threw while validating (${describeError(error)})`];
  }
}

function optionProblems(options: SendOptions, fifo: boolean, queue: string): string[] {
  const problems: string[] = [];
  const { delaySeconds, partitionKey } = options;
  if (delaySeconds !== undefined) {
    if (fifo) {
      problems.push(
        `options.delaySeconds is not allowed on FIFO queue "${queue}": SQS only takes a queue-level delay there (SendMessage API, DelaySeconds)`,
      );
    } else if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
      problems.push(
        `options.delaySeconds must be an integer from 0 to ${MAX_DELAY_SECONDS}, got ${delaySeconds}`,
      );
    }
  }
  if (fifo) {
    if (partitionKey === undefined) {
      problems.push(
        `options.partitionKey is required on FIFO queue "${queue}": it becomes the MessageGroupId (e.g. the user id)`,
      );
    } else if (typeof partitionKey === 'string' && !isValidMessageGroupId(partitionKey)) {
      problems.push(
        'options.partitionKey must be 1-128 characters of a-z, A-Z, 0-9 and punctuation (printable ASCII, no space) on a FIFO queue: it becomes the MessageGroupId',
      );
    }
  }
  return problems;
}

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
  const options: SendOptions = entry.options ?? {};
  const problems: string[] = [];
  const queueUrl = Object.hasOwn(settings.queueUrls, job.queue) ? settings.queueUrls[job.queue] : undefined;
  if (queueUrl === undefined) {
    const known = Object.keys(settings.queueUrls).sort().join(', ') || 'none';
    problems.push(
      `unknown queue "${job.queue}" (known queues: ${known}); pass its URL in queueUrls or set JOBS_QUEUE_URL_<NAME>`,
    );
  }
  const fifo = queueUrl !== undefined && isFifoQueueUrl(queueUrl);
  if (queueUrl !== undefined) problems.push(...optionProblems(options, fifo, job.queue));
  problems.push(...(await schemaProblems(job, entry.data)));

  let envelope: JobEnvelope | undefined;
  try {
    envelope = createEnvelope({
      type: job.type,
      source: settings.source,
      data: entry.data,
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(options.partitionKey === undefined ? {} : { partitionKey: options.partitionKey }),
    });
  } catch (error) {
    if (error instanceof EnvelopeError && error.field === 'data') {
      problems.push('data must be a JSON value (undefined is not)');
    } else if (error instanceof EnvelopeError) {
      const asInput = ENVELOPE_FIELD_AS_INPUT[error.field] ?? error.field;
      // The FIFO option check may have named this field already: one problem, one line.
      if (problems.some((problem) => problem.startsWith(`${asInput} `))) return { type: job.type, problems };
      const detail = error.message.replace(`invalid job envelope: ${error.field} `, '');
      problems.push(`${asInput} ${detail}`);
    } else {
      problems.push(`data is not JSON-serializable (${describeError(error)})`);
    }
  }
  if (!envelope || queueUrl === undefined || problems.length > 0) return { type: job.type, problems };

  const body = JSON.stringify(envelope);
  const request: SendMessageBatchRequestEntry = {
    Id: String(index),
    MessageBody: body,
    ...(fifo
      ? { MessageGroupId: options.partitionKey, MessageDeduplicationId: deduplicationIdOf(envelope) }
      : {}),
    ...(!fifo && options.delaySeconds !== undefined ? { DelaySeconds: options.delaySeconds } : {}),
  };
  const bytes = messageSizeBytes(request);
  if (bytes > settings.maxMessageBytes) {
    problems.push(
      `message is ${bytes} bytes, over the limit of ${settings.maxMessageBytes} bytes (body + attributes, UTF-8; SendMessage API); send ids and let the worker reload the data`,
    );
    return { type: job.type, problems };
  }
  const prepared: PreparedEntry = {
    index,
    id: envelope.id,
    type: job.type,
    queue: job.queue,
    queueUrl,
    request,
    bytes,
    dataBytes: utf8Bytes(JSON.stringify(envelope.data)),
  };
  return { prepared, problems, type: job.type };
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
