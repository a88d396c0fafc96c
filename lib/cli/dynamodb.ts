/**
 * The DynamoDB client of a command that reads the idempotency table (`job`, `dlq show`): region,
 * profile and endpoint from the command, credentials as the SDK's environment provider reads them
 * from the command's own environment (tests pass theirs), and dummy ones on an emulator when none
 * are configured (emulators accept any; without any the SDK refuses to sign).
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { CliIo } from './io.ts';

/** Credentials for emulators, which accept any. */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** Where the client goes. */
export interface DynamodbTarget {
  /** `--profile`. */
  readonly profile?: string | undefined;
  readonly region?: string | undefined;
  /** The DynamoDB endpoint (an emulator); undefined on AWS. */
  readonly endpoint?: string | undefined;
  /** Whether the command talks to an emulator anyway (an SQS endpoint is set). @default false */
  readonly emulator?: boolean;
}

/**
 * The credentials option of a client for `target`: the command environment's keys when set (no
 * `--profile`), dummy ones on an emulator when nothing is configured, else none (the SDK's chain).
 */
export function credentialsOption(
  target: DynamodbTarget,
  io: CliIo,
): { credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } } {
  const env = io.env;
  const fromEnv =
    target.profile === undefined && env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          },
        }
      : undefined;
  return (
    fromEnv ??
    ((target.endpoint !== undefined || target.emulator === true) &&
    target.profile === undefined &&
    !env.AWS_ACCESS_KEY_ID &&
    !env.AWS_PROFILE
      ? { credentials: { ...EMULATOR_CREDENTIALS } }
      : {})
  );
}

/** A `DynamoDBClient` for `target`; the caller destroys it. */
export function createDynamodbClient(target: DynamodbTarget, io: CliIo): DynamoDBClient {
  return new DynamoDBClient({
    ...(target.region === undefined ? {} : { region: target.region }),
    ...(target.profile === undefined ? {} : { profile: target.profile }),
    ...(target.endpoint === undefined ? {} : { endpoint: target.endpoint }),
    ...credentialsOption(target, io),
  });
}

/**
 * The idempotency tables on an emulator's endpoint: every table whose name says "idempotency"
 * (case-insensitive), as the local runtime names them (`<StackName>-<LogicalId>`, the logical id of
 * an `IdempotencyTable` construct) and as `--local` picks them. Only for an emulator: on AWS an
 * account holds other projects' tables, and the stack's outputs name the table instead.
 * @returns the names, sorted; empty when none matches.
 * @throws what `ListTables` throws (endpoint unreachable).
 */
export async function idempotencyTablesAt(dynamodb: DynamoDBClient): Promise<string[]> {
  const names: string[] = [];
  let start: string | undefined;
  do {
    const page = await dynamodb.send(
      new ListTablesCommand(start === undefined ? {} : { ExclusiveStartTableName: start }),
    );
    names.push(...(page.TableNames ?? []));
    start = page.LastEvaluatedTableName;
  } while (start !== undefined);
  return names.filter((name) => /idempotency/i.test(name)).sort();
}
