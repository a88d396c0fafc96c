/**
 * `AWS::Lambda::Function`: recorded, not created (function-host.ts runs its bundled code when a
 * mapping invokes it). `Ref` = function name, `Fn::GetAtt` `Arn`. Only the name resolves now; the
 * code, handler and environment are resolved later by function-config.ts, for mapped functions only.
 */
import type { CfnResource } from '../template-resolver.ts';
import type { ProvisionContext } from './context.ts';
import { generatedName } from './names.ts';
import type { ResourceValue } from './resource-values.ts';

/** A Lambda function of the template (only what the local runtime needs). */
export interface FunctionResource {
  readonly logicalId: string;
  /** Physical function name. */
  readonly name: string;
  /** Function ARN (`arn:<partition>:lambda:<region>:<account>:function:<name>`). */
  readonly arn: string;
  /** The raw template resource; resolved lazily (only mapped functions need their code and env). */
  readonly resource: CfnResource;
}

const FUNCTION_NAME_MAX = 64;

/**
 * The function of template resource `logicalId`: its `FunctionName`, else a generated one.
 * @throws {TemplateResolutionError} when `FunctionName` cannot resolve to a string.
 */
export function functionResource(
  ctx: ProvisionContext,
  logicalId: string,
  resource: CfnResource,
  path: string,
): FunctionResource {
  const props = resource.Properties ?? {};
  const name =
    props.FunctionName === undefined
      ? generatedName(ctx.stackName, logicalId, FUNCTION_NAME_MAX)
      : ctx.resolver.resolveString(props.FunctionName, `${path}.Properties.FunctionName`);
  const arn = `arn:${ctx.partition}:lambda:${ctx.region}:${ctx.accountId()}:function:${name}`;
  return { logicalId, name, arn, resource };
}

/** What `Ref` and `Fn::GetAtt` of a function return. */
export function functionValue(fn: FunctionResource): ResourceValue {
  return { ref: fn.name, atts: { Arn: fn.arn } };
}
