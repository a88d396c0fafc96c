/**
 * The rules of {@link JobQueue}, one module per group of settings, run in this order (the order
 * of the problem lines in a `JobsConfigError`).
 */
import type { JobQueueProps } from '../props.ts';
import { type JobQueueSettings, resolveSettings } from '../settings.ts';
import { alarmTopicRule } from './alarm-topic.ts';
import { alarmsRule } from './alarms.ts';
import { batchingRule } from './batching.ts';
import { bundlingRule } from './bundling.ts';
import { concurrencyRule } from './concurrency.ts';
import { deadLetterRule } from './dead-letter.ts';
import { deadLetterRetentionRule } from './dead-letter-retention.ts';
import { durationsRule } from './durations.ts';
import { enqueueTargetsRule } from './enqueue-targets.ts';
import { entryRule } from './entry.ts';
import { environmentRule } from './environment.ts';
import { fifoRule } from './fifo.ts';
import { idempotencyRule } from './idempotency.ts';
import { jobsRule } from './jobs.ts';
import { memoryRule } from './memory.ts';
import { messageSizeRule } from './message-size.ts';
import { orderedRule } from './ordered.ts';
import { parkRule } from './park.ts';
import { recurringJobsRule } from './recurring-jobs.ts';
import { redriveRule } from './redrive.ts';
import { requiredRule } from './required.ts';
import { timeoutsRule } from './timeouts.ts';
import { tracingRule } from './tracing.ts';
import type { JobQueueFinding, JobQueueRule, RuleInput } from './types.ts';
import { visibilityRule } from './visibility.ts';

export type { JobQueueFinding, JobQueueRule, RuleInput } from './types.ts';

/** Every rule, in reporting order. */
export const JOB_QUEUE_RULES: readonly JobQueueRule[] = [
  requiredRule,
  jobsRule,
  deadLetterRule,
  deadLetterRetentionRule,
  redriveRule,
  durationsRule,
  timeoutsRule,
  memoryRule,
  batchingRule,
  concurrencyRule,
  visibilityRule,
  messageSizeRule,
  fifoRule,
  orderedRule,
  enqueueTargetsRule,
  idempotencyRule,
  parkRule,
  alarmTopicRule,
  alarmsRule,
  environmentRule,
  recurringJobsRule,
  tracingRule,
  entryRule,
  bundlingRule,
];

/** The input of the rules for these props (defaults applied). Never throws. */
export function ruleInput(props: JobQueueProps): RuleInput {
  return { props, settings: resolveSettings(props) };
}

/** Result of {@link checkJobQueue}. */
export interface JobQueueCheck {
  readonly settings: JobQueueSettings;
  /** Problem lines, each starting with the setting's name. */
  readonly errors: readonly string[];
  readonly warnings: readonly { readonly id: string; readonly message: string }[];
}

/** Runs every rule on the props. Never throws. */
export function checkJobQueue(props: JobQueueProps): JobQueueCheck {
  const input = ruleInput(props);
  const findings: JobQueueFinding[] = JOB_QUEUE_RULES.flatMap((rule) => rule(input));
  return {
    settings: input.settings,
    errors: findings.flatMap((f) => (f.level === 'error' ? [f.message] : [])),
    warnings: findings.flatMap((f) => (f.level === 'warning' ? [{ id: f.id, message: f.message }] : [])),
  };
}
