/**
 * Creates the stack's queues and tables on the emulators FROM THE SYNTHESIZED TEMPLATE, in
 * dependency order (a dead-letter queue before the queue whose RedrivePolicy names it), and
 * collects the Lambda functions and SQS event source mappings the local runtime emulates.
 *
 * Resource types and what happens locally:
 * - `AWS::SQS::Queue`: CreateQueue with the template's attributes (`VisibilityTimeout`,
 *   `MessageRetentionPeriod`, `MaximumMessageSize`, `DelaySeconds`, `ReceiveMessageWaitTimeSeconds`,
 *   `FifoQueue`, `ContentBasedDeduplication`, `DeduplicationScope`, `FifoThroughputLimit`,
 *   `RedrivePolicy`, `RedriveAllowPolicy`) and tags; encryption settings (`KmsMasterKeyId`,
 *   `KmsDataKeyReusePeriodSeconds`, `SqsManagedSseEnabled`) have no local meaning and are left out.
 *   `Ref` = queue URL; `Fn::GetAtt` `Arn`, `QueueName`, `QueueUrl`.
 * - `AWS::DynamoDB::Table` and `AWS::DynamoDB::GlobalTable`: CreateTable with key schema,
 *   attribute definitions, billing mode and secondary indexes, then TTL when the emulator knows
 *   UpdateTimeToLive. `Ref` = table name; `Fn::GetAtt` `Arn`, `StreamArn`, `TableId`.
 * - `AWS::Lambda::Function`: recorded; `Ref` = function name, `Fn::GetAtt` `Arn`.
 * - `AWS::Lambda::EventSourceMapping`: recorded when its source is a queue of the stack.
 * - Everything else (IAM, alarms, dashboards, SNS topics, log groups, policies...) has no local
 *   meaning and is skipped, but its `Ref` / `Fn::GetAtt` resolve to deterministic fake names and
 *   ARNs (an SNS topic's `Ref` is `arn:aws:sns:<region>:<account>:<name>`).
 *
 * Physical names: the template's `QueueName` / `TableName` / `FunctionName` when given, else
 * `<StackName>-<LogicalId>` (FIFO queue names end with `.fifo`), cut to the service's limit.
 * CloudFormation adds a random suffix; the local names are deterministic instead.
 */

