/** The error of the producer client module. */
import { JobError } from '../core/errors.ts';

/** One problem of one entry, found before sending or reported by SQS. */
export interface EntryProblem {
  /** Position of the entry in the `sendBatch` input (0 for `send`). */
  readonly index: number;
  /** The entry's job type, when it has one. */
  readonly type: string | undefined;
  /** What is wrong, naming the field (`data.userId`, `options.partitionKey`, ...). */
  readonly message: string;
}

/**
 * Thrown by {@link JobClient}:
 * - `code: 'InvalidOptions'`: the client's options are invalid (all problems listed);
 * - `code: 'InvalidEntries'`: entries were refused before anything was sent; `problems` lists
 *   every problem of every bad entry by index; nothing of the call was sent;
 * - any other `code` (an SQS error code such as `InvalidParameterValue`, `RequestThrottled`,
 *   `QueueDoesNotExist`): `send` could not send its job; `senderFault` tells whether sending the
 *   same message again can help (`false`) or not (`true`);
 * - `MissingRegion`, `InvalidRegion`, `MissingCredentials`, `InvalidEndpoint`: the SQS client is
 *   not configured (no region, no credentials in the chain, an endpoint that is not a URL); failed
 *   at once, without retries, the message saying what to set (AWS_REGION, AWS_PROFILE, ...);
 *   `senderFault: true`; `cause` is the SDK's error.
 */
export class JobClientError extends JobError {
  /** `InvalidOptions`, `InvalidEntries`, or the SQS error code of a failed send. */
  readonly code: string;
  /** True when the caller must change something; retrying the same request will not help. */
  readonly senderFault: boolean;
  /**
   * Problems per entry; for `InvalidOptions` one per bad option, for an invalid job identity
   * (`InvalidArguments` of cancel and reschedule) one per problem (`index` 0, `type` undefined).
   */
  readonly problems: readonly EntryProblem[];

  constructor(
    message: string,
    options: {
      code: string;
      senderFault: boolean;
      problems?: readonly EntryProblem[];
      cause?: unknown;
      context?: Record<string, unknown>;
    },
  ) {
    super(message, { cause: options.cause, context: { code: options.code, ...options.context } });
    this.code = options.code;
    this.senderFault = options.senderFault;
    this.problems = options.problems ?? [];
  }
}
