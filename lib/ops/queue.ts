/**
 * The SQS calls of the DLQ operations, behind a small port, with SDK errors translated into
 * {@link OpsError}s; queue URL checks and queue description.
 *
 * Sources: GetQueueAttributes API reference (attribute names, `RedrivePolicy` JSON);
 * "Amazon SQS queue and message identifiers" (queue URL shape
 * `https://sqs.<region>.amazonaws.com/<account-id>/<queue-name>`); Amazon SQS FIFO queue quotas
 * (queue name: 1–80 characters, alphanumeric, `-` and `_`; FIFO names end in `.fifo`, suffix included).
 */
import {
  type ChangeMessageVisibilityBatchCommand,
  type DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type GetQueueAttributesCommandOutput,
  type GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  type ListDeadLetterSourceQueuesCommandOutput,
  ListQueuesCommand,
  type ListQueuesCommandOutput,
  type ReceiveMessageCommand,
  type SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { InvalidQueueUrlError, QueueMismatchError, translateSqsError } from './errors.ts';

/** The SQS commands the operations send (DLQ reads and redrives, queue stats, job sends). */
export type OpsSqsCommand =
  | GetQueueAttributesCommand
  | GetQueueUrlCommand
  | ListQueuesCommand
  | ListDeadLetterSourceQueuesCommand
  | ReceiveMessageCommand
  | ChangeMessageVisibilityBatchCommand
  | DeleteMessageBatchCommand
  | SendMessageBatchCommand;

/**
 * Minimal SQS client: `send(command)` resolving to the command's output. An `SQSClient` from
 * `@aws-sdk/client-sqs` satisfies it; tests wrap one to inject failures.
 */
export interface OpsSqs {
  send(command: OpsSqsCommand): Promise<unknown>;
}

/**
 * Sends `command`, translating a thrown SDK error with {@link translateSqsError}.
 *
 * @typeParam T the command's output type.
 * @throws {OpsError} on any failure.
 */
export async function callSqs<T>(sqs: OpsSqs, command: OpsSqsCommand, queueUrl: string): Promise<T> {
  try {
    return (await sqs.send(command)) as T;
  } catch (error) {
    throw translateSqsError(error, command.constructor.name.replace(/Command$/, ''), queueUrl);
  }
}

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * Checks that `url` is an SQS queue URL: `http(s)://<host>/<account-id>/<queue-name>`, the name
 * 1–80 characters of `A-Z a-z 0-9 - _` plus an optional `.fifo` suffix (counted in the 80).
 * Emulator URLs (`http://localhost:4566/000000000000/jobs-dlq`) pass.
 *
 * @param what how the URL is named in the error (e.g. `--dlq-url`).
 * @returns the queue name.
 * @throws {InvalidQueueUrlError} naming what is wrong (and hinting at an ARN or a bare name).
 */
export function validateQueueUrl(url: string | undefined, what = 'queue URL'): string {
  const fail = (problem: string) =>
    new InvalidQueueUrlError(`${what}: ${problem}`, { code: 'InvalidQueueUrl', queueUrl: url ?? '' });
  if (url === undefined || url.trim() === '') throw fail('missing (pass the queue URL)');
  if (url.startsWith('arn:')) {
    throw fail(
      `"${url}" is an ARN; pass the queue URL instead (aws sqs get-queue-url --queue-name <name>, or the stack output *DlqUrl / *QueueUrl)`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw fail(
      `"${url}" is not a URL; expected https://sqs.<region>.amazonaws.com/<account-id>/<queue-name>`,
    );
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw fail(`"${url}" must start with https:// (or http:// for an emulator)`);
  }
  const segments = parsed.pathname.split('/').filter((s) => s !== '');
  if (segments.length !== 2) {
    throw fail(`"${url}" must have the path /<account-id>/<queue-name>`);
  }
  const name = segments[1] as string;
  const base = name.endsWith('.fifo') ? name.slice(0, -'.fifo'.length) : name;
  if (!QUEUE_NAME.test(base) || name.length > 80) {
    throw fail(
      `queue name "${name}" is not valid (1-80 characters: letters, digits, - and _, plus .fifo for FIFO queues)`,
    );
  }
  return name;
}

const REGION_IN_HOST = /^(?:sqs\.)?([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+)\.(?:queue\.)?/;

/**
 * The region named in a queue URL's host (`sqs.eu-west-1.amazonaws.com`,
 * legacy `eu-west-1.queue.amazonaws.com`, fauxqs `sqs.us-east-1.localhost`), or undefined.
 */
export function regionFromQueueUrl(url: string): string | undefined {
  try {
    return REGION_IN_HOST.exec(new URL(url).hostname)?.[1];
  } catch {
    return undefined;
  }
}

/** A queue as GetQueueAttributes describes it (counts are approximate, per SQS). */
export interface QueueInfo {
  readonly url: string;
  /** Queue name, from the URL. */
  readonly name: string;
  readonly arn: string | undefined;
  /** `FifoQueue` attribute (a FIFO queue's name ends in `.fifo`). */
  readonly fifo: boolean;
  readonly contentBasedDeduplication: boolean;
  /** Queue default visibility timeout, seconds. */
  readonly visibilityTimeoutSeconds: number | undefined;
  /** `ApproximateNumberOfMessages`: visible messages. */
  readonly approximateVisible: number;
  /** `ApproximateNumberOfMessagesNotVisible`: in flight (received, not deleted). */
  readonly approximateNotVisible: number;
  /** `ApproximateNumberOfMessagesDelayed`. */
  readonly approximateDelayed: number;
  /** The queue's own redrive policy (where its failures go), when it has one. */
  readonly redrivePolicy:
    | { readonly deadLetterTargetArn: string; readonly maxReceiveCount: number }
    | undefined;
}

function count(value: string | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

function parseRedrivePolicy(value: string | undefined): QueueInfo['redrivePolicy'] {
  if (!value) return undefined;
  try {
    const policy = JSON.parse(value) as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
    if (typeof policy.deadLetterTargetArn !== 'string') return undefined;
    return {
      deadLetterTargetArn: policy.deadLetterTargetArn,
      maxReceiveCount: Number(policy.maxReceiveCount),
    };
  } catch {
    return undefined;
  }
}

/**
 * Validates the URL and reads the queue's attributes (`All`). This is also the reachability
 * check: it fails before anything is received.
 *
 * @param what how the URL is named in errors (e.g. `--target-url`).
 * @throws {InvalidQueueUrlError} for a malformed URL.
 * @throws {OpsError} `QueueNotFound`, `EndpointUnreachable`, `MissingCredentials`, ... from SQS.
 */
export async function describeQueue(sqs: OpsSqs, url: string, what = 'queue URL'): Promise<QueueInfo> {
  const name = validateQueueUrl(url, what);
  const out = await callSqs<GetQueueAttributesCommandOutput>(
    sqs,
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
    url,
  );
  const attributes = out.Attributes ?? {};
  return {
    url,
    name,
    arn: attributes.QueueArn,
    fifo: attributes.FifoQueue === undefined ? name.endsWith('.fifo') : attributes.FifoQueue === 'true',
    contentBasedDeduplication: attributes.ContentBasedDeduplication === 'true',
    visibilityTimeoutSeconds:
      attributes.VisibilityTimeout === undefined ? undefined : Number(attributes.VisibilityTimeout),
    approximateVisible: count(attributes.ApproximateNumberOfMessages),
    approximateNotVisible: count(attributes.ApproximateNumberOfMessagesNotVisible),
    approximateDelayed: count(attributes.ApproximateNumberOfMessagesDelayed),
    redrivePolicy: parseRedrivePolicy(attributes.RedrivePolicy),
  };
}

/**
 * Refuses a redrive between queues of different kinds or onto the DLQ itself: a FIFO DLQ's
 * messages need a FIFO target (group order, dedup ids), and a standard DLQ's messages have no
 * `MessageGroupId` for a FIFO target ("Amazon SQS dead-letter queues": the DLQ of a FIFO queue
 * must be FIFO, of a standard queue standard).
 *
 * @throws {QueueMismatchError} `QueueKindMismatch` or `SameQueue`.
 */
export function checkRedrivePair(dlq: QueueInfo, target: QueueInfo): void {
  if (dlq.url === target.url || (dlq.arn !== undefined && dlq.arn === target.arn)) {
    throw new QueueMismatchError(`the target is the DLQ itself (${dlq.url}); pass the source queue's URL`, {
      code: 'SameQueue',
      queueUrl: target.url,
    });
  }
  if (dlq.fifo !== target.fifo) {
    const kind = (q: QueueInfo) => (q.fifo ? 'FIFO' : 'standard');
    throw new QueueMismatchError(
      `the DLQ ${dlq.name} is a ${kind(dlq)} queue but the target ${target.name} is a ${kind(target)} queue; ` +
        'redrive a DLQ to a queue of its own kind (the queue whose redrive policy names it)',
      { code: 'QueueKindMismatch', queueUrl: target.url, context: { dlq: dlq.url } },
    );
  }
}

/** Warnings about a redrive pair that is allowed but probably not meant (the target does not use this DLQ). */
export function redrivePairWarnings(dlq: QueueInfo, target: QueueInfo): string[] {
  const warnings: string[] = [];
  if (target.redrivePolicy === undefined) {
    warnings.push(
      `the target ${target.name} has no redrive policy: jobs that fail there again are not dead-lettered by SQS`,
    );
  } else if (dlq.arn !== undefined && target.redrivePolicy.deadLetterTargetArn !== dlq.arn) {
    warnings.push(
      `the target ${target.name} dead-letters to ${target.redrivePolicy.deadLetterTargetArn}, not to this DLQ (${dlq.arn}): is it the right source queue?`,
    );
  }
  return warnings;
}

/** Most queues {@link deadLetterSources} looks at when it has to list them (ListQueues pages of 1,000). */
const MAX_QUEUES_SCANNED = 5_000;

/** What {@link deadLetterSources} found out. */
export type DeadLetterSources =
  | { readonly known: true; readonly sourceQueueUrls: readonly string[]; readonly how: string }
  | { readonly known: false; readonly why: string };

/**
 * The queues whose redrive policy names `dlq` as their dead-letter queue: ListDeadLetterSourceQueues
 * (API reference; every page), or, where the endpoint does not have it (the emulator fauxqs), every
 * queue of ListQueues with its `RedrivePolicy` (up to 5,000 queues). Never throws: when neither
 * can be read, the answer is unknown, with why.
 */
export async function deadLetterSources(sqs: OpsSqs, dlq: QueueInfo): Promise<DeadLetterSources> {
  let listFailure: string;
  try {
    const sources: string[] = [];
    let nextToken: string | undefined;
    do {
      const out = await callSqs<ListDeadLetterSourceQueuesCommandOutput>(
        sqs,
        new ListDeadLetterSourceQueuesCommand({
          QueueUrl: dlq.url,
          MaxResults: 1000,
          ...(nextToken === undefined ? {} : { NextToken: nextToken }),
        }),
        dlq.url,
      );
      sources.push(...(out.queueUrls ?? []));
      nextToken = out.NextToken || undefined;
    } while (nextToken !== undefined);
    return { known: true, sourceQueueUrls: sources, how: 'ListDeadLetterSourceQueues' };
  } catch (error) {
    listFailure = error instanceof Error ? error.message : String(error);
  }
  if (dlq.arn === undefined) return { known: false, why: `the DLQ has no QueueArn, and ${listFailure}` };
  try {
    const urls: string[] = [];
    let nextToken: string | undefined;
    do {
      const out = await callSqs<ListQueuesCommandOutput>(
        sqs,
        new ListQueuesCommand({
          MaxResults: 1000,
          ...(nextToken === undefined ? {} : { NextToken: nextToken }),
        }),
        dlq.url,
      );
      urls.push(...(out.QueueUrls ?? []));
      nextToken = out.NextToken || undefined;
    } while (nextToken !== undefined && urls.length < MAX_QUEUES_SCANNED);
    if (nextToken !== undefined) {
      return { known: false, why: `more than ${MAX_QUEUES_SCANNED} queues to look at (${listFailure})` };
    }
    const sources: string[] = [];
    for (const url of urls) {
      if (url === dlq.url) continue;
      const out = await callSqs<GetQueueAttributesCommandOutput>(
        sqs,
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['RedrivePolicy'] }),
        url,
      );
      if (parseRedrivePolicy(out.Attributes?.RedrivePolicy)?.deadLetterTargetArn === dlq.arn)
        sources.push(url);
    }
    return { known: true, sourceQueueUrls: sources, how: 'the RedrivePolicy of every queue (ListQueues)' };
  } catch (error) {
    return {
      known: false,
      why: `${listFailure}; listing the queues failed too: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * Refuses to redrive from a queue that is no queue's dead-letter queue (a main queue passed as
 * the DLQ by mistake would have its live jobs moved). Cheap in the usual case: the target's own
 * redrive policy names the DLQ. Otherwise the queues that dead-letter into it are looked up
 * ({@link deadLetterSources}); when that cannot be known, the redrive goes on (with the pair
 * warnings).
 *
 * @param override how the caller lets a redrive from any queue go on (named in the error).
 * @throws {QueueMismatchError} `NotADeadLetterQueue`.
 */
export async function checkIsDeadLetterQueue(
  sqs: OpsSqs,
  dlq: QueueInfo,
  target: QueueInfo,
  override: string,
): Promise<void> {
  if (dlq.arn !== undefined && target.redrivePolicy?.deadLetterTargetArn === dlq.arn) return;
  const sources = await deadLetterSources(sqs, dlq);
  if (!sources.known || sources.sourceQueueUrls.length > 0) return;
  const own =
    dlq.redrivePolicy === undefined
      ? ''
      : `; it has a dead-letter queue of its own (${dlq.redrivePolicy.deadLetterTargetArn}), as a main queue does`;
  throw new QueueMismatchError(
    `${dlq.name} is no queue's dead-letter queue: no queue's redrive policy names it (checked: ${sources.how})${own}. ` +
      "Redriving from it would move live jobs. Pass the DLQ's URL (stack output *DlqUrl, or the dlq line of sqs-jobs local), " +
      `or, to move messages from this queue anyway, add ${override}`,
    { code: 'NotADeadLetterQueue', queueUrl: dlq.url, context: { target: target.url } },
  );
}
