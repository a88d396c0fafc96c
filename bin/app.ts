#!/usr/bin/env node
/**
 * The CDK app, run by the CDK CLI (`npm run synth`, `npx cdk deploy`; see cdk.json and
 * docs/deploy.md). Context: `-c alarmEmail=you@example.com`, `-c externalApiUrl=https://...`.
 * The app itself is built by `buildApp` (lib/stacks/app.ts), which tests use without the CLI.
 * A refused configuration (`JobsConfigError`) prints as its list of problems and exits 1
 * (`runJobsApp`); `SQS_JOBS_DEBUG=1` adds the stack trace.
 */
import { runJobsApp } from 'sqs-jobs/cdk';
import { buildApp } from '../lib/stacks/app.ts';

await runJobsApp(() => {
  const { app } = buildApp();
  app.synth();
});
