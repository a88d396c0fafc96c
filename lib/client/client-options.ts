/**
 * The checks of a `JobClient`'s options: every option named, with the fix for a key another SDK or
 * client takes (`region`, `endpoint`, `queues`). Apart from `JobSender` (job-sender.ts) because a
 * worker's sender is given only `source`, `queueUrls` and its own SQS client and logger
 * (`senderSettings` checks those): the producer's checks and advice stay out of worker bundles
 * (issue 21: bundle bytes).
 */

import { SQS_MAX_MESSAGE_BYTES } from '../core/message-size.ts';
import { shownValue } from '../core/shown-value.ts';
import { producerEntryChecks } from './entry-options.ts';
import type { JobClientOptions } from './job-client.ts';
import { JobClientError } from './job-client-error.ts';
import { checkQueueUrls, DEFAULT_PAYLOAD_WARN_BYTES, invalidOptions, type Settings } from './job-sender.ts';
import { describeValue, isPlainObject, unknownKeyProblems } from './option-keys.ts';
import { type ClientRetryOptions, DEFAULT_CLIENT_RETRY } from './retry.ts';

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
 * Checks every option of a `JobClient` (job-client.ts's `JobClientOptions`): unknown keys (with
 * the key meant), `source`, `queueUrls`, the further options `moreProblems` names (`scheduling`,
 * `batches`), `retry`, `logger`, `payloadWarnBytes`, `maxMessageBytes` and the AWS clients.
 * @throws {JobClientError} `InvalidOptions`, naming every problem.
 */
export function checkClientOptions(
  options: JobClientOptions,
  moreProblems: (options: JobClientOptions) => string[],
): Settings {
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
  problems.push(...moreProblems(options));
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
    problems.push(`payloadWarnBytes must be a number >= 0, got ${shownValue(payloadWarnBytes)}`);
  }
  const maxMessageBytes = options?.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1 || maxMessageBytes > SQS_MAX_MESSAGE_BYTES) {
    problems.push(
      `maxMessageBytes must be an integer from 1 to ${SQS_MAX_MESSAGE_BYTES} (1 MiB, the SQS limit), got ${shownValue(maxMessageBytes)}`,
    );
  }
  const retry: ClientRetryOptions = {
    maxAttempts: options?.retry?.maxAttempts ?? DEFAULT_CLIENT_RETRY.maxAttempts,
    baseDelayMs: options?.retry?.baseDelayMs ?? DEFAULT_CLIENT_RETRY.baseDelayMs,
  };
  if (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1 || retry.maxAttempts > 20) {
    problems.push(`retry.maxAttempts must be an integer from 1 to 20, got ${shownValue(retry.maxAttempts)}`);
  }
  if (!Number.isFinite(retry.baseDelayMs) || retry.baseDelayMs < 0) {
    problems.push(`retry.baseDelayMs must be a finite number >= 0, got ${shownValue(retry.baseDelayMs)}`);
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
  if (problems.length > 0) throw invalidOptions(problems);
  return { source, queueUrls, payloadWarnBytes, maxMessageBytes, retry, entryChecks: producerEntryChecks };
}
