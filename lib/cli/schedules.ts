/**
 * `sqs-jobs schedules list|show|cancel|fire`: jobs sent for later and recurring schedules
 * (lib/ops/schedules.ts reads and cancels, lib/ops/fire-schedule.ts fires, lib/ops/schedules-format.ts
 * renders). Works against the local runtime (`--local`, or the endpoints `sqs-jobs local` prints)
 * and AWS alike.
 *
 * Exit codes: 0 done; 1 done with a negative answer (show: nothing of that name; cancel: not found
 * or already started); 2 could not run (bad flags, unreachable endpoint, missing table...).
 */
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import { readStackOutputs } from '../console/aws.ts';
import {
  dynamodbEndpointOf,
  EMULATOR_DEFAULT_REGION,
  opsClientConfig,
  schedulerEndpointOf,
} from '../ops/client.ts';
import { OpsError } from '../ops/errors.ts';
import { fireScheduleNow } from '../ops/fire-schedule.ts';
import {
  cancelScheduledJob,
  DEFAULT_NEXT_FIRINGS,
  DEFAULT_RECENT_FIRINGS,
  listScheduleGroups,
  listSchedules,
  type SchedulesSource,
  schedulerError,
  showSchedule,
} from '../ops/schedules.ts';
import {
  renderCancel,
  renderFired,
  renderScheduleDetail,
  renderSchedulesList,
} from '../ops/schedules-format.ts';
import {
  addConnectionOptions,
  type CommandRunner,
  type ConnectionFlags,
  collect,
  integer,
} from './common.ts';
import { readLocalDescription } from './console.ts';
import { createDynamodbClient, credentialsOption } from './dynamodb.ts';
import { CLI_EXIT, type CliIo } from './io.ts';

interface SchedulesFlags extends ConnectionFlags {
  readonly group?: string[];
  readonly local?: string;
  readonly outputsFile?: string;
  readonly stack?: string;
  readonly idempotencyTable?: string;
  readonly schedulerEndpoint?: string;
  readonly dynamodbEndpoint?: string;
  readonly source?: string;
  readonly next?: number;
  readonly recent?: number;
  readonly timeZone?: string;
}

const HELP_AFTER = `
Where to look:
  --local <file|->            what \`sqs-jobs local --json\` printed: its Scheduler, table and SQS
  --scheduler-endpoint <url>  an EventBridge Scheduler emulator (default AWS_ENDPOINT_URL_SCHEDULER,
                              which \`sqs-jobs local\` prints), else AWS
  --group <name>              a schedule group (jobQueue.scheduleGroupName); repeatable
                              (default: every group at the endpoint except \`default\`)
  --idempotency-table <name>  the table keeping each job's state (stack output IdempotencyTableName;
                              or --outputs-file): pending jobs, cancel, recent firings

Pending one-time jobs are read from their state items in the table (one Scan: reads the whole
table); without the table, from the groups' one-time schedules (sj-...), which miss jobs that travel
as delayed SQS messages. EventBridge Scheduler keeps no history of firings: recent firings are the
job records of the jobs a schedule sent (ids <name>@<scheduled time>); a firing Scheduler could not
deliver is in the schedule dead-letter queue (sqs-jobs dlq list --dlq-url <its URL>).

Examples:
  npx sqs-jobs schedules list --local local.json
  npx sqs-jobs schedules show nightly-invoices --group jobs-booking --idempotency-table jobs-idem
  npx sqs-jobs schedules cancel hold-b-42 --source /services/booking --local local.json
  npx sqs-jobs schedules fire nightly-invoices --group jobs-booking --region eu-west-1

Exit codes: 0 done, 1 not found (show, cancel) or too late to cancel, 2 could not run.
See docs/operations.md ("Schedules").`;

/** The clients and names the flags point at. */
interface Resolved {
  readonly source: SchedulesSource;
  readonly region: string | undefined;
  readonly sqsEndpoint: string | undefined;
  readonly emulator: boolean;
  close(): void;
}