import {
  type AttributeDefinition,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { AssemblyStack } from './cloud-assembly.ts';
import { ProvisionError, TemplateResolutionError } from './errors.ts';
import {
  type CfnResource,
  dependencyOrder,
  type PseudoParameters,
  TemplateResolver,
} from './template-resolver.ts';

/** A queue created from the template. */
export interface ProvisionedQueue {
  /** Logical id in the template. */
  readonly logicalId: string;
  /** Physical queue name (ends with `.fifo` for FIFO queues). */
  readonly name: string;
  /** Queue URL, with the origin of the SQS endpoint in use. */
  readonly url: string;
  /** Queue ARN as the emulator reports it. */
  readonly arn: string;
  /** FIFO queue? */
  readonly fifo: boolean;
  /** The attributes sent to CreateQueue (strings, as the SQS API takes them). */
  readonly attributes: Readonly<Record<string, string>>;
  /** The redrive policy, when the template gives one. */
  readonly redrive?: {
    /** ARN of the dead-letter queue. */
    readonly deadLetterTargetArn: string;
    /** Receives before a message moves to the DLQ. */
    readonly maxReceiveCount: number;
  };
}

/** A table created from the template. */
export interface ProvisionedTable {
  readonly logicalId: string;
  /** Physical table name. */
  readonly name: string;
  /** Table ARN as the emulator reports it. */
  readonly arn: string;
  /** `PAY_PER_REQUEST` or `PROVISIONED`. */
  readonly billingMode: string;
  /** Key schema as in CreateTable. */
  readonly keySchema: readonly KeySchemaElement[];
  /** TTL attribute name from `TimeToLiveSpecification`, when enabled. */
  readonly ttlAttribute: string | undefined;
}

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

/** An `AWS::Lambda::EventSourceMapping` on one of the stack's queues, resolved. */
export interface EventSourceMappingResource {
  readonly logicalId: string;
  readonly functionLogicalId: string;
  readonly queueLogicalId: string;
  /** `BatchSize`. @default 10 */
  readonly batchSize: number;
  /** `MaximumBatchingWindowInSeconds`. @default 0 */
  readonly maximumBatchingWindowSeconds: number;
  /** `ScalingConfig.MaximumConcurrency`; undefined when not set. */
  readonly maximumConcurrency: number | undefined;
  /** `FunctionResponseTypes` includes `ReportBatchItemFailures`. */
  readonly reportBatchItemFailures: boolean;
  /** `Enabled`. @default true */
  readonly enabled: boolean;
}

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
  /** SQS endpoint URL: queue URLs are rewritten to its origin (see {@link normaliseQueueUrl}). */
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

const QUEUE_ATTRIBUTE_PROPERTIES = [
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'DelaySeconds',
  'FifoQueue',
  'FifoThroughputLimit',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'RedriveAllowPolicy',
  'RedrivePolicy',
  'VisibilityTimeout',
] as const;

const QUEUE_NAME_MAX = 80;
const TABLE_NAME_MAX = 255;
const FUNCTION_NAME_MAX = 64;

/** `<stack>-<logicalId>` cut to `max` characters including `suffix`. */
export function generatedName(stackName: string, logicalId: string, max: number, suffix = ''): string {
  return `${stackName}-${logicalId}`.slice(0, max - suffix.length) + suffix;
}

/**
 * The queue URL with the origin of the endpoint in use. fauxqs answers CreateQueue with URLs on
 * `sqs.<region>.localhost:<port>`, a host name that does not resolve on every machine; the AWS
 * SDK sends each request to the QueueUrl's host when its endpoint comes from `AWS_ENDPOINT_URL`
 * (middleware-sdk-sqs `useQueueUrlAsEndpoint`), so workers would fail. Emulators find a queue by
 * the URL's path (`/<account>/<name>`), so the endpoint's origin works for all of them.
 */
export function normaliseQueueUrl(queueUrl: string, endpoint: string): string {
  const url = new URL(queueUrl);
  return `${new URL(endpoint).origin}${url.pathname}`;
}

function stringAttribute(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  throw new TemplateResolutionError(`cannot use ${String(value)} as a queue attribute at ${path}`, {
    context: { path },
  });
}

function isErrorNamed(error: unknown, ...names: string[]): boolean {
  const e = error as { name?: string; Code?: string; __type?: string };
  return names.some((n) => e?.name === n || e?.Code === n || (e?.__type ?? '').endsWith(n));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Creates the queues and tables of `options.stack` on the emulators and resolves its outputs.
 * @throws {TemplateResolutionError} / {UnsupportedIntrinsicError} when a property cannot resolve.
 * @throws {ProvisionError} when the emulator refuses a queue or table (the message names the
 *   resource and carries the emulator's error as `cause`).
 */
export async function provisionStack(options: ProvisionOptions): Promise<ProvisionedStack> {
  const { stack, sqs, dynamodb, region } = options;
  const template = stack.template;
  const existing = options.existing ?? 'recreate';
  let accountId = options.accountId ?? '000000000000';
  const pseudo = (): PseudoParameters => ({ region, accountId, stackName: stack.stackName });
  const values = new Map<string, { ref: unknown; atts: Record<string, unknown> }>();
  const functions = new Map<string, FunctionResource>();
  const queues: ProvisionedQueue[] = [];
  const tables: ProvisionedTable[] = [];
  const skipped: string[] = [];
  const warnings: string[] = [];
  const partition = () => 'aws';

  const fakeValues = (logicalId: string, resource: CfnResource, attribute: string | undefined): unknown => {
    const props = (resource.Properties ?? {}) as Record<string, unknown>;
    const nameProp = (key: string) => (typeof props[key] === 'string' ? (props[key] as string) : undefined);
    const type = resource.Type;
    const name = (key: string, max = 128) => nameProp(key) ?? generatedName(stack.stackName, logicalId, max);
    const arn = (service: string, resourcePart: string, withRegion = true) =>
      `arn:${partition()}:${service}:${withRegion ? region : ''}:${accountId}:${resourcePart}`;
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
        if (attribute === undefined || attribute === 'Id')
          return `00000000-0000-4000-8000-${hex12(logicalId)}`;
        if (attribute === 'EventSourceMappingArn') {
          return arn('lambda', `event-source-mapping:00000000-0000-4000-8000-${hex12(logicalId)}`);
        }
        break;
      default:
        if (attribute === undefined) return generatedName(stack.stackName, logicalId, 128);
        if (attribute === 'Arn')
          return arn('local', `${type.replace(/::/g, '-').toLowerCase()}/${logicalId}`);
        return `${logicalId}.${attribute}`;
    }
    throw new TemplateResolutionError(`${type} ${logicalId} has no attribute ${attribute} locally`, {
      context: { logicalId, attribute },
    });
  };

  const resourceValues = (logicalId: string, attribute: string | undefined, path: string): unknown => {
    const known = values.get(logicalId);
    const resource = template.Resources[logicalId] as CfnResource;
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
    return fakeValues(logicalId, resource, attribute);
  };

  const resolver = new TemplateResolver(template, {
    pseudo,
    parameters: options.parameters,
    resourceValues,
  });

  for (const logicalId of dependencyOrder(template)) {
    const resource = template.Resources[logicalId] as CfnResource;
    const path = `Resources.${logicalId}`;
    if (!resolver.isIncluded(resource.Condition, `${path}.Condition`)) continue;
    switch (resource.Type) {
      case 'AWS::SQS::Queue': {
        const queue = await createQueue(logicalId, resource, path);
        queues.push(queue);
        if (queues.length === 1) accountId = queue.arn.split(':')[4] || accountId;
        values.set(logicalId, {
          ref: queue.url,
          atts: { Arn: queue.arn, QueueName: queue.name, QueueUrl: queue.url },
        });
        break;
      }
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable': {
        const table = await createTable(logicalId, resource, path);
        tables.push(table);
        values.set(logicalId, {
          ref: table.name,
          atts: {
            Arn: table.arn,
            StreamArn: `${table.arn}/stream/1970-01-01T00:00:00.000`,
            TableId: table.name,
          },
        });
        break;
      }
      case 'AWS::Lambda::Function': {
        const props = resource.Properties ?? {};
        const name =
          props.FunctionName === undefined
            ? generatedName(stack.stackName, logicalId, FUNCTION_NAME_MAX)
            : resolver.resolveString(props.FunctionName, `${path}.Properties.FunctionName`);
        const arn = `arn:${partition()}:lambda:${region}:${accountId}:function:${name}`;
        functions.set(logicalId, { logicalId, name, arn, resource });
        values.set(logicalId, { ref: name, atts: { Arn: arn } });
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
    const mapping = resolveMapping(logicalId, resource, path);
    if (mapping) eventSourceMappings.push(mapping);
  }

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

  return {
    stackName: stack.stackName,
    region,
    accountId,
    queues,
    tables,
    functions: [...functions.values()],
    eventSourceMappings,
    outputs,
    skipped,
    warnings,
    resolver,
  };

  async function createQueue(
    logicalId: string,
    resource: CfnResource,
    path: string,
  ): Promise<ProvisionedQueue> {
    const props = resolver.resolve(resource.Properties ?? {}, `${path}.Properties`) as Record<
      string,
      unknown
    >;
    const fifo = props.FifoQueue === true || props.FifoQueue === 'true';
    const name =
      typeof props.QueueName === 'string'
        ? props.QueueName
        : generatedName(stack.stackName, logicalId, QUEUE_NAME_MAX, fifo ? '.fifo' : '');
    const attributes: Record<string, string> = {};
    for (const key of QUEUE_ATTRIBUTE_PROPERTIES) {
      const value = props[key];
      if (value === undefined || (key === 'FifoQueue' && !fifo)) continue;
      attributes[key] = stringAttribute(value, `${path}.Properties.${key}`);
    }
    const tags: Record<string, string> = {};
    for (const tag of (props.Tags as { Key: string; Value: string }[] | undefined) ?? [])
      tags[tag.Key] = String(tag.Value);
    let redrive: ProvisionedQueue['redrive'];
    const rp = props.RedrivePolicy as
      | { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown }
      | undefined;
    if (rp && typeof rp.deadLetterTargetArn === 'string') {
      redrive = { deadLetterTargetArn: rp.deadLetterTargetArn, maxReceiveCount: Number(rp.maxReceiveCount) };
    }
    try {
      if (existing === 'recreate') await deleteQueueIfExists(name);
      const created = await sqs.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: attributes,
          tags: Object.keys(tags).length > 0 ? tags : undefined,
        }),
      );
      const url = normaliseQueueUrl(created.QueueUrl as string, options.sqsEndpoint);
      const got = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
      );
      const arn = got.Attributes?.QueueArn;
      if (!arn) throw new Error('GetQueueAttributes returned no QueueArn');
      return { logicalId, name, url, arn, fifo, attributes, redrive };
    } catch (cause) {
      throw new ProvisionError(`cannot create queue ${name} (${logicalId}): ${(cause as Error).message}`, {
        cause,
        context: { logicalId, name, attributes },
      });
    }
  }

  async function deleteQueueIfExists(name: string): Promise<void> {
    try {
      const found = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
      if (found.QueueUrl) {
        await sqs.send(
          new DeleteQueueCommand({ QueueUrl: normaliseQueueUrl(found.QueueUrl, options.sqsEndpoint) }),
        );
      }
    } catch (error) {
      if (
        !isErrorNamed(
          error,
          'QueueDoesNotExist',
          'NonExistentQueue',
          'AWS.SimpleQueueService.NonExistentQueue',
        )
      ) {
        throw error;
      }
    }
  }

  async function createTable(
    logicalId: string,
    resource: CfnResource,
    path: string,
  ): Promise<ProvisionedTable> {
    const props = resolver.resolve(resource.Properties ?? {}, `${path}.Properties`) as Record<
      string,
      unknown
    >;
    const name =
      typeof props.TableName === 'string'
        ? props.TableName
        : generatedName(stack.stackName, logicalId, TABLE_NAME_MAX);
    // CloudFormation's default for both table types is PROVISIONED.
    const billingMode = typeof props.BillingMode === 'string' ? props.BillingMode : 'PROVISIONED';
    const provisioned = billingMode === 'PROVISIONED';
    const throughput = (value: unknown) => {
      const t = value as { ReadCapacityUnits?: unknown; WriteCapacityUnits?: unknown } | undefined;
      return {
        ReadCapacityUnits: Number(t?.ReadCapacityUnits ?? 5),
        WriteCapacityUnits: Number(t?.WriteCapacityUnits ?? 5),
      };
    };
    type Index = {
      IndexName: string;
      KeySchema: KeySchemaElement[];
      Projection: unknown;
      ProvisionedThroughput?: unknown;
    };
    const input: CreateTableCommandInput = {
      TableName: name,
      KeySchema: props.KeySchema as KeySchemaElement[],
      AttributeDefinitions: props.AttributeDefinitions as AttributeDefinition[],
      BillingMode: billingMode as 'PROVISIONED' | 'PAY_PER_REQUEST',
      ProvisionedThroughput: provisioned ? throughput(props.ProvisionedThroughput) : undefined,
      GlobalSecondaryIndexes: (props.GlobalSecondaryIndexes as Index[] | undefined)?.map((gsi) => ({
        IndexName: gsi.IndexName,
        KeySchema: gsi.KeySchema,
        Projection: gsi.Projection as never,
        ProvisionedThroughput: provisioned ? throughput(gsi.ProvisionedThroughput) : undefined,
      })),
      LocalSecondaryIndexes: (props.LocalSecondaryIndexes as Index[] | undefined)?.map((lsi) => ({
        IndexName: lsi.IndexName,
        KeySchema: lsi.KeySchema,
        Projection: lsi.Projection as never,
      })),
    };
    const ttl = props.TimeToLiveSpecification as { AttributeName?: string; Enabled?: unknown } | undefined;
    const ttlAttribute =
      ttl && (ttl.Enabled === true || ttl.Enabled === 'true') ? ttl.AttributeName : undefined;
    try {
      if (existing === 'recreate') await deleteTableIfExists(name);
      await dynamodb.send(new CreateTableCommand(input));
      const arn = await waitForTable(name);
      if (ttlAttribute !== undefined) {
        try {
          await dynamodb.send(
            new UpdateTimeToLiveCommand({
              TableName: name,
              TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
            }),
          );
        } catch (error) {
          warnings.push(
            `table ${name}: the emulator does not support UpdateTimeToLive (${(error as Error).name}); items never expire locally`,
          );
        }
      }
      return { logicalId, name, arn, billingMode, keySchema: input.KeySchema ?? [], ttlAttribute };
    } catch (cause) {
      throw new ProvisionError(`cannot create table ${name} (${logicalId}): ${(cause as Error).message}`, {
        cause,
        context: { logicalId, name },
      });
    }
  }

  async function deleteTableIfExists(name: string): Promise<void> {
    try {
      await dynamodb.send(new DeleteTableCommand({ TableName: name }));
    } catch (error) {
      if (isErrorNamed(error, 'ResourceNotFoundException')) return;
      throw error;
    }
    for (let i = 0; i < 300; i++) {
      try {
        await dynamodb.send(new DescribeTableCommand({ TableName: name }));
      } catch (error) {
        if (isErrorNamed(error, 'ResourceNotFoundException')) return;
        throw error;
      }
      await sleep(100);
    }
  }

  async function waitForTable(name: string): Promise<string> {
    for (let i = 0; i < 300; i++) {
      const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
      if (Table?.TableStatus === 'ACTIVE')
        return Table.TableArn ?? `arn:aws:dynamodb:${region}:${accountId}:table/${name}`;
      await sleep(i < 10 ? 10 : 100);
    }
    throw new Error(`table ${name} did not become ACTIVE within 30 s`);
  }

  function resolveMapping(
    logicalId: string,
    resource: CfnResource,
    path: string,
  ): EventSourceMappingResource | undefined {
    const props = resolver.resolve(resource.Properties ?? {}, `${path}.Properties`) as Record<
      string,
      unknown
    >;
    const sourceArn = props.EventSourceArn;
    const queue =
      typeof sourceArn === 'string'
        ? (queues.find((q) => q.arn === sourceArn) ??
          (sourceArn.startsWith('arn:') && sourceArn.split(':')[2] === 'sqs'
            ? queues.find((q) => q.name === sourceArn.split(':')[5])
            : undefined))
        : undefined;
    if (!queue) {
      warnings.push(
        `event source mapping ${logicalId} is skipped: its source ${String(sourceArn)} is not a queue of this stack`,
      );
      return undefined;
    }
    if (props.FilterCriteria !== undefined) {
      throw new TemplateResolutionError(
        `event source mapping ${logicalId} has FilterCriteria, which the local runtime does not emulate`,
        { context: { path: `${path}.Properties.FilterCriteria`, logicalId } },
      );
    }
    const functionName = String(props.FunctionName ?? '');
    const fn = [...functions.values()].find(
      (f) =>
        f.name === functionName || f.arn === functionName || f.arn === functionName.replace(/:[^:]+$/, ''),
    );
    if (!fn) {
      throw new TemplateResolutionError(
        `event source mapping ${logicalId} targets function ${functionName}, which is not in this stack`,
        { context: { path: `${path}.Properties.FunctionName`, logicalId } },
      );
    }
    const scaling = props.ScalingConfig as { MaximumConcurrency?: unknown } | undefined;
    const types = (props.FunctionResponseTypes as unknown[] | undefined) ?? [];
    return {
      logicalId,
      functionLogicalId: fn.logicalId,
      queueLogicalId: queue.logicalId,
      batchSize: props.BatchSize === undefined ? 10 : Number(props.BatchSize),
      maximumBatchingWindowSeconds:
        props.MaximumBatchingWindowInSeconds === undefined ? 0 : Number(props.MaximumBatchingWindowInSeconds),
      maximumConcurrency:
        scaling?.MaximumConcurrency === undefined ? undefined : Number(scaling.MaximumConcurrency),
      reportBatchItemFailures: types.includes('ReportBatchItemFailures'),
      enabled: props.Enabled === undefined ? true : props.Enabled === true || props.Enabled === 'true',
    };
  }
}

const PROVISIONED_TYPES = new Set([
  'AWS::SQS::Queue',
  'AWS::DynamoDB::Table',
  'AWS::DynamoDB::GlobalTable',
  'AWS::Lambda::Function',
]);

function hex12(text: string): string {
  let h = 0;
  for (const ch of text) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return h.toString(16).padStart(12, '0').slice(-12);
}
