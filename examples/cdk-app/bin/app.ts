#!/usr/bin/env node
/**
 * The CDK app, run by the CDK CLI (`npx cdk synth`, `npx cdk deploy`; see cdk.json). A setting a
 * construct refuses prints as its list of problems and exits 1 (`runJobsApp`).
 */
import { runJobsApp } from 'sqs-jobs/cdk';
import { buildApp } from '../lib/app.ts';

await runJobsApp(() => {
  buildApp().app.synth();
});
