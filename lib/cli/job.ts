/**
 * `sqs-jobs job <type> [key]`: a job's story, the whole chain it belongs to from the first send to
 * its last descendant (lib/ops/job-chain.ts), read from the idempotency table, with the dead
 * letters of the chain from the DLQs (read with the hold-and-release reader: nothing consumed).
 *
 * Where to look, as `sqs-jobs console` takes it: `--local` (what `sqs-jobs local --json` printed),
 * `--outputs-file` (a deployed stack's outputs), or `--idempotency-table` with `--queue-url`s or
 * `--dlq-url`s.
 *
 * Exit codes: 0 the job was found (its record, or its dead letter); 1 it was not (no record and
 * no dead letter: not run yet, run without the store, or expired); 2 could not run.
 */
import { type AttributeValue, type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import { readStackOutputs } from '../console/aws.ts';
import { dynamodbEndpointOf, opsClientConfig } from '../ops/client.ts';
import { readDeadLetters } from '../ops/dlq-reader.ts';
import { type ChainDeadLetterQueue, type ReadJobItem, walkJobChain } from '../ops/job-chain.ts';
import { jobChainJson, renderJobChain } from '../ops/job-chain-format.ts';
import { type OpsSqs, validateQueueUrl } from '../ops/queue.ts';
import { readQueueStats } from '../ops/stats.ts';
import { tableReadError } from '../ops/table-errors.ts';
import { defaultJobKey } from '../runtime/idempotency/keys.ts';
import {
  addConnectionOptions,
  type CommandRunner,
  type ConnectionFlags,
  clientInput,
  collect,
  integer,
} from './common.ts';
import { readLocalDescription } from './console.ts';
import { createDynamodbClient, EMULATOR_CREDENTIALS } from './dynamodb.ts';
import { CLI_EXIT, type CliIo } from './io.ts';

interface JobFlags extends ConnectionFlags {
  readonly source?: string;
  readonly id?: string;
  readonly local?: string;
  readonly outputsFile?: string;
  readonly stack?: string;
  readonly queueUrl?: string[];
  readonly dlqUrl?: string[];
  readonly idempotencyTable?: string[];
  readonly dynamodbEndpoint?: string;
  readonly deadLetters: boolean;
  readonly maxJobs: number;
}

const HELP_AFTER = `
Name the job by its type and key, or by its envelope (--source and --id: the key is then their
default key). A child job's source is its parent's worker's (/sqs-jobs/<queue> by default); log
lines name every job by jobType and jobId, and a child by its rootJobId and parentJobId too.

Where to look (as sqs-jobs console):
  --local <file|->          what \`sqs-jobs local --json\` printed: its table, queues and DLQs
  --outputs-file <file>     a deployed stack's outputs (cdk deploy --outputs-file outputs.json):
                            IdempotencyTableName and every <Queue>DlqUrl
  --idempotency-table <t>   the table, with --queue-url (DLQ through its RedrivePolicy) or
                            --dlq-url for the dead letters; --dynamodb-endpoint for an emulator

It prints every job of the chain, root first: its status, attempts, times, outcome, and where it is
now: done, in a DLQ with its cause, waiting for a retry, running, or queued or in flight (a message
in a queue cannot be seen without receiving it, so that is all that can be said). DLQs are read only
when a job of the chain is not done, each message held while read and made visible again, as with
\`sqs-jobs dlq list\`. Needs dynamodb:GetItem on the table (and, for DLQs, what dlq list needs).

Examples:
  npx sqs-jobs job booking.reserve-inventory --source /services/checkout --id book-42 --local local.json
  npx sqs-jobs job notifications.send-email --source /sqs-jobs/booking --id 1f0c… --outputs-file outputs.json
  npx sqs-jobs job payments.capture 'order-42' --idempotency-table jobs-idempotency --region eu-west-1
  npx sqs-jobs job booking.confirm-reservation --source /sqs-jobs/booking --id 2c9e… --local local.json --json

Exit codes: 0 found, 1 not found (no record, no dead letter), 2 could not run. See docs/operations.md
("Follow a job").`;

/** What the flags point at: tables, DLQs, endpoints. */
interface Targets {
  readonly tables: string[];
  /** DLQ URLs, and main queue URLs whose DLQ is found through their RedrivePolicy. */
  readonly dlqUrls: string[];
  readonly queueUrls: string[];
  readonly sqsEndpoint: string | undefined;
  readonly dynamodbEndpoint: string | undefined;
  readonly region: string | undefined;
}

async function targetsOf(flags: JobFlags, io: CliIo): Promise<Targets> {
  const tables = [...(flags.idempotencyTable ?? [])];
  const dlqUrls = [...(flags.dlqUrl ?? [])];
  const queueUrls = [...(flags.queueUrl ?? [])];
  for (const url of dlqUrls) validateQueueUrl(url, '--dlq-url');
  for (const url of queueUrls) validateQueueUrl(url, '--queue-url');
  if (flags.local !== undefined) {
    const description = await readLocalDescription(io, flags.local);
    if (tables.length === 0) {
      tables.push(...description.tables.filter((t) => /idempotency/i.test(t.logicalId)).map((t) => t.name));
    }
    for (const q of description.queues) if (q.deadLetterQueueUrl) dlqUrls.push(q.deadLetterQueueUrl);
    return {
      tables,
      dlqUrls,
      queueUrls,
      sqsEndpoint: flags.endpoint ?? description.endpoints.sqs,
      dynamodbEndpoint: flags.dynamodbEndpoint ?? description.endpoints.dynamodb,
      region: flags.region ?? description.region,
    };
  }
  if (flags.outputsFile !== undefined) {
    const outputs = await readStackOutputs(flags.outputsFile, flags.stack);
    if (tables.length === 0) tables.push(...outputs.idempotencyTables);
    for (const q of outputs.queues) {
      if (q.dlqUrl !== undefined) dlqUrls.push(q.dlqUrl);
      else queueUrls.push(q.url);
    }
  }
  const config = opsClientConfig(clientInput(flags, dlqUrls[0] ?? queueUrls[0], io));
  const endpoint = config.endpoint === undefined ? undefined : String(config.endpoint);
  return {
    tables,
    dlqUrls,
    queueUrls,
    sqsEndpoint: endpoint,
    dynamodbEndpoint: dynamodbEndpointOf(flags, io.env),
    region: typeof config.region === 'string' ? config.region : undefined,
  };
}

/** A strongly consistent GetItem per read; a failure is one line saying what to check. */
function itemReader(dynamodb: DynamoDBClient, endpoint: string | undefined): ReadJobItem {
  return async (table, pk) => {
    try {
      const out = await dynamodb.send(
        new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }),
      );
      return out.Item as Record<string, AttributeValue> | undefined;
    } catch (error) {
      throw tableReadError(error, table, endpoint);
    }
  };
}

