/**
 * `tracing`: one of `lambda.Tracing`'s values (`Active`, `PassThrough`, `Disabled`), so a typo
 * from JavaScript is refused at `new JobQueue(...)` instead of by CloudFormation at deploy
 * (AWS::Lambda::Function `TracingConfig.Mode` takes `Active` or `PassThrough`; `Disabled` is
 * CDK's "no TracingConfig") [lambda-x-ray].
 *
 * - lambda-x-ray: https://docs.aws.amazon.com/lambda/latest/dg/services-xray.html
 */
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { error, type JobQueueRule } from './types.ts';

const MODES: readonly string[] = [
  lambda.Tracing.ACTIVE,
  lambda.Tracing.PASS_THROUGH,
  lambda.Tracing.DISABLED,
];

export const tracingRule: JobQueueRule = ({ props }) => {
  const tracing: unknown = props.tracing;
  if (tracing === undefined || MODES.includes(tracing as string)) return [];
  return [
    error(
      `tracing: ${JSON.stringify(tracing)} is not a lambda.Tracing value (Tracing.ACTIVE, Tracing.PASS_THROUGH or Tracing.DISABLED)`,
    ),
  ];
};
