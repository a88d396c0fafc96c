/**
 * Sets when a failed record comes back: ChangeMessageVisibility counts the new timeout from now,
 * 0 s to 12 h (ChangeMessageVisibility API reference).
 */
import { MAX_VISIBILITY_TIMEOUT_SECONDS } from '../core/backoff.ts';
import { loadSqsModule } from './sqs-module.ts';
import type { SqsSender } from './sqs-port.ts';
import type { WorkerLogger } from './telemetry.ts';

/**
 * Makes a record visible again after `seconds` (rounded up, clamped to 0–43,200).
 * Never throws: a failure is logged and the record keeps the queue's visibility timeout; it is
 * reported failed either way, so it comes back, only later.
 *
 * @returns true when SQS accepted the change.
 */
export async function changeVisibility(
  sqs: SqsSender,
  queueUrl: string,
  receiptHandle: string,
  seconds: number,
  logger: WorkerLogger,
): Promise<boolean> {
  const timeout = Math.min(MAX_VISIBILITY_TIMEOUT_SECONDS, Math.max(0, Math.ceil(seconds)));
  try {
    const { ChangeMessageVisibilityCommand } = await loadSqsModule();
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: timeout,
      }),
    );
    return true;
  } catch (error) {
    logger.warn('ChangeMessageVisibility failed; the record returns after the queue visibility timeout', {
      visibilityTimeoutSeconds: timeout,
      error,
    });
    return false;
  }
}
