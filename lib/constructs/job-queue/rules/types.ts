/**
 * What a JobQueue rule is: a pure function from the props (as given) and the resolved settings
 * to findings. Errors refuse the queue (collected into one `JobsConfigError`); warnings become
 * CDK warning annotations. Each rule module checks one group of settings, like cdk-nag's rule
 * files, and is tested on its own (test/infra/job-queue-rules/<group>.test.ts).
 */
import type { JobQueueProps } from '../props.ts';
import type { JobQueueSettings } from '../settings.ts';

/** One finding of a rule. `message` starts with the name of the setting it is about. */
export type JobQueueFinding =
  | { readonly level: 'error'; readonly message: string }
  | { readonly level: 'warning'; readonly id: string; readonly message: string };

/** Input of every rule. */
export interface RuleInput {
  /** The props as given: JavaScript callers may have left required ones out or mistyped them. */
  readonly props: JobQueueProps;
  readonly settings: JobQueueSettings;
}

/** A rule: every finding for its group of settings, in a stable order; empty when all is well. */
export type JobQueueRule = (input: RuleInput) => JobQueueFinding[];

/** An error finding. */
export function error(message: string): JobQueueFinding {
  return { level: 'error', message };
}

/** A warning finding with its acknowledgeable id (see `JOB_QUEUE_WARNINGS`). */
export function warning(id: string, message: string): JobQueueFinding {
  return { level: 'warning', id, message };
}
