/**
 * The dead-letter queue keeps messages longer than its source queue. On a standard queue, a
 * message the redrive policy moves to the DLQ (crash, timeout, throttling past
 * `maxReceiveCount`) keeps its original enqueue time, and its expiry counts from it: a DLQ that
 * keeps messages no longer than the queue can delete it on arrival, before anyone sees it. The
 * worker's own dead-lettering sends a new message and is not affected. On a FIFO queue SQS resets
 * the enqueue time when it moves the message, so the rule does not apply there.
 * Source (setting-up-dead-letter-queue-retention):
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html
 *
 * The DLQ's retention is read when it is an `sqs.Queue` of the same app (its
 * `MessageRetentionPeriod`, the SQS default of 4 days when unset). An imported queue, or a token,
 * cannot be read at synth: a warning (`sqs-jobs:deadLetterRetentionUnknown`), not a refusal.
 */
import { Duration, Token } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { JOB_QUEUE_DEFAULTS, JOB_QUEUE_WARNINGS, LIMITS } from '../defaults.ts';
import { secondsOf } from '../values.ts';
import { error, type JobQueueRule, warning } from './types.ts';

const PAGE = '[setting-up-dead-letter-queue-retention]';
const WHY =
  'a message SQS moves to the DLQ keeps its first enqueue time, so it could expire there on arrival';

/** What is known of the DLQ's retention. */
type DlqRetention =
  | { readonly kind: 'known'; readonly seconds: number; readonly sqsDefault: boolean }
  | { readonly kind: 'unknown' };

/** The retention of a DLQ given as a prop: read from its `AWS::SQS::Queue` when it is one of this app. */
function givenRetention(dlq: unknown): DlqRetention {
  const child = (dlq as Partial<IConstruct> | null)?.node?.defaultChild;
  if (!(child instanceof sqs.CfnQueue)) return { kind: 'unknown' };
  const seconds: unknown = child.messageRetentionPeriod;
  if (seconds === undefined)
    return { kind: 'known', seconds: LIMITS.sqsDefaultRetentionSeconds, sqsDefault: true };
  if (typeof seconds !== 'number' || Token.isUnresolved(seconds)) return { kind: 'unknown' };
  return { kind: 'known', seconds, sqsDefault: false };
}

function human(seconds: number): string {
  return Duration.seconds(seconds).toHumanString();
}

export const deadLetterRetentionRule: JobQueueRule = ({ props, settings }) => {
  if (settings.fifo) return [];
  const queueSeconds = secondsOf(props.retentionPeriod ?? JOB_QUEUE_DEFAULTS.retentionPeriod);
  if (queueSeconds === undefined) return [];
  const queue = human(queueSeconds);

  if (props.deadLetterQueue === undefined || props.deadLetterQueue === null) {
    const own = JOB_QUEUE_DEFAULTS.deadLetterRetentionPeriod.toSeconds();
    if (queueSeconds < own) return [];
    return [
      error(
        `retentionPeriod: ${queue} is not shorter than the dead-letter queue's ${human(own)}: ${WHY}; keep retentionPeriod below ${human(own)} ${PAGE}`,
      ),
    ];
  }

  // A DLQ of the other kind is refused by the dead-letter rule; nothing more to say about it.
  if (props.deadLetterQueue.fifo === true) return [];
  const dlq = givenRetention(props.deadLetterQueue);
  if (dlq.kind === 'unknown') {
    return [
      warning(
        JOB_QUEUE_WARNINGS.deadLetterRetentionUnknown,
        `deadLetterQueue: its retention period cannot be read at synth (an imported queue or a token): make sure it keeps messages longer than this queue's retentionPeriod of ${queue}, or messages SQS moves there can expire on arrival ${PAGE}`,
      ),
    ];
  }
  if (dlq.seconds > queueSeconds) return [];
  const kept = `${human(dlq.seconds)}${dlq.sqsDefault ? ' (the SQS default)' : ''}`;
  return [
    error(
      `deadLetterQueue: keeps messages ${kept}, not longer than this queue's retentionPeriod of ${queue}: ${WHY}; give the DLQ a longer retentionPeriod (${human(LIMITS.maxRetentionSeconds)} is the maximum) ${PAGE}`,
    ),
  ];
};
