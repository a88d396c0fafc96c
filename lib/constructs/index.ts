/**
 * The CDK constructs of sqs-jobs, for CDK apps (`sqs-jobs/cdk`). Importing this entry point
 * (rather than `sqs-jobs`) keeps aws-cdk-lib out of code that only needs the runtime or the
 * client. Peer dependencies: aws-cdk-lib, constructs; cdk-nag 3 (optional, for the nag checks).
 */
export { AlarmTopic, type AlarmTopicProps } from './alarm-topic.ts';
export {
  applyJobsChecks,
  createJobsApp,
  type JobsAppProps,
  type JobsChecksOptions,
  type JobsNagOptions,
  jobsAppContext,
  TEMPLATE_VALIDATOR_ERRORS_FLAG,
} from './checks.ts';
export { JobsConfigError, JobsConstructError } from './errors.ts';
export {
  IDEMPOTENCY_TABLE_SCHEMA,
  IdempotencyTable,
  type IdempotencyTableProps,
} from './idempotency-table.ts';
export {
  enqueueUrlVariable,
  IDEMPOTENCY_TABLE_ACTIONS,
  IDEMPOTENCY_UNPARK_ACTIONS,
  JOB_QUEUE_DEFAULTS,
  JOB_QUEUE_WARNINGS,
  JOBS_METRICS_NAMESPACE,
  type JobDefinitionLike,
  JobQueue,
  type JobQueueAlarms,
  type JobQueueProps,
} from './job-queue.ts';
export { JobsDashboard, type JobsDashboardProps } from './jobs-dashboard.ts';
export { type RunJobsAppOptions, runJobsApp } from './run.ts';
