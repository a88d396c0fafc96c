/**
 * Creates the stack's queues and tables on the emulators FROM THE SYNTHESIZED TEMPLATE, in
 * dependency order (a dead-letter queue before the queue whose RedrivePolicy names it, order.ts),
 * and collects the Lambda functions and SQS event source mappings the local runtime emulates.
 *
 * One module per resource kind says what happens to it locally and what its `Ref` /
 * `Fn::GetAtt` return:
 * - queues.ts: `AWS::SQS::Queue`, created;
 * - tables.ts: `AWS::DynamoDB::Table` and `AWS::DynamoDB::GlobalTable`, created;
 * - functions.ts: `AWS::Lambda::Function`, recorded;
 * - mappings.ts: `AWS::Lambda::EventSourceMapping`, recorded when its source is a queue of the stack;
 * - schedules.ts: `AWS::Scheduler::ScheduleGroup` and `AWS::Scheduler::Schedule`, resolved (the
 *   local Scheduler emulator creates them when it starts);
 * - fake-values.ts: everything else (IAM, alarms, dashboards, SNS topics, log groups,
 *   policies...) has no local meaning and is skipped, but what refers to it resolves.
 *
 * Physical names: the template's `QueueName` / `TableName` / `FunctionName` when given, else
 * `<StackName>-<LogicalId>` (names.ts).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { AssemblyStack } from '../cloud-assembly.ts';
import {
  type CfnResource,
  type CfnTemplate,
  type PseudoParameters,
  TemplateResolver,
} from '../template-resolver.ts';
import type { ProvisionContext } from './context.ts';
import { type FunctionResource, functionResource, functionValue } from './functions.ts';
import { type EventSourceMappingResource, resolveMapping } from './mappings.ts';
import { dependencyOrder } from './order.ts';
import { createQueue, type ProvisionedQueue, queueValue } from './queues.ts';
import { StackResourceValues } from './resource-values.ts';
import {
  type ScheduleGroupResource,
  type ScheduleResource,
  scheduleGroupResource,
  scheduleGroupValue,
  scheduleResource,
  scheduleValue,
} from './schedules.ts';
import { createTable, type ProvisionedTable, tableValue } from './tables.ts';

/** Result of {@link provisionStack}. */
export interface ProvisionedStack {
  readonly stackName: string;
  readonly region: string;
  /** Account id the emulator uses in its ARNs (learnt from the first queue created). */
  readonly accountId: string;
  readonly queues: readonly ProvisionedQueue[];
  readonly tables: readonly ProvisionedTable[];
  readonly functions: readonly FunctionResource[];
  readonly eventSourceMappings: readonly EventSourceMappingResource[];
  /** The template's schedule groups and schedules, resolved (created when the Scheduler emulator starts). */
  readonly scheduleGroups: readonly ScheduleGroupResource[];
  readonly schedules: readonly ScheduleResource[];
  /** Resolved `Outputs` by output logical id (outputs that cannot resolve locally are left out, see `warnings`). */
  readonly outputs: Readonly<Record<string, string>>;
  /** `logicalId (Type)` of every resource with no local meaning. */
  readonly skipped: readonly string[];
  /** Things that work differently locally (TTL unsupported by the emulator, unresolvable outputs...). */
  readonly warnings: readonly string[];
  /** The resolver, for resolving function properties later. */
  readonly resolver: TemplateResolver;
}

/** Options of {@link provisionStack}. */
export interface ProvisionOptions {
  readonly stack: AssemblyStack;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  /** SQS endpoint URL: queue URLs are rewritten to its origin (see `normaliseQueueUrl` in queues.ts). */
  readonly sqsEndpoint: string;
  /** Region in use. */
  readonly region: string;
  /** Account id to assume until the emulator reveals its own. @default '000000000000' */
  readonly accountId?: string;
  /** Template parameter values over the `Default`s. */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /**
   * What to do when a queue or table of the same name already exists (external endpoints only;
   * embedded emulators start empty): `recreate` deletes it first, `fail` throws.
   * @default 'recreate'
   */
  readonly existing?: 'recreate' | 'fail';
}

