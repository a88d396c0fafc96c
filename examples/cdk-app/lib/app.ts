/**
 * Builds the app with the checks of `sqs-jobs/cdk` (`createJobsApp` = `new App()` +
 * `applyJobsChecks`): cdk-nag's AwsSolutions rule pack on every stack (an unacknowledged finding
 * fails synth) and the CloudFormation template validator bundled with aws-cdk-lib, its findings
 * as errors. Both write `cdk.out/validation-report.json`.
 */
import type { App, AppProps } from 'aws-cdk-lib';
import { createJobsApp } from 'sqs-jobs/cdk';
import { OrdersStack } from './stack.ts';

export const STACK_NAME = 'SqsJobsExample';

export function buildApp(props?: AppProps): { app: App; stack: OrdersStack } {
  const app = createJobsApp(props);
  const stack = new OrdersStack(app, STACK_NAME);
  return { app, stack };
}
