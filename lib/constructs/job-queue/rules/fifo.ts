/**
 * High-throughput FIFO settings: FIFO queues only, and `fifoThroughputLimit: perMessageGroupId`
 * only with `deduplicationScope: messageGroup`.
 * Source: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/high-throughput-fifo.html
 */
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

export const fifoRule: JobQueueRule = ({ props, settings: s }) => {
  const findings: JobQueueFinding[] = [];
  if (!s.fifo && props.deduplicationScope !== undefined) {
    findings.push(error('deduplicationScope: only FIFO queues have a deduplication scope'));
  }
  if (!s.fifo && props.fifoThroughputLimit !== undefined) {
    findings.push(error('fifoThroughputLimit: only FIFO queues have a throughput limit'));
  }
  if (
    s.fifo &&
    props.fifoThroughputLimit === sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID &&
    props.deduplicationScope !== sqs.DeduplicationScope.MESSAGE_GROUP
  ) {
    findings.push(
      error(
        'fifoThroughputLimit: perMessageGroupId requires deduplicationScope messageGroup [high-throughput-fifo]',
      ),
    );
  }
  return findings;
};