/**
 * Creates the queues and tables of `options.stack` on the emulators and resolves its outputs.
 * @throws {TemplateResolutionError} / {UnsupportedIntrinsicError} when a property cannot resolve.
 * @throws {ProvisionError} when the emulator refuses a queue or table (the message names the
 *   resource and carries the emulator's error as `cause`).
 */
export async function provisionStack(options: ProvisionOptions): Promise<ProvisionedStack> {
  const { stack, dynamodb, region } = options;
  const template = stack.template;
  let accountId = options.accountId ?? '000000000000';
  const identity = { stackName: stack.stackName, region, partition: 'aws', accountId: () => accountId };
  const values = new StackResourceValues(template, identity);
  const pseudo = (): PseudoParameters => ({ region, accountId, stackName: stack.stackName });
  const resolver = new TemplateResolver(template, {
    pseudo,
    parameters: options.parameters,
    resourceValues: values.lookup,
  });
  const ctx: ProvisionContext = {
    ...identity,
    resolver,
    existing: options.existing ?? 'recreate',
    warnings: [],
  };
  const queues: ProvisionedQueue[] = [];
  const tables: ProvisionedTable[] = [];
  const functions: FunctionResource[] = [];
  const scheduleGroups: ScheduleGroupResource[] = [];
  const schedules: ScheduleResource[] = [];
  const skipped: string[] = [];

  for (const logicalId of dependencyOrder(template)) {
    const resource = template.Resources[logicalId] as CfnResource;
    const path = `Resources.${logicalId}`;
    if (!resolver.isIncluded(resource.Condition, `${path}.Condition`)) continue;
    switch (resource.Type) {
      case 'AWS::SQS::Queue': {
        const queue = await createQueue(ctx, options, logicalId, resource, path);
        queues.push(queue);
        if (queues.length === 1) accountId = queue.arn.split(':')[4] || accountId;
        values.set(logicalId, queueValue(queue));
        break;
      }
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable': {
        const table = await createTable(ctx, dynamodb, logicalId, resource, path);
        tables.push(table);
        values.set(logicalId, tableValue(table));
        break;
      }
      case 'AWS::Lambda::Function': {
        const fn = functionResource(ctx, logicalId, resource, path);
        functions.push(fn);
        values.set(logicalId, functionValue(fn));
        break;
      }
      case 'AWS::Scheduler::ScheduleGroup': {
        const group = scheduleGroupResource(ctx, logicalId, resource, path);
        scheduleGroups.push(group);
        values.set(logicalId, scheduleGroupValue(group));
        break;
      }
      case 'AWS::Scheduler::Schedule': {
        const schedule = scheduleResource(ctx, logicalId, resource, path);
        schedules.push(schedule);
        values.set(logicalId, scheduleValue(schedule));
        break;
      }
      case 'AWS::Lambda::EventSourceMapping':
        break; // resolved below, once every queue and function is known
      default:
        skipped.push(`${logicalId} (${resource.Type})`);
    }
  }

  const eventSourceMappings: EventSourceMappingResource[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    const path = `Resources.${logicalId}`;
    if (!resolver.isIncluded(resource.Condition, `${path}.Condition`)) continue;
    const mapping = resolveMapping(ctx, queues, functions, logicalId, resource, path);
    if (mapping) eventSourceMappings.push(mapping);
  }

  return {
    stackName: stack.stackName,
    region,
    accountId,
    queues,
    tables,
    functions,
    eventSourceMappings,
    scheduleGroups,
    schedules,
    outputs: resolveOutputs(template, ctx),
    skipped,
    warnings: ctx.warnings,
    resolver,
  };
}

/** The template's `Outputs` that resolve locally; each one that does not adds a warning. */
function resolveOutputs(
  template: CfnTemplate,
  { resolver, warnings }: ProvisionContext,
): Record<string, string> {
  const outputs: Record<string, string> = {};
  for (const [id, output] of Object.entries(template.Outputs ?? {})) {
    try {
      if (!resolver.isIncluded(output.Condition, `Outputs.${id}.Condition`)) continue;
      const value = resolver.resolve(output.Value, `Outputs.${id}.Value`);
      outputs[id] = typeof value === 'string' ? value : JSON.stringify(value);
    } catch (error) {
      warnings.push(`output ${id} has no local value: ${(error as Error).message}`);
    }
  }
  return outputs;
}
