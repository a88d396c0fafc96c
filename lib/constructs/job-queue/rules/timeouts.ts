/**
 * The function timeout (at most 15 minutes, the Lambda maximum) and the job time limit below it:
 * a job that runs into its soft limit is aborted and retried alone; one that outlives the
 * function is killed with the whole batch.
 * Source: https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
 */
import { LIMITS } from '../defaults.ts';
import { secondsOf } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

export const timeoutsRule: JobQueueRule = ({ settings }) => {
  const fnTimeout = secondsOf(settings.functionTimeout);
  if (fnTimeout === undefined) return [];
  const findings: JobQueueFinding[] = [];
  if (fnTimeout > LIMITS.maxFunctionTimeoutSeconds) {
    findings.push(
      error(
        `functionTimeout: ${fnTimeout} s is above ${LIMITS.maxFunctionTimeoutSeconds} s, the Lambda maximum`,
      ),
    );
  }
  const job = settings.jobTimeoutSeconds;
  if (job !== undefined && job >= fnTimeout) {
    findings.push(
      error(
        `jobTimeoutSeconds: ${job} s must be below functionTimeout (${fnTimeout} s), or a job that runs into its time limit is killed with the whole batch instead of being aborted and retried`,
      ),
    );
  }
  return findings;
};
