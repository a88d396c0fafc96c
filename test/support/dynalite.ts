/**
 * Starts the embedded DynamoDB emulator dynalite (in-process, in-memory) on a free port and
 * creates tables on it. For integration tests; any test may reuse it.
 *
 * dynalite 4 differs from DynamoDB (see /work/shared/TOOLCHAIN.md): a failed condition does not
 * return `Item` even with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`; no
 * `UpdateTimeToLive` (TTL is not enabled here, and nothing ever expires on its own); no
 * transactions.
 *
 * @example
 * const db = await startDynalite();
 * const tableName = await db.createTable({ name: 'idempotency' });
 * // ... new DynamoIdempotencyStore({ tableName, client: db.client })
 * await db.stop();
 */

import { randomUUID } from 'node:crypto';
import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { startDynalite as startServer } from '../../lib/local/emulators.ts';

/** Table to create. */
export interface TableSpec {
  /** @default `idempotency-<random>` */
  readonly name?: string;
  /** Partition key, String. @default 'pk' (the idempotency table contract) */
  readonly partitionKey?: string;
  /** Sort key, String; none when absent (e.g. `'sk'` for the sample app table). */
  readonly sortKey?: string;
}

/** A running dynalite and a client pointed at it. */
export interface DynaliteHandle {
  /** `http://127.0.0.1:<port>`; set `AWS_ENDPOINT_URL` to it for code that builds its own client. */
  readonly endpoint: string;
  /** DynamoDB client for this endpoint (region us-east-1, dummy credentials, no SDK retries). */
  readonly client: DynamoDBClient;
  /** Creates an on-demand table and waits until it is ACTIVE; returns its name. */
  createTable(spec?: TableSpec): Promise<string>;
  /** Destroys the client and closes the server. */
  stop(): Promise<void>;
}

/** Starts dynalite (lib/local/emulators.ts) and a client pointed at it. */
export async function startDynalite(): Promise<DynaliteHandle> {
  const server = await startServer();
  const client = createClient(server.url);
  return {
    endpoint: server.url,
    client,
    createTable: (spec) => createTable(client, spec),
    async stop() {
      client.destroy();
      await server.stop();
    },
  };
}

/** A DynamoDB client for an emulator endpoint: fixed region, dummy credentials, one attempt. */
export function createClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
}

/** Creates an on-demand table with String keys and waits until it is ACTIVE. */
export async function createTable(client: DynamoDBClient, spec: TableSpec = {}): Promise<string> {
  const name = spec.name ?? `idempotency-${randomUUID().slice(0, 8)}`;
  const partitionKey = spec.partitionKey ?? 'pk';
  const keys: KeySchemaElement[] = [{ AttributeName: partitionKey, KeyType: 'HASH' }];
  const attributes: AttributeDefinition[] = [{ AttributeName: partitionKey, AttributeType: 'S' }];
  if (spec.sortKey !== undefined) {
    keys.push({ AttributeName: spec.sortKey, KeyType: 'RANGE' });
    attributes.push({ AttributeName: spec.sortKey, AttributeType: 'S' });
  }
  await client.send(
    new CreateTableCommand({
      TableName: name,
      KeySchema: keys,
      AttributeDefinitions: attributes,
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  for (let i = 0; i < 100; i++) {
    const out = await client.send(new DescribeTableCommand({ TableName: name }));
    if (out.Table?.TableStatus === 'ACTIVE') return name;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`table ${name} did not become ACTIVE on dynalite`);
}
