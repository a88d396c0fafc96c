/**
 * The dead-letter queue's kind: a FIFO queue's DLQ must be FIFO, a standard queue's standard.
 * Source: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import { error, type JobQueueRule } from './types.ts';

export const deadLetterRule: JobQueueRule = ({ props, settings }) => {
  const dlq = props.deadLetterQueue;
  if (dlq === undefined || dlq.fifo === settings.fifo) return [];
  const kind = settings.fifo ? 'FIFO' : 'standard';
  return [
    error(
      `deadLetterQueue: a ${kind} queue needs a ${kind} dead-letter queue, but the given one is ${dlq.fifo ? 'FIFO' : 'standard'} [sqs-dead-letter-queues]`,
    ),
  ];
};