async function resolve(flags: SchedulesFlags, io: CliIo): Promise<Resolved> {
  let schedulerEndpoint: string | undefined;
  let dynamodbEndpoint: string | undefined;
  let sqsEndpoint: string | undefined;
  let region = flags.region;
  let table = flags.idempotencyTable;
  if (flags.local !== undefined) {
    const description = await readLocalDescription(io, flags.local);
    if (description.endpoints.scheduler === undefined)
      throw new RangeError(
        '--local: this output names no Scheduler endpoint (printed by a version before schedules ran locally): run sqs-jobs local again',
      );
    schedulerEndpoint = flags.schedulerEndpoint ?? description.endpoints.scheduler;
    dynamodbEndpoint = flags.dynamodbEndpoint ?? description.endpoints.dynamodb;
    sqsEndpoint = flags.endpoint ?? description.endpoints.sqs;
    region ??= description.region;
    table ??= description.tables.find((t) => /idempotency/i.test(t.logicalId))?.name;
  } else {
    if (flags.outputsFile !== undefined && table === undefined)
      table = (await readStackOutputs(flags.outputsFile, flags.stack)).idempotencyTables[0];
    schedulerEndpoint = schedulerEndpointOf(flags, io.env);
    dynamodbEndpoint = dynamodbEndpointOf(flags, io.env);
    const sqsConfig = opsClientConfig({ endpoint: flags.endpoint, region: flags.region, env: io.env });
    sqsEndpoint = sqsConfig.endpoint === undefined ? undefined : String(sqsConfig.endpoint);
  }
  const emulator =
    schedulerEndpoint !== undefined || dynamodbEndpoint !== undefined || sqsEndpoint !== undefined;
  region ??=
    io.env.AWS_REGION || io.env.AWS_DEFAULT_REGION || (emulator ? EMULATOR_DEFAULT_REGION : undefined);
  const common = {
    ...(region === undefined ? {} : { region }),
    ...(flags.profile === undefined ? {} : { profile: flags.profile }),
  };
  const scheduler = new SchedulerClient({
    ...common,
    ...(schedulerEndpoint === undefined ? {} : { endpoint: schedulerEndpoint }),
    ...credentialsOption({ profile: flags.profile, endpoint: schedulerEndpoint, emulator }, io),
  });
  const dynamodb =
    table === undefined
      ? undefined
      : createDynamodbClient({ profile: flags.profile, region, endpoint: dynamodbEndpoint, emulator }, io);
  let groups = flags.group ?? [];
  try {
    if (groups.length === 0) groups = await listScheduleGroups(scheduler, schedulerEndpoint);
  } catch (error) {
    scheduler.destroy();
    dynamodb?.destroy();
    throw error;
  }
  return {
    source: {
      scheduler,
      groups,
      dynamodb,
      table,
      dynamodbEndpoint,
      schedulerEndpoint,
    },
    region,
    sqsEndpoint,
    emulator,
    close() {
      scheduler.destroy();
      dynamodb?.destroy();
    },
  };
}

/** The operator's time zone: `--time-zone`, else `TZ`, else the system's. @throws {RangeError} when unknown. */
function localTimeZone(flags: SchedulesFlags, io: CliIo): string {
  const zone = flags.timeZone ?? (io.env.TZ || undefined) ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    throw new RangeError(`--time-zone: "${zone}" is not an IANA time zone (e.g. Europe/Berlin, UTC)`);
  }
  return zone;
}

