/**
 * `Ref` / `Fn::GetAtt` of the resources with no local meaning (IAM, alarms, dashboards, SNS
 * topics, log groups, policies...): they are skipped, but what refers to them still resolves, to
 * deterministic fake names and ARNs (an SNS topic's `Ref` is `arn:aws:sns:<region>:<account>:<name>`).
 */
import { TemplateResolutionError } from '../errors.ts';
import type { CfnResource } from '../template-resolver.ts';
import type { StackIdentity } from './context.ts';
import { generatedName } from './names.ts';

/**
 * The fake value of `Ref` (`attribute` undefined) or `Fn::GetAtt` `attribute` of a skipped resource.
 * @throws {TemplateResolutionError} for an attribute its type has no local value for.
 */
export function fakeValue(
  stack: StackIdentity,
  logicalId: string,
  resource: CfnResource,
  attribute: string | undefined,
): unknown {
  const props = (resource.Properties ?? {}) as Record<string, unknown>;
  const nameProp = (key: string) => (typeof props[key] === 'string' ? (props[key] as string) : undefined);
  const type = resource.Type;
  const name = (key: string, max = 128) => nameProp(key) ?? generatedName(stack.stackName, logicalId, max);
  const arn = (service: string, resourcePart: string, withRegion = true) =>
    `arn:${stack.partition}:${service}:${withRegion ? stack.region : ''}:${stack.accountId()}:${resourcePart}`;
  switch (type) {
    case 'AWS::SNS::Topic': {
      const topicName = name('TopicName', 256);
      const topicArn = arn('sns', topicName);
      if (attribute === undefined || attribute === 'TopicArn') return topicArn;
      if (attribute === 'TopicName') return topicName;
      break;
    }
    case 'AWS::IAM::Role': {
      const roleName = name('RoleName', 64);
      if (attribute === undefined) return roleName;
      if (attribute === 'Arn') return arn('iam', `role/${roleName}`, false);
      if (attribute === 'RoleId') return `AROA${logicalId.toUpperCase().slice(0, 17)}`;
      break;
    }
    case 'AWS::Logs::LogGroup': {
      const groupName = name('LogGroupName', 512);
      if (attribute === undefined) return groupName;
      if (attribute === 'Arn') return arn('logs', `log-group:${groupName}:*`);
      break;
    }
    case 'AWS::CloudWatch::Alarm': {
      const alarmName = name('AlarmName', 255);
      if (attribute === undefined) return alarmName;
      if (attribute === 'Arn') return arn('cloudwatch', `alarm:${alarmName}`);
      break;
    }
    case 'AWS::Lambda::EventSourceMapping':
      if (attribute === undefined || attribute === 'Id') return `00000000-0000-4000-8000-${hex12(logicalId)}`;
      if (attribute === 'EventSourceMappingArn') {
        return arn('lambda', `event-source-mapping:00000000-0000-4000-8000-${hex12(logicalId)}`);
      }
      break;
    default:
      if (attribute === undefined) return generatedName(stack.stackName, logicalId, 128);
      if (attribute === 'Arn') return arn('local', `${type.replace(/::/g, '-').toLowerCase()}/${logicalId}`);
      return `${logicalId}.${attribute}`;
  }
  throw new TemplateResolutionError(`${type} ${logicalId} has no attribute ${attribute} locally`, {
    context: { logicalId, attribute },
  });
}

function hex12(text: string): string {
  let h = 0;
  for (const ch of text) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return h.toString(16).padStart(12, '0').slice(-12);
}
