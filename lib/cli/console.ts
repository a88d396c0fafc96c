/**
 * `sqs-jobs console`: a web console for queues, dead letters and jobs (lib/console/), until
 * Ctrl-C. It works against
 * - the local runtime: `--local <file|->`, the JSON `sqs-jobs local --json` printed (or
 *   `sqs-jobs local --console`, which serves it in the same process);
 * - a deployed stack: `--outputs-file outputs.json` as `cdk deploy --outputs-file` writes it
 *   (`--stack` when it holds several), or `--queue-url`s; credentials from the AWS default chain
 *   or `--profile`;
 * - any other SQS endpoint: `--queue-url`s with `--endpoint` (and `--dynamodb-endpoint`).
 *
 * Exit codes: 0 stopped with Ctrl-C; 2 could not start (flags, files, port in use).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { Command } from 'commander';
import {
  cloudWatchAlarms,
  cloudWatchCompletions,
  createCloudWatchClient,
  readStackOutputs,
} from '../console/aws.ts';
import { ConsoleBackend } from '../console/backend.ts';
import { localDescriptionSetup } from '../console/local.ts';
import { type ConsoleServer, startConsoleServer } from '../console/server.ts';
import type { ConsoleQueue, ConsoleSetup } from '../console/setup.ts';
import type { LocalRuntimeDescription } from '../local/serve.ts';
import { dynamodbEndpointOf, opsClientConfig, schedulerEndpointOf } from '../ops/client.ts';
import { cloudWatchOldestAges, loadCloudWatchReader, type MetricDataReader } from '../ops/oldest-age.ts';
import { validateQueueUrl } from '../ops/queue.ts';
import {
  addConnectionOptions,
  type CommandRunner,
  type ConnectionFlags,
  clientInput,
  collect,
  integer,
} from './common.ts';
import { CLI_EXIT, type CliIo } from './io.ts';

interface ConsoleFlags extends ConnectionFlags {
  readonly local?: string;
  readonly outputsFile?: string;
  readonly stack?: string;
  readonly queueUrl?: string[];
  readonly idempotencyTable?: string[];
  readonly dynamodbEndpoint?: string;
  readonly schedulerEndpoint?: string;
  readonly scheduleGroup?: string[];
  readonly alarmPrefix?: string;
  readonly host: string;
  readonly port: number;
  readonly readOnly: boolean;
}

/** Address the console listens on unless told otherwise: this machine only. */
export const DEFAULT_CONSOLE_HOST = '127.0.0.1';

const HELP_AFTER = `
Pick what to look at (one of):
  --local <file|->          what \`sqs-jobs local --json\` printed (a file, or - for stdin)
  --outputs-file <file>     a deployed stack's outputs (cdk deploy --outputs-file outputs.json):
                            every <Queue>QueueUrl with its <Queue>DlqUrl, and IdempotencyTableName
  --queue-url <url> ...     queues by URL (their DLQs are found through the RedrivePolicy); add
                            --idempotency-table for job lookups, --endpoint for an emulator

On AWS the console also reads, when allowed: the age of the oldest message
(cloudwatch:GetMetricData), completions per minute (the workers' SqsJobs JobCompleted metric,
cloudwatch:ListMetrics) and alarm states (cloudwatch:DescribeAlarms, alarms named <stack>-*).
Job lookups need dynamodb:GetItem on the idempotency table. Redrive needs what \`sqs-jobs dlq
redrive\` needs; --read-only hides it. The schedules page reads EventBridge Scheduler
(scheduler:ListScheduleGroups, ListSchedules, GetSchedule) and Scans the table; its cancel and
fire-now buttons need what \`sqs-jobs schedules cancel|fire\` needs; --read-only hides them too.

Safety: it listens on 127.0.0.1 (--host to change), and every request needs the random token of
this start, in the printed URL; treat that URL like a password. Reading a DLQ never deletes:
messages are held while read and made visible again, as with \`sqs-jobs dlq list\`.

Examples:
  npx sqs-jobs local --console                               # your stack locally, with the console
  npx sqs-jobs local --json > local.json & npx sqs-jobs console --local local.json
  npx sqs-jobs console --outputs-file outputs.json --profile prod --read-only
  npx sqs-jobs console --queue-url $QUEUE --idempotency-table $TABLE --region eu-west-1

Exit codes: 0 stopped with Ctrl-C, 2 could not start. See docs/operations.md ("Console").`;

