/**
 * Alarm thresholds: `ageOfOldestMessageAlarmThreshold` is a whole number of seconds of at least 1
 * (SQS reports `ApproximateAgeOfOldestMessage` in seconds: at 0 the alarm fires whenever the queue
 * holds any message) and below `retentionPeriod` (no message gets older than that: the alarm could
 * never fire). The DLQ alarms have no threshold to set (any message in the DLQ alarms).
 * Source (sqs-available-cloudwatch-metrics):
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
 */
import { Duration } from 'aws-cdk-lib';
import { JOB_QUEUE_DEFAULTS } from '../defaults.ts';
import { secondsOf } from '../values.ts';
import { error, type JobQueueRule } from './types.ts';

const PAGE = '[sqs-available-cloudwatch-metrics]';

export const alarmsRule: JobQueueRule = ({ props }) => {
  const threshold = secondsOf(props.ageOfOldestMessageAlarmThreshold);
  if (threshold === undefined) return [];
  const shown = props.ageOfOldestMessageAlarmThreshold?.toHumanString();
  if (!Number.isInteger(threshold) || threshold < 1) {
    return [
      error(
        `ageOfOldestMessageAlarmThreshold: ${threshold} s must be a whole number of seconds, at least 1: ApproximateAgeOfOldestMessage is counted in seconds, and at 0 the alarm fires whenever the queue holds any message; give how long a job may wait before someone should look (default ${JOB_QUEUE_DEFAULTS.ageOfOldestMessageAlarmThreshold.toHumanString()}) ${PAGE}`,
      ),
    ];
  }
  const retention = secondsOf(props.retentionPeriod ?? JOB_QUEUE_DEFAULTS.retentionPeriod);
  if (retention !== undefined && threshold >= retention) {
    return [
      error(
        `ageOfOldestMessageAlarmThreshold: ${shown} is not below retentionPeriod (${Duration.seconds(retention).toHumanString()}): a message is deleted before it gets that old, so the alarm never fires ${PAGE}`,
      ),
    ];
  }
  return [];
};
