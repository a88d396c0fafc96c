/**
 * The CDK constructs of sqs-jobs, for CDK apps. Importing this entry point (rather than
 * lib/index.ts) keeps aws-cdk-lib out of code that only needs the runtime or the client.
 */
export { AlarmTopic, type AlarmTopicProps } from './alarm-topic.ts';
export { JobsConfigError, JobsConstructError } from './errors.ts';
export {
  IDEMPOTENCY_TABLE_SCHEMA,
  IdempotencyTable,
  type IdempotencyTableProps,
} from './idempotency-table.ts';
export {
  enqueueUrlVariable,
  IDEMPOTENCY_TABLE_ACTIONS,
  JOB_QUEUE_DEFAULTS,
  JOBS_METRICS_NAMESPACE,
  JobQueue,
  type JobQueueAlarms,
  type JobQueueProps,
} from './job-queue.ts';
export { JobsDashboard, type JobsDashboardProps } from './jobs-dashboard.ts';