/** What `sqs-jobs local --json` printed, from a file or stdin (`-`). @throws {RangeError} when it holds none. */
export async function readLocalDescription(io: CliIo, source: string): Promise<LocalRuntimeDescription> {
  let text: string;
  if (source === '-') {
    if (io.readStdin === undefined) throw new RangeError('--local -: stdin cannot be read here');
    text = await io.readStdin();
  } else {
    const { readFile } = await import('node:fs/promises');
    try {
      text = await readFile(source, 'utf8');
    } catch (error) {
      throw new RangeError(`--local: cannot read ${source} (${(error as Error).message})`);
    }
  }
  // `sqs-jobs local --json` prints one JSON object; take the first line that is one.
  for (const line of text.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      const parsed = JSON.parse(line) as Partial<LocalRuntimeDescription>;
      if (parsed.endpoints?.sqs && Array.isArray(parsed.queues)) return parsed as LocalRuntimeDescription;
    } catch {
      // not this line
    }
  }
  throw new RangeError(`--local: ${source} holds no output of sqs-jobs local --json`);
}

/** The setup for a deployed stack or explicit queue URLs. */
async function remoteSetup(flags: ConsoleFlags, io: CliIo): Promise<ConsoleSetup> {
  let queues: ConsoleQueue[];
  let tables = [...(flags.idempotencyTable ?? [])];
  let title: string;
  let stackName: string | undefined;
  if (flags.outputsFile !== undefined) {
    const outputs = await readStackOutputs(flags.outputsFile, flags.stack);
    queues = outputs.queues;
    if (tables.length === 0) tables = outputs.idempotencyTables;
    stackName = outputs.stackName;
    title = outputs.stackName;
  } else {
    const urls = flags.queueUrl ?? [];
    const seen = new Set<string>();
    queues = urls.map((url) => {
      const name = validateQueueUrl(url, '--queue-url');
      const id = seen.has(name) ? url : name;
      seen.add(name);
      return { id, url };
    });
    title = queues.map((q) => q.id).join(', ');
  }
  const input = clientInput(flags, queues[0]?.url, io);
  const config = opsClientConfig(input);
  const endpoint = config.endpoint === undefined ? undefined : String(config.endpoint);
  const region = typeof config.region === 'string' ? config.region : undefined;
  const emulator = endpoint !== undefined;
  // Emulators accept any credentials; without any configured the SDK would refuse to sign.
  const dummy =
    emulator && flags.profile === undefined && !io.env.AWS_ACCESS_KEY_ID && !io.env.AWS_PROFILE
      ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {};
  const sqs = io.createSqs
    ? io.createSqs(input)
    : new (await import('@aws-sdk/client-sqs')).SQSClient({ ...config, ...dummy });
  const dynamoEndpoint = dynamodbEndpointOf(flags, io.env);
  const dynamodb =
    tables.length === 0
      ? undefined
      : new DynamoDBClient({
          ...(region === undefined ? {} : { region }),
          ...(flags.profile === undefined ? {} : { profile: flags.profile }),
          ...(dynamoEndpoint === undefined ? {} : { endpoint: dynamoEndpoint }),
          ...dummy,
        });
  // The schedules page: AWS's Scheduler, or an emulator's when one is named (never SQS's endpoint).
  const schedulerEndpoint = schedulerEndpointOf({ schedulerEndpoint: flags.schedulerEndpoint }, io.env);
  const scheduler =
    emulator && schedulerEndpoint === undefined
      ? undefined
      : new SchedulerClient({
          ...(region === undefined ? {} : { region }),
          ...(flags.profile === undefined ? {} : { profile: flags.profile }),
          ...(schedulerEndpoint === undefined ? {} : { endpoint: schedulerEndpoint }),
          ...dummy,
        });
  const notes: string[] = [];
  let metrics: MetricDataReader | undefined;
  let cloudWatch: ReturnType<typeof createCloudWatchClient> | undefined;
  const extra: Partial<ConsoleSetup> = {};
  if (emulator) {
    notes.push(
      `endpoint ${endpoint}: the age of the oldest message, completions and alarms are CloudWatch's and not available here`,
    );
  } else {
    try {
      metrics = await (
        io.createMetrics ??
        ((i) => loadCloudWatchReader(opsClientConfig(i), () => import('@aws-sdk/client-cloudwatch')))
      )(input);
      Object.assign(extra, { oldestAge: cloudWatchOldestAges(metrics) });
    } catch (error) {
      notes.push(`age of the oldest message: ${(error as Error).message}`);
    }
    cloudWatch = createCloudWatchClient({
      ...(region === undefined ? {} : { region }),
      ...(flags.profile === undefined ? {} : { profile: flags.profile }),
    });
    Object.assign(extra, { completions: cloudWatchCompletions(cloudWatch) });
    const prefix = flags.alarmPrefix ?? (stackName === undefined ? undefined : `${stackName}-`);
    if (prefix !== undefined) Object.assign(extra, { alarms: cloudWatchAlarms(cloudWatch, prefix) });
    else notes.push('alarm states: give --outputs-file (alarms named <stack>-*) or --alarm-prefix');
  }
  if (tables.length === 0) notes.push('job lookups: no idempotency table given (--idempotency-table)');
  return {
    mode: emulator ? 'endpoint' : 'aws',
    title,
    region,
    sqs,
    dynamodb,
    queues,
    idempotencyTables: tables,
    notes,
    ...(scheduler === undefined ? {} : { scheduler }),
    ...(flags.scheduleGroup === undefined ? {} : { scheduleGroups: flags.scheduleGroup }),
    ...extra,
    close() {
      (sqs as { destroy?(): void }).destroy?.();
      dynamodb?.destroy();
      scheduler?.destroy();
      metrics?.destroy?.();
      cloudWatch?.destroy();
    },
  };
}

