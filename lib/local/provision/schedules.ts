/**
 * `AWS::Scheduler::ScheduleGroup` and `AWS::Scheduler::Schedule`: resolved here (their queue ARNs
 * are known once the queues exist), created in the local Scheduler emulator when it starts
 * (runtime/scheduler.ts). `Ref` = the name; `Fn::GetAtt` `Arn` (and a group's `State`).
 * Names: the template's `Name`, else `<StackName>-<LogicalId>` cut to 64 characters (CloudFormation
 * would add a random suffix).
 */
import type { ScheduleInput } from '../scheduler/index.ts';
import type { CfnResource } from '../template-resolver.ts';
import type { ProvisionContext } from './context.ts';
import { generatedName } from './names.ts';
import type { ResourceValue } from './resource-values.ts';

/** Schedule and group names: 1–64 characters (Scheduler API reference). */
const NAME_MAX = 64;

/** A schedule group of the template. */
export interface ScheduleGroupResource {
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
}

/** A schedule of the template, resolved to a CreateSchedule input (dates in epoch ms). */
export interface ScheduleResource {
  readonly logicalId: string;
  readonly arn: string;
  readonly input: ScheduleInput;
}

function nameOf(
  ctx: ProvisionContext,
  logicalId: string,
  props: Readonly<Record<string, unknown>>,
  path: string,
) {
  return props.Name === undefined
    ? generatedName(ctx.stackName, logicalId, NAME_MAX)
    : ctx.resolver.resolveString(props.Name, `${path}.Properties.Name`);
}

/** The group of template resource `logicalId`. @throws {TemplateResolutionError} */
export function scheduleGroupResource(
  ctx: ProvisionContext,
  logicalId: string,
  resource: CfnResource,
  path: string,
): ScheduleGroupResource {
  const name = nameOf(ctx, logicalId, resource.Properties ?? {}, path);
  const arn = `arn:${ctx.partition}:scheduler:${ctx.region}:${ctx.accountId()}:schedule-group/${name}`;
  return { logicalId, name, arn };
}

/** What `Ref` and `Fn::GetAtt` of a schedule group return. */
export function scheduleGroupValue(group: ScheduleGroupResource): ResourceValue {
  return { ref: group.name, atts: { Arn: group.arn, State: 'ACTIVE' } };
}

const date = (value: unknown): number | undefined =>
  value === undefined ? undefined : Date.parse(String(value));

/** The schedule of template resource `logicalId`, its properties resolved. @throws {TemplateResolutionError} */
export function scheduleResource(
  ctx: ProvisionContext,
  logicalId: string,
  resource: CfnResource,
  path: string,
): ScheduleResource {
  const props = ctx.resolver.resolve(resource.Properties ?? {}, `${path}.Properties`) as Record<
    string,
    unknown
  >;
  const name = nameOf(ctx, logicalId, props, path);
  const groupName = typeof props.GroupName === 'string' ? props.GroupName : 'default';
  const input = {
    ...(props as unknown as ScheduleInput),
    Name: name,
    GroupName: groupName,
    StartDate: date(props.StartDate),
    EndDate: date(props.EndDate),
  };
  const arn = `arn:${ctx.partition}:scheduler:${ctx.region}:${ctx.accountId()}:schedule/${groupName}/${name}`;
  return { logicalId, arn, input };
}

/** What `Ref` and `Fn::GetAtt` of a schedule return. */
export function scheduleValue(schedule: ScheduleResource): ResourceValue {
  return { ref: schedule.input.Name, atts: { Arn: schedule.arn } };
}
