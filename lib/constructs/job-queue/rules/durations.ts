/**
 * The duration props, checked where CDK would otherwise throw an error that names no prop
 * (`'1500 millis' cannot be converted into a whole number of seconds`): `functionTimeout`,
 * `maxBatchingWindow`, `visibilityTimeout` and `retentionPeriod` are whole seconds, since
 * CloudFormation takes each as an integer number of seconds; `functionTimeout` is at least 1 second
 * and `retentionPeriod` 60 seconds to 14 days. Their upper bounds and relations are the
 * timeouts, batching and visibility rules'.
 * Sources:
 * - https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
 * - https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 */
import { Duration } from 'aws-cdk-lib';
import { LIMITS } from '../defaults.ts';
import type { JobQueueProps } from '../props.ts';
import { secondsOf } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

const WHOLE_SECONDS = [
  'functionTimeout',
  'maxBatchingWindow',
  'visibilityTimeout',
  'retentionPeriod',
] as const;
const MIN_RETENTION_SECONDS = 60;

export const durationsRule: JobQueueRule = ({ props }) => {
  const findings: JobQueueFinding[] = [];
  for (const name of WHOLE_SECONDS) {
    const given = (props as JobQueueProps)[name];
    const seconds = secondsOf(given);
    if (seconds === undefined || given === undefined) continue;
    if (!Number.isInteger(seconds)) {
      findings.push(
        error(`${name}: ${seconds} s must be a whole number of seconds (CloudFormation takes seconds)`),
      );
    } else if (name === 'functionTimeout' && seconds < 1) {
      findings.push(
        error(`functionTimeout: ${given.toHumanString()} must be at least 1 second [configuration-timeout]`),
      );
    } else if (
      name === 'retentionPeriod' &&
      (seconds < MIN_RETENTION_SECONDS || seconds > LIMITS.maxRetentionSeconds)
    ) {
      findings.push(
        error(
          `retentionPeriod: ${given.toHumanString()} is outside 60 seconds – ${Duration.seconds(LIMITS.maxRetentionSeconds).toHumanString()}, what SQS accepts [quotas-messages]`,
        ),
      );
    }
  }
  return findings;
};