/** The flags every subcommand has. */
function addWhereOptions(command: Command): Command {
  return addConnectionOptions(
    command
      .option('--group <name>', 'schedule group (jobQueue.scheduleGroupName); repeatable', collect)
      .option('--local <file|->', 'the local runtime, by what `sqs-jobs local --json` printed')
      .option('--outputs-file <file>', 'a deployed stack: its IdempotencyTableName output')
      .option('--stack <name>', 'the stack of --outputs-file, when it holds several')
      .option('--idempotency-table <name>', "the idempotency table keeping each job's state")
      .option(
        '--scheduler-endpoint <url>',
        'EventBridge Scheduler endpoint (default AWS_ENDPOINT_URL_SCHEDULER)',
      )
      .option('--dynamodb-endpoint <url>', 'DynamoDB endpoint when it is not --endpoint (emulators)')
      .option(
        '--time-zone <zone>',
        "IANA zone for times that are not a schedule's own (default TZ, else the system's)",
      ),
  );
}

/** Adds `schedules` to `program`. */
export function addSchedulesCommand(program: Command, runner: CommandRunner): Command {
  const { io, out } = runner;
  const nowMs = io.nowMs ?? Date.now;
  const schedules = program
    .command('schedules')
    .description(
      'Jobs sent for later and recurring schedules: list them (pending jobs, next firings in their time zone), ' +
        'show one (with its recent firings), cancel a pending job, fire a recurring schedule now.',
    )
    .addHelpText('after', HELP_AFTER);

  /** Runs `body` with the resolved clients, closed afterwards. */
  const withSource = (flags: SchedulesFlags, body: (r: Resolved, zone: string) => Promise<number>) =>
    runner.run(async () => {
      const zone = localTimeZone(flags, io);
      const resolved = await resolve(flags, io);
      try {
        return await body(resolved, zone);
      } finally {
        resolved.close();
      }
    });

  addWhereOptions(
    schedules
      .command('list')
      .description(
        'Pending one-time jobs (when, which job, for whom) and recurring schedules with their next firings.',
      )
      .option('--next <n>', 'next firings per recurring schedule', integer(1, 100), DEFAULT_NEXT_FIRINGS),
  )
    .addHelpText('after', HELP_AFTER)
    .action((flags: SchedulesFlags) =>
      withSource(flags, async ({ source }, zone) => {
        const list = await listSchedules(source, { next: flags.next, nowMs: nowMs() });
        out(flags.json ? `${JSON.stringify(list, null, 2)}\n` : renderSchedulesList(list, zone));
        return CLI_EXIT.ok;
      }),
    );

  addWhereOptions(
    schedules
      .command('show')
      .description(
        'One recurring schedule (target, input, retry policy, DLQ, next firings, recent firings) or one job sent for later (its state and schedule).',
      )
      .argument(
        '<name|job id>',
        'a schedule name, a one-time schedule (sj-...) or the id of a job sent for later',
      )
      .option('--source <source>', 'the envelope source of the job (default: found by its id)')
      .option('--next <n>', 'next firings to show', integer(1, 100), DEFAULT_NEXT_FIRINGS)
      .option('--recent <n>', 'recent firings to show', integer(1, 1_000), DEFAULT_RECENT_FIRINGS),
  )
    .addHelpText('after', HELP_AFTER)
    .action((name: string, flags: SchedulesFlags) =>
      withSource(flags, async ({ source }, zone) => {
        const detail = await showSchedule(source, name, {
          ...(flags.source === undefined ? {} : { source: flags.source }),
          next: flags.next,
          recent: flags.recent,
          nowMs: nowMs(),
        });
        if (detail === undefined) {
          const where = `group${source.groups.length === 1 ? '' : 's'} ${source.groups.join(', ') || '(none)'}`;
          const message = `no schedule ${name} in ${where}${source.table === undefined ? ' (and no --idempotency-table to look for a job sent for later)' : `, and no job sent for later with id ${name} in table ${source.table}`}`;
          if (flags.json) out(`${JSON.stringify({ found: false, name, message })}\n`);
          else runner.err(`${message}\n`);
          return CLI_EXIT.problems;
        }
        out(flags.json ? `${JSON.stringify(detail, null, 2)}\n` : renderScheduleDetail(detail, zone));
        return CLI_EXIT.ok;
      }),
    );

  addWhereOptions(
    schedules
      .command('cancel')
      .description(
        "Cancel a job sent for later by its identity (JobClient.cancel's path): it never runs, whether its schedule fired or not.",
      )
      .argument('<job id>', 'the envelope id of the job (send returned it, or options.id)')
      .option('--source <source>', 'the envelope source of the job (default: found by its id)'),
  )
    .addHelpText('after', HELP_AFTER)
    .action((jobId: string, flags: SchedulesFlags) =>
      withSource(flags, async ({ source }) => {
        const result = await cancelScheduledJob(source, jobId, {
          ...(flags.source === undefined ? {} : { source: flags.source }),
          nowMs,
        });
        out(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderCancel(result));
        return result.status === 'cancelled' || result.status === 'already-cancelled'
          ? CLI_EXIT.ok
          : CLI_EXIT.problems;
      }),
    );

  addWhereOptions(
    schedules
      .command('fire')
      .description(
        'Fire a recurring schedule now ("run tonight\'s invoices now"): sends its job to its queue with a scheduled time of its own, never colliding with the real firing.',
      )
      .argument('<schedule>', 'the schedule name, e.g. nightly-invoices'),
  )
    .addHelpText('after', HELP_AFTER)
    .action((name: string, flags: SchedulesFlags) =>
      withSource(flags, async ({ source, region, sqsEndpoint, emulator }) => {
        if (source.groups.length !== 1) {
          throw new RangeError(
            source.groups.length === 0
              ? 'fire: no schedule group found: give --group <name> (jobQueue.scheduleGroupName)'
              : `fire: several schedule groups (${source.groups.join(', ')}): give --group <name>`,
          );
        }
        const group = source.groups[0] as string;
        const input = {
          endpoint: sqsEndpoint,
          region,
          profile: flags.profile,
          env: io.env,
        };
        const sqs =
          (io.createSqs?.(input) as SQSClient | undefined) ??
          new SQSClient({
            ...opsClientConfig(input),
            ...credentialsOption({ profile: flags.profile, endpoint: sqsEndpoint, emulator }, io),
          });
        try {
          const fired = await fireScheduleNow({
            scheduler: source.scheduler as SchedulerClient,
            sqs,
            name,
            groupName: group,
            now: new Date(nowMs()),
          });
          // The queue URL as this command reached it: an emulator's GetQueueUrl answers with a host
          // of its own (sqs.<region>.localhost:<port>), not the --endpoint in use.
          const shown = { ...fired, queueUrl: onEndpoint(fired.queueUrl, sqsEndpoint) };
          out(
            flags.json
              ? `${JSON.stringify({ name, groupName: group, ...shown }, null, 2)}\n`
              : renderFired(name, shown),
          );
          return CLI_EXIT.ok;
        } catch (error) {
          if (error instanceof OpsError || error instanceof RangeError) throw error;
          const errorName = (error as { name?: unknown })?.name;
          if (errorName === 'QueueDoesNotExist' || errorName === 'AWS.SimpleQueueService.NonExistentQueue')
            throw new OpsError(
              `fire ${name}: the schedule's target queue does not exist (deleted under the schedule?)`,
              {
                code: 'QueueNotFound',
                cause: error,
              },
            );
          if (error instanceof Error && !('$metadata' in error))
            throw new RangeError(`fire ${name}: ${error.message}`);
          throw schedulerError(error, source.schedulerEndpoint, `fire schedule ${group}/${name}`);
        } finally {
          sqs.destroy();
        }
      }),
    );
  return schedules;
}

/** `queueUrl` with the origin of `endpoint` (the SQS endpoint in use), when one is given and both parse. */
export function onEndpoint(queueUrl: string, endpoint: string | undefined): string {
  if (endpoint === undefined || queueUrl === '') return queueUrl;
  try {
    const url = new URL(queueUrl);
    return `${new URL(endpoint).origin}${url.pathname}`;
  } catch {
    return queueUrl;
  }
}
