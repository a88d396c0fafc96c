#!/usr/bin/env node
/**
 * The CDK app, run by the CDK CLI (`npm run synth`, `npx cdk deploy`; see cdk.json and
 * docs/deploy.md). Context: `-c alarmEmail=you@example.com`, `-c externalApiUrl=https://...`.
 * The app itself is built by `buildApp` (lib/stacks/app.ts), which tests use without the CLI.
 */
import { buildApp } from '../lib/stacks/app.ts';

const { app } = buildApp();
app.synth();
