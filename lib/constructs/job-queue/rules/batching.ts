/**
 * Batch size and batching window of the event source mapping. FIFO: 1–10 records, no batching
 * window. Standard: 1–10,000 records, above 10 only with a batching window of at least 1 s;
 * the window is at most 5 minutes.
 * Source: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html
 */
import { LIMITS } from '../defaults.ts';
import { isKnownNumber, secondsOf } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

export const batchingRule: JobQueueRule = ({ props, settings: s }) => {
  const findings: JobQueueFinding[] = [];
  const window = secondsOf(props.maxBatchingWindow);
  if (isKnownNumber(s.batchSize)) {
    if (!Number.isInteger(s.batchSize) || s.batchSize < 1) {
      findings.push(error(`batchSize: ${s.batchSize} must be a whole number of at least 1`));
    } else if (s.fifo && s.batchSize > LIMITS.fifoMaxBatchSize) {
      findings.push(
        error(
          `batchSize: ${s.batchSize} is above ${LIMITS.fifoMaxBatchSize}, the maximum for a FIFO queue [services-sqs-parameters]`,
        ),
      );
    } else if (!s.fifo && s.batchSize > LIMITS.standardMaxBatchSize) {
      findings.push(
        error(
          `batchSize: ${s.batchSize} is above ${LIMITS.standardMaxBatchSize}, the maximum for a standard queue [services-sqs-parameters]`,
        ),
      );
    } else if (
      !s.fifo &&
      s.batchSize > LIMITS.standardMaxBatchSizeWithoutWindow &&
      (props.maxBatchingWindow === undefined || (window !== undefined && window < 1))
    ) {
      findings.push(
        error(
          `batchSize: ${s.batchSize} is above ${LIMITS.standardMaxBatchSizeWithoutWindow}, which needs a maxBatchingWindow of at least 1 second [services-sqs-parameters]`,
        ),
      );
    }
  }
  if (props.maxBatchingWindow !== undefined && s.fifo) {
    findings.push(
      error('maxBatchingWindow: FIFO queues do not support a batching window [services-sqs-parameters]'),
    );
  } else if (window !== undefined && window > LIMITS.maxBatchingWindowSeconds) {
    findings.push(
      error(
        `maxBatchingWindow: ${window} s is above ${LIMITS.maxBatchingWindowSeconds} s, the Lambda maximum [services-sqs-parameters]`,
      ),
    );
  }
  return findings;
};
