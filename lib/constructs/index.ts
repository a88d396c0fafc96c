/**
 * The CDK constructs of sqs-jobs, for CDK apps (`sqs-jobs/cdk`). Importing this entry point
 * (rather than `sqs-jobs`) keeps aws-cdk-lib out of code that only needs the runtime or the
 * client. Peer dependencies: aws-cdk-lib, constructs; cdk-nag 3 (optional, for the nag checks).
 *
 * The public API: what README.md, docs/ and examples/ use, plus the types of those signatures.
 * test/unit/entry-points.test.ts pins this list; adding a name is a decision made in review.
 */
export { AlarmTopic, type AlarmTopicProps } from './alarm-topic.ts';
export {
  applyJobsChecks,
  createJobsApp,
  type JobsAppProps,
  type JobsChecksOptions,
  type JobsNagOptions,
  jobsAppContext,
} from './checks.ts';
export { JobsConfigError, JobsConstructError } from './errors.ts';
export { IdempotencyTable, type IdempotencyTableProps } from './idempotency-table.ts';
export {
  type JobDefinitionLike,
  JobQueue,
  type JobQueueAlarms,
  type JobQueueProps,
  type JobQueueScheduleAlarms,
  type RecurringJob,
} from './job-queue.ts';
export { JobsDashboard, type JobsDashboardProps } from './jobs-dashboard.ts';
export { type RunJobsAppOptions, runJobsApp } from './run.ts';
