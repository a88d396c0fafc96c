/**
 * The aws-cdk-lib APIs `sqs-jobs/cdk` uses that are newer than the oldest aws-cdk-lib it
 * supports (package.json `peerDependencies`), looked up when used instead of imported by name, so
 * an app on an older aws-cdk-lib can still use the constructs and gets a clear error only from
 * the one feature it lacks.
 *
 * The floor is 2.224.0: the first release with `lambda.Runtime.NODEJS_24_X`, the runtime of every
 * worker (2.223.0 lacks it). Newer than the floor:
 * - `Validations` (policy validation plugins and `acknowledge`): used to register cdk-nag 3 (which
 *   itself needs aws-cdk-lib 2.257.0 or later) and to acknowledge its one X-Ray finding.
 * - the CloudFormation template validator and its flag `@aws-cdk/core:validateAgainstDefaultRules`:
 *   aws-cdk-lib 2.262.0 (aws/aws-cdk#38135; https://docs.aws.amazon.com/cdk/v2/guide/featureflags.html).
 *
 * They are read from aws-cdk-lib's CommonJS exports object (its own getters), which has every
 * name of the installed version; a missing one is `undefined` rather than a link error.
 */
import { createRequire } from 'node:module';
import type { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The first aws-cdk-lib with the template validator and its errors flag. */
export const TEMPLATE_VALIDATOR_SINCE = '2.262.0';

/** The feature flag that turns the template validator's findings into errors (aws-cdk-lib's `cxapi.VALIDATE_AGAINST_DEFAULT_RULES`). */
export const TEMPLATE_VALIDATOR_ERRORS_FLAG = '@aws-cdk/core:validateAgainstDefaultRules';

const requireCdk = createRequire(import.meta.url);

/** aws-cdk-lib's `Validations.of(scope)`, or `undefined` when the installed aws-cdk-lib has no `Validations`. */
export function validationsOf(scope: IConstruct): Validations | undefined {
  const lib = requireCdk('aws-cdk-lib') as { Validations?: typeof Validations };
  return lib.Validations?.of(scope);
}

/** Whether the installed aws-cdk-lib has the template validator (its errors flag is a known feature flag). */
export function hasTemplateValidator(): boolean {
  const cxapi = requireCdk('aws-cdk-lib/cx-api') as { VALIDATE_AGAINST_DEFAULT_RULES?: unknown };
  return cxapi.VALIDATE_AGAINST_DEFAULT_RULES === TEMPLATE_VALIDATOR_ERRORS_FLAG;
}

/** The installed aws-cdk-lib's version, for error messages. */
export function awsCdkLibVersion(): string {
  return (requireCdk('aws-cdk-lib/package.json') as { version: string }).version;
}
