/**
 * The default sender of child jobs: a `JobClient` (lib/client/job-client.ts) on the queue URLs
 * of the worker's environment (`JOBS_QUEUE_URL_<NAME>`, docs/contracts.md).
 */
import type { ChildSender } from './children.ts';
import type { SqsSender } from './sqs-port.ts';
import type { WorkerLogger } from './telemetry.ts';

/** Input of {@link createJobClientChildSender}. */
export interface ChildSenderOptions {
  /** Envelope `source` of the children. */
  readonly source: string;
  /** Logical queue name → URL; when undefined, read from `env`. */
  readonly queueUrls: Readonly<Record<string, string>> | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly sqs: SqsSender;
  readonly logger: WorkerLogger;
}

/** Builds the default child sender. */
export function createJobClientChildSender(_options: ChildSenderOptions): ChildSender {
  throw new Error('JobClient is not available yet');
}
