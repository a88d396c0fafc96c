/**
 * Errors of the DLQ operations (`lib/ops`, the `sqs-jobs` CLI). SDK exceptions are translated here,
 * at the boundary, into errors that say what to check (URL, region, endpoint, credentials).
 */
import { JobError } from '../core/errors.ts';
import { UNREACHABLE_CODES } from '../core/network-errors.ts';

/** What went wrong, for code that branches on it (the CLI maps every code to exit code 2). */
export type OpsErrorCode =
  | 'InvalidQueueUrl'
  | 'QueueNotFound'
  | 'QueueKindMismatch'
  | 'SameQueue'
  | 'NotADeadLetterQueue'
  | 'EndpointUnreachable'
  | 'MissingCredentials'
  | 'MissingRegion'
  | 'AccessDenied'
  | 'SqsRequestFailed'
  | 'TableReadFailed'
  | 'ScheduleNotFound'
  | 'SchedulerRequestFailed'
  | 'AmbiguousJobId'
  | 'CloudWatchUnavailable';

/** Base error of `lib/ops`; `code` says what went wrong, `queueUrl` which queue when known. */
export class OpsError extends JobError {
  readonly code: OpsErrorCode;
  readonly queueUrl: string | undefined;

  constructor(
    message: string,
    options: { code: OpsErrorCode; queueUrl?: string; cause?: unknown; context?: Record<string, unknown> },
  ) {
    super(message, {
      cause: options.cause,
      context: { code: options.code, queueUrl: options.queueUrl, ...options.context },
    });
    this.code = options.code;
    this.queueUrl = options.queueUrl;
  }
}

/** A queue URL that is not an SQS queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`). */
export class InvalidQueueUrlError extends OpsError {}

/** The queue does not exist at that URL, in that region, on that endpoint. */
export class QueueNotFoundError extends OpsError {}

/**
 * The DLQ and the redrive target are not of the same kind (FIFO and standard), are the same queue,
 * or the "DLQ" is no queue's dead-letter queue.
 */
export class QueueMismatchError extends OpsError {}

/** The SQS endpoint could not be reached (connection refused, unknown host, timeout). */
export class SqsUnreachableError extends OpsError {}

/** Any other failed SQS request (credentials, region, permissions, throttling after retries). */
export class SqsRequestError extends OpsError {}

const UNREACHABLE_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'NetworkingError']);
const NOT_FOUND = new Set(['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue']);
const ACCESS_DENIED = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidSecurity',
]);

function field(error: unknown, key: string): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const value = (error as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Translates an error thrown by an SQS call into an {@link OpsError}; an `OpsError` is returned
 * as it is.
 *
 * @param action the SQS action, e.g. `ReceiveMessage` (named in the message).
 * @param queueUrl the queue the call was about.
 */
export function translateSqsError(error: unknown, action: string, queueUrl: string): OpsError {
  if (error instanceof OpsError) return error;
  const name = field(error, 'name') ?? 'Error';
  const code = field(error, 'code') ?? field(error, 'Code');
  const message = error instanceof Error ? error.message : String(error);
  const context = { action, sdkError: name };
  if (NOT_FOUND.has(name) || (code !== undefined && NOT_FOUND.has(code))) {
    return new QueueNotFoundError(
      `queue does not exist: ${queueUrl} (check the URL, the region (--region, AWS_REGION) and the endpoint (--endpoint, AWS_ENDPOINT_URL))`,
      { code: 'QueueNotFound', queueUrl, cause: error, context },
    );
  }
  if ((code !== undefined && UNREACHABLE_CODES.has(code)) || UNREACHABLE_NAMES.has(name)) {
    return new SqsUnreachableError(
      `cannot reach the SQS endpoint for ${queueUrl} (${action}: ${message}); is the endpoint right and running? ` +
        'Set it with --endpoint or AWS_ENDPOINT_URL (emulators), or leave both unset for AWS.',
      { code: 'EndpointUnreachable', queueUrl, cause: error, context },
    );
  }
  if (name === 'CredentialsProviderError' || /credential/i.test(message)) {
    return new SqsRequestError(
      `no AWS credentials for ${action} (${message}): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (any values work for an emulator)`,
      { code: 'MissingCredentials', queueUrl, cause: error, context },
    );
  }
  if (/region is missing/i.test(message)) {
    return new SqsRequestError(`no AWS region for ${action}: pass --region or set AWS_REGION`, {
      code: 'MissingRegion',
      queueUrl,
      cause: error,
      context,
    });
  }
  if (ACCESS_DENIED.has(name)) {
    return new SqsRequestError(`${action} on ${queueUrl} was refused: ${name}: ${message}`, {
      code: 'AccessDenied',
      queueUrl,
      cause: error,
      context,
    });
  }
  return new SqsRequestError(`${action} on ${queueUrl} failed: ${name}: ${message}`, {
    code: 'SqsRequestFailed',
    queueUrl,
    cause: error,
    context,
  });
}
