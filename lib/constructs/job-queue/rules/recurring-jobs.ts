/**
 * `recurringJobs`: each one's schedule expression and time zone (EventBridge Scheduler's dialect,
 * lib/core/schedule-expression.ts), its job (one the worker runs, when `jobs` say), its data and
 * partition key (the envelope's rules; a partition key on FIFO), its retry policy's bounds, and
 * names used once. The checks themselves are in ../recurring-jobs.ts, shared with
 * `JobQueue.addRecurringJob`.
 * Sources: https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html,
 * https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html
 */
import { recurringJobQueueOf, recurringJobsProblems } from '../recurring-jobs.ts';
import { error, type JobQueueRule } from './types.ts';

export const recurringJobsRule: JobQueueRule = ({ props, settings }) =>
  recurringJobsProblems(
    props.recurringJobs,
    recurringJobQueueOf(props, settings.fifo, settings.maxMessageSizeBytes),
  ).map(error);
