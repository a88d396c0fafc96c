/**
 * `sqs-jobs stats`: per queue the visible, in-flight and delayed counts, the age of the oldest
 * message (CloudWatch on AWS; n/a with a note against a custom endpoint) and the depth of its
 * dead-letter queue; once, or every N seconds with `--watch` until Ctrl-C.
 *
 * Exit codes: 0 done (also a watch stopped by Ctrl-C); 1 no queue matched; 2 could not run (bad
 * flags, invalid URL, missing queue, unreachable endpoint, credentials).
 */
import type { Command } from 'commander';
import { dynamodbEndpointOf, opsClientConfig } from '../ops/client.ts';
import { readLimits, renderLimits } from '../ops/limits.ts';
import {
  cloudWatchOldestAges,
  loadCloudWatchReader,
  type MetricDataReader,
  OLDEST_AGE_METRIC,
  type OldestMessageAgeSource,
  unknownOldestAges,
} from '../ops/oldest-age.ts';
import { regionFromQueueUrl, validateQueueUrl } from '../ops/queue.ts';
import { listQueueUrls, readQueueStats } from '../ops/stats.ts';
import { renderStats, statsJson } from '../ops/stats-format.ts';
import { tableReadError } from '../ops/table-errors.ts';
import {
  addConnectionOptions,
  type CommandRunner,
  type ConnectionFlags,
  collect,
  integer,
} from './common.ts';
import { createDynamodbClient } from './dynamodb.ts';
import { CLI_EXIT, defaultSleep } from './io.ts';

/** Seconds between refreshes of `--watch` without a value. */
export const DEFAULT_WATCH_SECONDS = 5;

interface StatsFlags extends ConnectionFlags {
  readonly queueUrl?: string[];
  readonly queueNamePrefix?: string;
  /** `true` when given without a value. */
  readonly watch?: number | true;
  /** The idempotency table whose flow-control limits to show. */
  readonly limitsTable?: string;
  readonly dynamodbEndpoint?: string;
}

const HELP_AFTER = `
Columns: visible = ApproximateNumberOfMessages (waiting), in flight = ...NotVisible (received, not
deleted: running, or waiting out a retry backoff), delayed = ...Delayed, oldest = age of the oldest
message, dead-letter queue = the DLQ of the queue's RedrivePolicy and its visible messages (what
the DLQ depth alarm counts). Counts are approximate, as SQS reports them.

With --limits-table <idempotency table>: each flow-control limit kept there (defineJob's
concurrency, defineRateLimit): running jobs against the limit of each concurrency key, and each rate
limit's current rate against its declared one (lower while throttling is reported) with its tokens.
One Scan of the table per refresh (reads the whole table). A job waiting on a limit is a delayed
message on a standard queue, in flight on a FIFO queue.

Age of the oldest message: SQS publishes it only as the CloudWatch metric
${OLDEST_AGE_METRIC.metricName} (one datapoint a minute while the queue has messages). On AWS the
latest datapoint is read with cloudwatch:GetMetricData (needs the package @aws-sdk/client-cloudwatch)
and shown with its minute; against a custom endpoint (emulator) it is n/a.

Examples:
  npx sqs-jobs stats --queue-url $QUEUE
  npx sqs-jobs stats --queue-name-prefix SqsJobs- --watch
  npx sqs-jobs stats --queue-name-prefix jobs --endpoint http://localhost:4566 --watch 2 --json

Exit codes: 0 done (a watch ends with Ctrl-C), 1 no queue matched, 2 could not run.
See docs/operations.md.`;