/** Prints where the console is. */
export function renderConsoleStart(server: ConsoleServer, setup: ConsoleSetup, readOnly: boolean): string {
  return [
    `sqs-jobs console for ${setup.title}: ${setup.queues.length} queue${setup.queues.length === 1 ? '' : 's'}${readOnly ? ', read-only' : ''}`,
    '',
    `  ${server.url}`,
    '',
    'Open it in a browser. The token in the URL is the key to this console until it stops: do not share it.',
    'Ctrl-C stops it.',
    '',
  ].join('\n');
}

/** Waits until the signal aborts. */
export function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Adds `console` to `program`. */
export function addConsoleCommand(program: Command, runner: CommandRunner): Command {
  const { io, out } = runner;
  return addConnectionOptions(
    program
      .command('console')
      .description(
        'Serve a web console for queues (depths, chart, alarms), dead letters (grouped by cause, redrive with a dry run ' +
          'first) and jobs (idempotency record, steps, evidence), on the local runtime or a deployed stack, until Ctrl-C.',
      )
      .option('--local <file|->', 'the local runtime, by what `sqs-jobs local --json` printed')
      .option('--outputs-file <file>', 'a deployed stack, by the outputs `cdk deploy --outputs-file` wrote')
      .option('--stack <name>', 'the stack of --outputs-file, when it holds several')
      .option(
        '--queue-url <url>',
        'a queue to show (its DLQ is found through its redrive policy); repeatable',
        collect,
      )
      .option('--idempotency-table <name>', 'idempotency table for job lookups; repeatable', collect)
      .option('--dynamodb-endpoint <url>', 'DynamoDB endpoint when it is not --endpoint (emulators)')
      .option(
        '--scheduler-endpoint <url>',
        'EventBridge Scheduler endpoint for the schedules page (default AWS_ENDPOINT_URL_SCHEDULER, else AWS)',
      )
      .option(
        '--schedule-group <name>',
        'schedule group the schedules page shows; repeatable (default: every group but `default`)',
        collect,
      )
      .option(
        '--alarm-prefix <prefix>',
        'show the CloudWatch alarms whose names start with this (default: <stack>-)',
      )
      .option('--host <address>', 'address to listen on', DEFAULT_CONSOLE_HOST)
      .option('--port <n>', 'port to listen on (0: any free port)', integer(0, 65_535), 0)
      .option('--read-only', 'no redrive: the console only reads', false),
  )
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: ConsoleFlags) => {
      const sources = [flags.local, flags.outputsFile, flags.queueUrl?.length ? 'urls' : undefined].filter(
        (s) => s !== undefined,
      );
      if (sources.length !== 1) {
        runner.refuse(
          sources.length === 0
            ? 'console needs one of --local <file>, --outputs-file <file> or --queue-url <url> (add --help for usage)'
            : 'give only one of --local, --outputs-file and --queue-url',
        );
        return;
      }
      await runner.run(async () => {
        let setup: ConsoleSetup;
        if (flags.local !== undefined) {
          setup = localDescriptionSetup(await readLocalDescription(io, flags.local), {
            ...(flags.idempotencyTable ? { idempotencyTables: flags.idempotencyTable } : {}),
          });
        } else {
          setup = await remoteSetup(flags, io);
        }
        let server: ConsoleServer | undefined;
        try {
          try {
            server = await startConsoleServer({
              backend: new ConsoleBackend(setup, { readOnly: flags.readOnly }),
              host: flags.host,
              port: flags.port,
            });
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
              throw new RangeError(
                `cannot listen on ${flags.host}:${flags.port} (${code}): pick another --port or --host`,
              );
            }
            throw error;
          }
          out(
            flags.json
              ? `${JSON.stringify({ url: server.url, readOnly: flags.readOnly })}\n`
              : renderConsoleStart(server, setup, flags.readOnly),
          );
          await untilAborted(io.signal);
          return CLI_EXIT.ok;
        } finally {
          await server?.close();
          await setup.close?.();
        }
      });
    });
}
