/**
 * The queue's visibility timeout: at least 6 × the function timeout plus the batching window (so
 * a throttled batch can be retried before its messages reappear), at most 12 hours.
 * Sources:
 * - https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 * - https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
 */
import { JOB_QUEUE_DEFAULTS, LIMITS } from '../defaults.ts';
import { secondsOf } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

export const visibilityRule: JobQueueRule = ({ props, settings }) => {
  const visibility = secondsOf(settings.visibilityTimeout);
  const fnTimeout = secondsOf(settings.functionTimeout);
  const window = secondsOf(props.maxBatchingWindow);
  // Unknown when a value is an unresolved token: CloudFormation and Lambda judge at deploy.
  if (visibility === undefined || fnTimeout === undefined) return [];
  if (props.maxBatchingWindow !== undefined && window === undefined) return [];
  const findings: JobQueueFinding[] = [];
  const minimum = JOB_QUEUE_DEFAULTS.visibilityTimeoutMultiple * fnTimeout + (window ?? 0);
  if (visibility < minimum) {
    findings.push(
      error(
        `visibilityTimeout: ${visibility} s is below ${minimum} s (6 × functionTimeout ${fnTimeout} s${window ? ` + maxBatchingWindow ${window} s` : ''}) [services-sqs-configure]`,
      ),
    );
  }
  if (visibility > LIMITS.maxVisibilityTimeoutSeconds) {
    findings.push(
      error(
        `visibilityTimeout: ${visibility} s is above ${LIMITS.maxVisibilityTimeoutSeconds} s (12 hours), the SQS maximum; lower functionTimeout`,
      ),
    );
  }
  return findings;
};
