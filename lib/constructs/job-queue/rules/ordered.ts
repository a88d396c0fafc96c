/**
 * Jobs that need order per key (`defineJob({ ordered: true })`, lib/runtime/job.ts) only keep it
 * on a FIFO queue, where SQS delivers the messages of one `MessageGroupId` one at a time, in the
 * order they were sent; a standard queue delivers in any order, with no groups ("Amazon SQS FIFO
 * queues", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fifo-queues.html).
 * An ordered job among the `jobs` of a standard queue is refused here, at synth, rather than left
 * to lose its order silently (the worker would dead-letter every one of its messages:
 * `OrderedJobWithoutGroupError`).
 */
import { error, type JobQueueRule } from './types.ts';

export const orderedRule: JobQueueRule = ({ props, settings }) => {
  if (settings.fifo) return [];
  const ordered = (Array.isArray(props.jobs) ? props.jobs : [])
    .filter((job) => job?.ordered === true)
    .map((job) => job.type);
  if (ordered.length === 0) return [];
  return [
    error(
      `jobs ${ordered.join(', ')} need order per key (ordered: true), but this is a standard queue (fifo: false), where SQS keeps no order and the worker dead-letters their messages (OrderedJobWithoutGroupError): make the queue FIFO (fifo: true, jobs sent with a partitionKey), or drop ordered: true from jobs that do not depend on order`,
    ),
  ];
};