/** Reads every DLQ without consuming; a DLQ that cannot be read is reported, not fatal. */
async function readDlqs(
  sqs: OpsSqs,
  targets: Targets,
  emulator: boolean,
  signal: AbortSignal | undefined,
): Promise<ChainDeadLetterQueue[]> {
  const urls = new Set(targets.dlqUrls);
  if (targets.queueUrls.length > 0) {
    const stats = await readQueueStats({ sqs, queueUrls: targets.queueUrls });
    for (const queue of stats.queues) if (queue.deadLetterQueue) urls.add(queue.deadLetterQueue.url);
  }
  const out: ChainDeadLetterQueue[] = [];
  for (const url of urls) {
    try {
      const read = await readDeadLetters({
        sqs,
        queueUrl: url,
        waitTimeSeconds: emulator ? 0 : 1,
        ...(signal === undefined ? {} : { signal }),
      });
      out.push({
        name: read.queue.name,
        messages: read.messages,
        notRead: read.notRead,
        fifo: read.queue.fifo,
      });
    } catch (error) {
      out.push({
        name: url,
        messages: [],
        notRead: 0,
        fifo: url.endsWith('.fifo'),
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return out;
}

/** Adds `job` to `program`. */
export function addJobCommand(program: Command, runner: CommandRunner): Command {
  const { io, out } = runner;
  return addConnectionOptions(
    program
      .command('job')
      .description(
        "A job's story: the whole chain it belongs to, from the first send to its last descendant, with each " +
          "job's status, attempts, times, outcome and where it is now (done, in a DLQ with its cause, queued or in flight).",
      )
      .argument('<type>', 'the job type, e.g. booking.reserve-inventory')
      .argument('[key]', "the job's idempotency key (or give --source and --id)")
      .option('--source <source>', 'the envelope source of the job (with --id: its default key)')
      .option('--id <id>', 'the envelope id of the job (the jobId of its log lines)')
      .option('--local <file|->', 'the local runtime, by what `sqs-jobs local --json` printed')
      .option('--outputs-file <file>', 'a deployed stack, by the outputs `cdk deploy --outputs-file` wrote')
      .option('--stack <name>', 'the stack of --outputs-file, when it holds several')
      .option('--idempotency-table <name>', 'idempotency table to read; repeatable', collect)
      .option(
        '--queue-url <url>',
        'a queue whose DLQ to read (found through its RedrivePolicy); repeatable',
        collect,
      )
      .option('--dlq-url <url>', 'a dead-letter queue to read; repeatable', collect)
      .option('--dynamodb-endpoint <url>', 'DynamoDB endpoint when it is not --endpoint (emulators)')
      .option('--no-dead-letters', 'do not read the DLQs (records only)')
      .option('--max-jobs <n>', 'most jobs of the chain to read', integer(1, 10_000), 200),
  )
    .addHelpText('after', HELP_AFTER)
    .action(async (type: string, key: string | undefined, flags: JobFlags) => {
      if (key !== undefined && (flags.id !== undefined || flags.source !== undefined)) {
        runner.refuse('give the key or --source and --id, not both');
        return;
      }
      if (key === undefined && (flags.id === undefined || flags.source === undefined)) {
        runner.refuse(
          flags.id !== undefined
            ? "--id needs --source: the job's envelope source (the producer's, or /sqs-jobs/<queue> for a child job)"
            : 'give the job key, or --source and --id (add --help for usage)',
        );
        return;
      }
      if ([flags.local, flags.outputsFile].filter((s) => s !== undefined).length > 1) {
        runner.refuse('give only one of --local and --outputs-file');
        return;
      }
      const jobKey = key ?? defaultJobKey(flags.source as string, flags.id as string);
      await runner.run(async () => {
        const targets = await targetsOf(flags, io);
        if (targets.tables.length === 0) {
          throw new RangeError(
            'no idempotency table: give --idempotency-table, --local or --outputs-file (its IdempotencyTableName)',
          );
        }
        const emulator = targets.sqsEndpoint !== undefined;
        const dynamodb = createDynamodbClient(
          {
            profile: flags.profile,
            region: targets.region,
            endpoint: targets.dynamodbEndpoint,
            emulator,
          },
          io,
        );
        const input = {
          ...clientInput(flags, targets.dlqUrls[0] ?? targets.queueUrls[0], io),
          ...(targets.sqsEndpoint === undefined ? {} : { endpoint: targets.sqsEndpoint }),
          ...(targets.region === undefined ? {} : { region: targets.region }),
        };
        let sqs: (OpsSqs & { destroy?(): void }) | undefined;
        try {
          const readsDlqs = flags.deadLetters && (targets.dlqUrls.length > 0 || targets.queueUrls.length > 0);
          const chain = await walkJobChain({
            tables: targets.tables,
            readItem: itemReader(dynamodb, targets.dynamodbEndpoint),
            start: { type, key: jobKey },
            maxJobs: flags.maxJobs,
            ...(io.nowMs === undefined ? {} : { now: io.nowMs }),
            ...(readsDlqs
              ? {
                  deadLetters: () => {
                    sqs = (io.createSqs ?? ((i) => defaultSqs(i, emulator, io)))(input);
                    return readDlqs(sqs, targets, emulator, io.signal);
                  },
                }
              : {}),
          });
          out(flags.json ? `${JSON.stringify(jobChainJson(chain), null, 2)}\n` : renderJobChain(chain));
          const asked = chain.jobs.find((j) => j.asked);
          return asked !== undefined && (asked.status !== undefined || asked.deadLetter !== undefined)
            ? CLI_EXIT.ok
            : CLI_EXIT.problems;
        } finally {
          dynamodb.destroy();
          sqs?.destroy?.();
        }
      });
    });
}

/** The SQS client of the flags, with dummy credentials on an emulator when none are configured. */
function defaultSqs(
  input: Parameters<typeof opsClientConfig>[0],
  emulator: boolean,
  io: CliIo,
): OpsSqs & { destroy?(): void } {
  const config = opsClientConfig(input);
  const dummy =
    emulator && input.profile === undefined && !io.env.AWS_ACCESS_KEY_ID && !io.env.AWS_PROFILE
      ? { credentials: EMULATOR_CREDENTIALS }
      : {};
  return new SQSClient({ ...config, ...dummy });
}
