/**
 * Concurrency: reserved concurrency at least 1 (0 stops the worker); the event source mapping's
 * `MaximumConcurrency` 2–1000 and not above the reserved concurrency, or the surplus invocations
 * are throttled and their messages come back with a raised receive count.
 * Source: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 */
import { LIMITS } from '../defaults.ts';
import { isKnownNumber } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

export const concurrencyRule: JobQueueRule = ({ props }) => {
  const findings: JobQueueFinding[] = [];
  const reserved = props.reservedConcurrency;
  if (isKnownNumber(reserved) && (!Number.isInteger(reserved) || reserved < 1)) {
    findings.push(
      error(`reservedConcurrency: ${reserved} must be a whole number of at least 1 (0 stops the worker)`),
    );
  }
  const mc = props.maxConcurrency;
  if (isKnownNumber(mc)) {
    if (!Number.isInteger(mc) || mc < LIMITS.minMaxConcurrency || mc > LIMITS.maxMaxConcurrency) {
      findings.push(
        error(
          `maxConcurrency: ${mc} is outside ${LIMITS.minMaxConcurrency}–${LIMITS.maxMaxConcurrency}, the range Lambda accepts [services-sqs-scaling]`,
        ),
      );
    }
    if (isKnownNumber(reserved) && mc > reserved) {
      findings.push(
        error(
          `maxConcurrency: ${mc} is above reservedConcurrency (${reserved}): the surplus invocations are throttled and their messages return with a raised receive count [services-sqs-scaling]`,
        ),
      );
    }
  }
  return findings;
};
