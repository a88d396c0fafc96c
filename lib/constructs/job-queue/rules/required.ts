/**
 * Required props and their basic values: `name`, `entry`, `maxAttempts` and `jobTimeoutSeconds`
 * (the last two unless `jobs` gives them). A missing prop is one line; nothing derived from it
 * (the default `maxReceiveCount`, function timeout, visibility timeout) is reported again.
 */
import { NAME_PATTERN } from '../defaults.ts';
import { describeValue } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

export const requiredRule: JobQueueRule = ({ props }) => {
  const findings: JobQueueFinding[] = [];
  const { name, entry, maxAttempts, jobTimeoutSeconds } = props as unknown as Partial<
    Record<string, unknown>
  >;

  if (name === undefined || name === '') {
    findings.push(error("name: required: the logical queue name, e.g. 'payments'"));
  } else if (typeof name !== 'string') {
    findings.push(error(`name: must be a string, got ${describeValue(name)}`));
  } else if (!NAME_PATTERN.test(name)) {
    findings.push(
      error(
        `name: '${name}' must start with a lowercase letter and contain only lowercase letters, digits and '-' (at most 40 characters)`,
      ),
    );
  }

  if (entry === undefined || entry === '') {
    findings.push(
      error("entry: required: the path of the worker's entry file, e.g. 'functions/payments.ts'"),
    );
  } else if (typeof entry !== 'string') {
    findings.push(error(`entry: must be a path string, got ${describeValue(entry)}`));
  }

  // With `jobs`, a missing value comes from the jobs (and the jobs rule explains when it cannot).
  const jobsGiven = props.jobs !== undefined;
  if (maxAttempts === undefined) {
    if (!jobsGiven) {
      findings.push(
        error(
          "maxAttempts: required unless jobs are given: the highest retry.maxAttempts among the worker's jobs",
        ),
      );
    }
  } else if (typeof maxAttempts !== 'number') {
    findings.push(error(`maxAttempts: must be a number, got ${describeValue(maxAttempts)}`));
  } else if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    findings.push(error(`maxAttempts: ${maxAttempts} must be a whole number of at least 1`));
  }

  if (jobTimeoutSeconds === undefined) {
    if (!jobsGiven) {
      findings.push(
        error(
          "jobTimeoutSeconds: required unless jobs are given: the highest timeoutSeconds among the worker's jobs, in seconds",
        ),
      );
    }
  } else if (typeof jobTimeoutSeconds !== 'number') {
    findings.push(error(`jobTimeoutSeconds: must be a number, got ${describeValue(jobTimeoutSeconds)}`));
  } else if (!(jobTimeoutSeconds > 0)) {
    findings.push(error(`jobTimeoutSeconds: ${jobTimeoutSeconds} must be above 0`));
  }
  return findings;
};
