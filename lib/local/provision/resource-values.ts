/**
 * What `Ref` and `Fn::GetAtt` of the stack's resources return while it is provisioned: the values
 * of a created queue, table or function once it exists (the emulator's URL and ARN), fake values
 * for resources with no local meaning (fake-values.ts). The template resolver asks here through
 * its `resourceValues` callback.
 */
import { TemplateResolutionError } from '../errors.ts';
import type { CfnResource, CfnTemplate } from '../template-resolver.ts';
import type { StackIdentity } from './context.ts';
import { fakeValue } from './fake-values.ts';

/** `Ref` (`ref`) and `Fn::GetAtt` (`atts`, by attribute name) of one resource. */
export interface ResourceValue {
  readonly ref: unknown;
  readonly atts: Readonly<Record<string, unknown>>;
}

/** Types whose values exist only once created: a reference to one before that is an ordering bug. */
const PROVISIONED_TYPES = new Set([
  'AWS::SQS::Queue',
  'AWS::DynamoDB::Table',
  'AWS::DynamoDB::GlobalTable',
  'AWS::Lambda::Function',
]);

/** The values of the resources of one template, filled as they are created. */
export class StackResourceValues {
  private readonly values = new Map<string, ResourceValue>();

  constructor(
    private readonly template: CfnTemplate,
    private readonly stack: StackIdentity,
  ) {}

  /** Records the values of a created resource. */
  set(logicalId: string, value: ResourceValue): void {
    this.values.set(logicalId, value);
  }

  /**
   * `Ref` (`attribute` undefined) or `Fn::GetAtt` of `logicalId`, referenced at template path `path`.
   * @throws {TemplateResolutionError} for an attribute the resource has no local value for, or a
   *   queue, table or function referenced before it was created.
   */
  readonly lookup = (logicalId: string, attribute: string | undefined, path: string): unknown => {
    const known = this.values.get(logicalId);
    const resource = this.template.Resources[logicalId] as CfnResource;
    if (known) {
      if (attribute === undefined) return known.ref;
      if (Object.hasOwn(known.atts, attribute)) return known.atts[attribute];
      throw new TemplateResolutionError(
        `${resource.Type} ${logicalId} has no attribute ${attribute} locally (at ${path}); known: ${Object.keys(known.atts).join(', ')}`,
        { context: { path, logicalId, attribute } },
      );
    }
    if (PROVISIONED_TYPES.has(resource.Type)) {
      throw new TemplateResolutionError(`${logicalId} is referenced at ${path} before it was created`, {
        context: { path, logicalId },
      });
    }
    return fakeValue(this.stack, logicalId, resource, attribute);
  };
}