/** Adds `stats` to `program`. */
export function addStatsCommand(program: Command, runner: CommandRunner): Command {
  const { io, out } = runner;
  const sleep = io.sleep ?? defaultSleep;
  const nowMs = io.nowMs ?? Date.now;

  return addConnectionOptions(
    program
      .command('stats')
      .description(
        'Show queue depths: visible, in flight, delayed, age of the oldest message, and the depth of each ' +
          "queue's dead-letter queue. Reads only (GetQueueAttributes, GetQueueUrl, ListQueues, CloudWatch GetMetricData).",
      )
      .option('--queue-url <url>', 'a queue to show (stack output *QueueUrl); repeat for several', collect)
      .option(
        '--limits-table <name>',
        'also show the flow-control limits kept in this idempotency table (one Scan per refresh)',
      )
      .option('--dynamodb-endpoint <url>', 'DynamoDB endpoint when it is not --endpoint (emulators)')
      .option(
        '--queue-name-prefix <prefix>',
        'also show every queue whose name starts with this (ListQueues; case-sensitive)',
      )
      .option(
        '--watch [seconds]',
        `refresh every N seconds until Ctrl-C (default ${DEFAULT_WATCH_SECONDS}); with --json one JSON line per refresh`,
        integer(1, 3_600),
      ),
  )
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: StatsFlags) => {
      const explicit = flags.queueUrl ?? [];
      if (explicit.length === 0 && flags.queueNamePrefix === undefined) {
        runner.refuse('stats needs --queue-url <url> or --queue-name-prefix <prefix> (add --help for usage)');
        return;
      }
      await runner.withSqs(flags, explicit[0], async (sqs, input) => {
        for (const url of explicit) validateQueueUrl(url, '--queue-url');
        const regions = [...new Set(explicit.map(regionFromQueueUrl).filter((r) => r !== undefined))];
        if (regions.length > 1 && flags.region === undefined) {
          throw new RangeError(
            `--queue-url: the queues are in several regions (${regions.join(', ')}); run stats once per region`,
          );
        }
        const endpoint = opsClientConfig(input).endpoint;
        let metrics: MetricDataReader | undefined;
        let oldestAge: OldestMessageAgeSource;
        if (endpoint !== undefined) {
          oldestAge = unknownOldestAges(
            `SQS reports the age of the oldest message only as the CloudWatch metric ${OLDEST_AGE_METRIC.metricName}, ` +
              `which the custom endpoint ${String(endpoint)} does not provide`,
          );
        } else {
          try {
            metrics = await (
              io.createMetrics ??
              ((i) => loadCloudWatchReader(opsClientConfig(i), () => import('@aws-sdk/client-cloudwatch')))
            )(input);
            oldestAge = cloudWatchOldestAges(metrics, { nowMs });
          } catch (error) {
            oldestAge = unknownOldestAges(error instanceof Error ? error.message : String(error));
          }
        }
        const dynamodbEndpoint =
          flags.limitsTable === undefined ? undefined : dynamodbEndpointOf(flags, io.env);
        const dynamodb =
          flags.limitsTable === undefined
            ? undefined
            : createDynamodbClient(
                {
                  profile: flags.profile,
                  region: flags.region ?? regions[0],
                  endpoint: dynamodbEndpoint,
                  emulator: endpoint !== undefined,
                },
                io,
              );
        const limitsOf = async () => {
          const table = flags.limitsTable;
          if (dynamodb === undefined || table === undefined) return undefined;
          try {
            return await readLimits(dynamodb, table, nowMs());
          } catch (error) {
            // A table that does not exist, an endpoint that is not DynamoDB: one line saying what to check.
            throw tableReadError(error, table, dynamodbEndpoint, '--limits-table');
          }
        };
        const watchSeconds = flags.watch === true ? DEFAULT_WATCH_SECONDS : flags.watch;
        const dlqUrls = new Map<string, string>();
        const redraw = watchSeconds !== undefined && !flags.json && io.stdout.isTTY === true;
        try {
          for (let refresh = 0; ; refresh++) {
            const listed =
              flags.queueNamePrefix === undefined ? [] : await listQueueUrls(sqs, flags.queueNamePrefix);
            const report = await readQueueStats({
              sqs,
              queueUrls: [...explicit, ...listed],
              oldestAge,
              deadLetterQueueUrls: dlqUrls,
              nowMs,
              what: '--queue-url',
            });
            const limits = await limitsOf();
            if (io.signal?.aborted) break;
            const limitsText = limits === undefined ? '' : `\n${renderLimits(limits, nowMs())}`;
            const json =
              limits === undefined
                ? statsJson(report)
                : { ...(statsJson(report) as Record<string, unknown>), limits };
            if (flags.json) {
              out(
                watchSeconds === undefined
                  ? `${JSON.stringify(json, null, 2)}\n`
                  : `${JSON.stringify(json)}\n`,
              );
            } else if (redraw) {
              out(
                `\x1b[H\x1b[2J${renderStats(report)}${limitsText}\nrefreshing every ${watchSeconds} s; Ctrl-C to stop\n`,
              );
            } else {
              out(`${refresh > 0 ? '\n' : ''}${renderStats(report)}${limitsText}`);
            }
            if (watchSeconds === undefined)
              return report.queues.length === 0 ? CLI_EXIT.problems : CLI_EXIT.ok;
            if (io.signal?.aborted) break;
            await sleep(watchSeconds * 1000, io.signal);
            if (io.signal?.aborted) break;
          }
          // Ctrl-C is how a watch ends; a single read cut short is an interruption.
          return watchSeconds === undefined ? CLI_EXIT.interrupted : CLI_EXIT.ok;
        } finally {
          metrics?.destroy?.();
          dynamodb?.destroy();
        }
      });
    });
}
