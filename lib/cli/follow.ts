/**
 * The command `sqs-jobs dlq show` prints to follow a dead letter's chain (`sqs-jobs job`),
 * complete so that pasting it works: the CLI as it was started, the job, the DLQ it is in, the
 * idempotency table(s), the endpoints when emulators are in use, and `--region` / `--profile` when
 * the job command could not find them by itself.
 */

import { shellWord } from '../core/shell-word.ts';
import { dynamodbEndpointOf, type OpsClientInput, opsClientConfig } from '../ops/client.ts';
import type { FollowCommand } from '../ops/format.ts';
import { regionFromQueueUrl } from '../ops/queue.ts';
import { createDynamodbClient, idempotencyTablesAt } from './dynamodb.ts';
import type { CliIo } from './io.ts';

/** What stands in for the table when it is not known (the stack output that names it). */
export const TABLE_PLACEHOLDER = '<IdempotencyTableName>';

/** The flags of `dlq show` that say where the job's records are. */
export interface FollowFlags {
  readonly dlqUrl: string;
  readonly endpoint?: string;
  readonly profile?: string;
  /** `--idempotency-table`: the tables to name. @default the emulator's idempotency tables */
  readonly idempotencyTable?: readonly string[];
  readonly dynamodbEndpoint?: string;
}

/** A follow command, and what the operator must know about it. */
export interface Follow {
  readonly command: FollowCommand;
  /** Lines to print after the messages (empty when the command is complete). */
  readonly notes: readonly string[];
}

/**
 * How the operator started this CLI, for commands to paste: `npm run sqs-jobs --` under that npm
 * script (this repository), `npx sqs-jobs` under npx, else `sqs-jobs`. From the variables npm sets
 * for the processes it starts (`npm_lifecycle_event`: the script's name, `npx` under npx).
 */
export function cliCommand(env: Readonly<Record<string, string | undefined>>): string {
  if (env.npm_lifecycle_event === 'sqs-jobs' || env.npm_lifecycle_event === 'dlq')
    return 'npm run sqs-jobs --';
  if (env.npm_lifecycle_event === 'npx') return 'npx sqs-jobs';
  return 'sqs-jobs';
}

/**
 * The follow command for the messages of `flags.dlqUrl` read with the client `input`. Tables:
 * `--idempotency-table`, else, when a DynamoDB endpoint is in use (an emulator), its tables named
 * like an idempotency table ({@link idempotencyTablesAt}); else (AWS) {@link TABLE_PLACEHOLDER}
 * and a note saying how to fill it in.
 * @throws {InvalidQueueUrlError} when the DynamoDB endpoint (flag or environment) is not an http(s) URL.
 */
export async function followFor(flags: FollowFlags, input: OpsClientInput, io: CliIo): Promise<Follow> {
  const config = opsClientConfig(input);
  const sqsEndpoint = config.endpoint === undefined ? undefined : String(config.endpoint);
  const region = typeof config.region === 'string' ? config.region : undefined;
  const dynamodbEndpoint = dynamodbEndpointOf(flags, io.env);
  const notes: string[] = [];
  let tables = [...(flags.idempotencyTable ?? [])];
  if (tables.length === 0 && dynamodbEndpoint !== undefined) {
    const dynamodb = createDynamodbClient(
      { profile: flags.profile, region, endpoint: dynamodbEndpoint, emulator: true },
      io,
    );
    try {
      tables = await idempotencyTablesAt(dynamodb);
    } catch (error) {
      notes.push(
        `note: could not list the tables at ${dynamodbEndpoint} (${error instanceof Error ? error.message : String(error)})`,
      );
    } finally {
      dynamodb.destroy();
    }
  }
  if (tables.length === 0) {
    notes.push(
      `note: replace ${TABLE_PLACEHOLDER} in "follow its chain" with the idempotency table (the stack output IdempotencyTableName), or give it to dlq show with --idempotency-table`,
    );
  }
  const where = [
    `--dlq-url ${shellWord(flags.dlqUrl)}`,
    ...(tables.length === 0
      ? [`--idempotency-table ${TABLE_PLACEHOLDER}`]
      : tables.map((t) => `--idempotency-table ${shellWord(t)}`)),
    ...(sqsEndpoint === undefined ? [] : [`--endpoint ${shellWord(sqsEndpoint)}`]),
    // `job` takes --endpoint for DynamoDB too when --dynamodb-endpoint is not given.
    ...(dynamodbEndpoint === undefined || dynamodbEndpoint === sqsEndpoint
      ? []
      : [`--dynamodb-endpoint ${shellWord(dynamodbEndpoint)}`]),
    // On AWS the DLQ URL names the region; elsewhere the region this command used.
    ...(region === undefined || regionFromQueueUrl(flags.dlqUrl) === region
      ? []
      : [`--region ${shellWord(region)}`]),
    ...(flags.profile === undefined ? [] : [`--profile ${shellWord(flags.profile)}`]),
  ].join(' ');
  const cli = cliCommand(io.env);
  return {
    command: (job) =>
      `${cli} job ${shellWord(job.type)} --source ${shellWord(job.source)} --id ${shellWord(job.id)} ${where}`,
    notes,
  };
}
