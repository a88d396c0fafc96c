/**
 * `AWS::DynamoDB::Table` and `AWS::DynamoDB::GlobalTable`: CreateTable with key schema,
 * attribute definitions, billing mode and secondary indexes, waits until ACTIVE, then sets TTL
 * when the emulator knows UpdateTimeToLive (a warning otherwise). `Ref` = table name;
 * `Fn::GetAtt` `Arn`, `StreamArn`, `TableId`.
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
import { ProvisionError } from '../errors.ts';
import type { CfnResource } from '../template-resolver.ts';
import { isErrorNamed } from './aws-errors.ts';
import type { ProvisionContext } from './context.ts';
import { generatedName } from './names.ts';
import type { ResourceValue } from './resource-values.ts';

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

const TABLE_NAME_MAX = 255;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What `Ref` and `Fn::GetAtt` of a created table return. */
export function tableValue(table: ProvisionedTable): ResourceValue {
  return {
    ref: table.name,
    atts: {
      Arn: table.arn,
      StreamArn: `${table.arn}/stream/1970-01-01T00:00:00.000`,
      TableId: table.name,
    },
  };
}

/**
 * Creates the table of template resource `logicalId` (at template path `path`), after deleting a
 * table of the same name when `ctx.existing` is `recreate`; waits up to 30 s for it to be ACTIVE.
 * @throws {TemplateResolutionError} when a property cannot resolve.
 * @throws {ProvisionError} when the emulator refuses it (its error as `cause`).
 */
export async function createTable(
  ctx: ProvisionContext,
  dynamodb: DynamoDBClient,
  logicalId: string,
  resource: CfnResource,
  path: string,
): Promise<ProvisionedTable> {
  const props = ctx.resolver.resolve(resource.Properties ?? {}, `${path}.Properties`) as Record<
    string,
    unknown
  >;
  const name =
    typeof props.TableName === 'string'
      ? props.TableName
      : generatedName(ctx.stackName, logicalId, TABLE_NAME_MAX);
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
    if (ctx.existing === 'recreate') await deleteTableIfExists(dynamodb, name);
    await dynamodb.send(new CreateTableCommand(input));
    const arn = await waitForTable(ctx, dynamodb, name);
    if (ttlAttribute !== undefined) {
      try {
        await dynamodb.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
          }),
        );
      } catch (error) {
        ctx.warnings.push(
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

async function deleteTableIfExists(dynamodb: DynamoDBClient, name: string): Promise<void> {
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

async function waitForTable(ctx: ProvisionContext, dynamodb: DynamoDBClient, name: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE')
      return Table.TableArn ?? `arn:aws:dynamodb:${ctx.region}:${ctx.accountId()}:table/${name}`;
    await sleep(i < 10 ? 10 : 100);
  }
  throw new Error(`table ${name} did not become ACTIVE within 30 s`);
}
