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
  type ListQueuesCommand,
  type ReceiveMessageCommand,
  type SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { InvalidQueueUrlError, QueueMismatchError, translateSqsError } from './errors.ts';

/** The SQS commands the operations send (DLQ reads and redrives, queue stats, job sends). */
export type OpsSqsCommand =
  | GetQueueAttributesCommand
  | GetQueueUrlCommand
  | ListQueuesCommand
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
