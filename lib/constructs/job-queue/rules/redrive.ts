/**
 * The redrive policy: `maxReceiveCount` above the worker's own `maxAttempts` (the worker counts
 * attempts and dead-letters with evidence; SQS redrive is the safety net), at most 1,000; below 5
 * a warning, because throttled deliveries raise the receive count without running.
 * Sources:
 * - https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 * - https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 */
import { JOB_QUEUE_DEFAULTS, JOB_QUEUE_WARNINGS, LIMITS } from '../defaults.ts';
import { isKnownNumber } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule, warning } from './types.ts';

export const redriveRule: JobQueueRule = ({ settings }) => {
  const { maxReceiveCount, maxAttempts } = settings;
  if (!isKnownNumber(maxReceiveCount)) return [];
  const findings: JobQueueFinding[] = [];
  if (!Number.isInteger(maxReceiveCount) || (maxAttempts !== undefined && maxReceiveCount <= maxAttempts)) {
    findings.push(
      error(
        maxAttempts === undefined
          ? `maxReceiveCount: ${maxReceiveCount} must be a whole number`
          : `maxReceiveCount: ${maxReceiveCount} must be a whole number above maxAttempts (${maxAttempts}), or SQS dead-letters messages before the worker has used its attempts`,
      ),
    );
  } else if (maxReceiveCount > LIMITS.maxMaxReceiveCount) {
    findings.push(
      error(
        `maxReceiveCount: ${maxReceiveCount} is above ${LIMITS.maxMaxReceiveCount}, the SQS maximum [sqs-dead-letter-queues]`,
      ),
    );
  }
  if (maxReceiveCount < JOB_QUEUE_DEFAULTS.minSafeMaxReceiveCount) {
    findings.push(
      warning(
        JOB_QUEUE_WARNINGS.lowMaxReceiveCount,
        `maxReceiveCount ${maxReceiveCount} is below ${JOB_QUEUE_DEFAULTS.minSafeMaxReceiveCount}: throttled deliveries raise the receive count without running and can reach the DLQ [services-sqs-scaling]`,
      ),
    );
  }
  return findings;
};
