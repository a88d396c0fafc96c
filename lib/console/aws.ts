/**
 * Console setups for a deployed stack (or any SQS endpoint):
 * - queues from the stack's CloudFormation outputs as `cdk deploy --outputs-file` writes them
 *   (`{ "<StackName>": { "<Queue>QueueUrl": ..., "<Queue>DlqUrl": ..., "IdempotencyTableName": ... } }`),
 *   or from explicit queue URLs (their DLQs found through the RedrivePolicy);
 * - on AWS: the age of the oldest message from CloudWatch (`AWS/SQS ApproximateAgeOfOldestMessage`,
 *   lib/ops/oldest-age.ts), completions per minute from the workers' own metric
 *   (`SqsJobs JobCompleted`, dimension `Queue`; docs/contracts.md "Metrics"), and alarm states
 *   (DescribeAlarms of the alarms named after the stack: CDK names them `<StackName>-<path>...`).
 *
 * Credentials and region come from the AWS default chain (or `--profile`); the console never
 * sends them to the page.
 */
import { readFile } from 'node:fs/promises';
import {
  CloudWatchClient,
  DescribeAlarmsCommand,
  type DescribeAlarmsCommandOutput,
  GetMetricDataCommand,
  type GetMetricDataCommandOutput,
  ListMetricsCommand,
  type ListMetricsCommandOutput,
  type MetricAlarm,
} from '@aws-sdk/client-cloudwatch';
import { InvalidQueueUrlError } from '../ops/errors.ts';
import { validateQueueUrl } from '../ops/queue.ts';
import type { AlarmSource, CompletionSeries, ConsoleAlarm, ConsoleQueue } from './setup.ts';

/** What an outputs file says about one stack. */
export interface StackOutputs {
  readonly stackName: string;
  readonly queues: ConsoleQueue[];
  readonly idempotencyTables: string[];
}

function fail(message: string): InvalidQueueUrlError {
  return new InvalidQueueUrlError(message, { code: 'InvalidQueueUrl' });
}

/**
 * Reads the queues and the idempotency table of a stack from its outputs: every `<Queue>QueueUrl`
 * (with `<Queue>DlqUrl` when present), and `IdempotencyTableName`.
 *
 * @param stackName which stack of the file; needed when it holds several.
 * @throws {InvalidQueueUrlError} for a file that is not such JSON, an unknown or ambiguous stack,
 *   no `*QueueUrl` output, or an output that is not a queue URL.
 */
export function stackOutputs(json: unknown, stackName?: string): StackOutputs {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw fail(
      '--outputs-file: expected the JSON that cdk deploy --outputs-file writes ({ "<Stack>": { outputs } })',
    );
  }
  const stacks = json as Record<string, unknown>;
  const names = Object.keys(stacks);
  const name = stackName ?? (names.length === 1 ? names[0] : undefined);
  if (name === undefined) {
    throw fail(
      `--outputs-file holds ${names.length === 0 ? 'no stack' : `the stacks ${names.join(', ')}`}: pick one with --stack`,
    );
  }
  const outputs = stacks[name];
  if (typeof outputs !== 'object' || outputs === null) {
    throw fail(`--outputs-file has no stack "${name}" (it has ${names.join(', ') || 'none'})`);
  }
  const values = outputs as Record<string, unknown>;
  const queues: ConsoleQueue[] = [];
  for (const [key, value] of Object.entries(values)) {
    const match = /^(.+)QueueUrl$/.exec(key);
    if (match === null || typeof value !== 'string') continue;
    const id = match[1] as string;
    validateQueueUrl(value, `output ${key}`);
    const dlq = values[`${id}DlqUrl`];
    if (typeof dlq === 'string') validateQueueUrl(dlq, `output ${id}DlqUrl`);
    queues.push({ id, url: value, ...(typeof dlq === 'string' ? { dlqUrl: dlq } : {}) });
  }
  if (queues.length === 0) throw fail(`--outputs-file: stack ${name} has no <Queue>QueueUrl output`);
  const table = values.IdempotencyTableName;
  return { stackName: name, queues, idempotencyTables: typeof table === 'string' ? [table] : [] };
}

/** Reads an outputs file (see {@link stackOutputs}). */
export async function readStackOutputs(path: string, stackName?: string): Promise<StackOutputs> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw fail(`--outputs-file: cannot read ${path} (${(error as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(`--outputs-file: ${path} is not JSON`);
  }
  return stackOutputs(json, stackName);
}

/** Letters and digits only, lower case: how a metric's `Queue` value is matched to an output's queue. */
function normalized(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** The console queue an alarm watches, by the dimensions of its metric(s). */
export function alarmQueueId(
  alarm: Pick<MetricAlarm, 'Dimensions' | 'Metrics'>,
  queues: readonly ConsoleQueue[],
  queueNames: ReadonlyMap<string, string>,
): string | undefined {
  const dimensions = [
    ...(alarm.Dimensions ?? []),
    ...(alarm.Metrics ?? []).flatMap((m) => m.MetricStat?.Metric?.Dimensions ?? []),
  ];
  for (const d of dimensions) {
    if (d.Value === undefined) continue;
    if (d.Name === 'QueueName') {
      const id = queueNames.get(d.Value);
      if (id !== undefined) return id;
    }
    if (d.Name === 'Queue') {
      const found = queues.find(
        (q) => q.jobQueueName === d.Value || normalized(q.id) === normalized(d.Value as string),
      );
      if (found !== undefined) return found.id;
    }
  }
  return undefined;
}

/** Alarm states of the alarms whose names start with `prefix` (DescribeAlarms, every page). */
export function cloudWatchAlarms(client: Pick<CloudWatchClient, 'send'>, prefix: string): AlarmSource {
  return {
    label: `CloudWatch alarms named ${prefix}*`,
    async read(queues, queueNames) {
      const alarms: ConsoleAlarm[] = [];
      let nextToken: string | undefined;
      do {
        const out = (await client.send(
          new DescribeAlarmsCommand({
            AlarmNamePrefix: prefix,
            AlarmTypes: ['MetricAlarm'],
            MaxRecords: 100,
            ...(nextToken === undefined ? {} : { NextToken: nextToken }),
          }),
        )) as DescribeAlarmsCommandOutput;
        for (const alarm of out.MetricAlarms ?? []) {
          alarms.push({
            name: alarm.AlarmName ?? '',
            state: alarm.StateValue ?? 'UNKNOWN',
            reason: alarm.StateReason ?? '',
            updatedAt: alarm.StateUpdatedTimestamp?.toISOString(),
            metric: alarm.MetricName ?? (alarm.Metrics?.length ? 'metric math' : undefined),
            queueId: alarmQueueId(alarm, queues, queueNames),
          });
        }
        nextToken = out.NextToken;
      } while (nextToken);
      const rank = (s: string) => (s === 'ALARM' ? 0 : s === 'INSUFFICIENT_DATA' ? 1 : 2);
      return alarms.sort((a, b) => rank(a.state) - rank(b.state) || a.name.localeCompare(b.name));
    },
  };
}

/**
 * Completions per minute per queue: `SqsJobs` `JobCompleted` with dimension set `[Queue]`, `Sum`
 * over 60 s. The `Queue` value of each console queue is its `jobQueueName`, else the one of the
 * metric's values that matches its id (letters and digits, any case: output `Payments` ↔ queue
 * `payments`), found with ListMetrics.
 */
export function cloudWatchCompletions(
  client: Pick<CloudWatchClient, 'send'>,
  options: { readonly namespace?: string; readonly nowMs?: () => number } = {},
): CompletionSeries {
  const namespace = options.namespace ?? 'SqsJobs';
  const now = options.nowMs ?? Date.now;
  let known: string[] | undefined;
  return {
    kind: 'series',
    label: `completed jobs per minute (CloudWatch ${namespace} JobCompleted, Sum per minute)`,
    async read(queues, minutes) {
      const notes: string[] = [];
      if (known === undefined) {
        const values = new Set<string>();
        let nextToken: string | undefined;
        do {
          const out = (await client.send(
            new ListMetricsCommand({
              Namespace: namespace,
              MetricName: 'JobCompleted',
              ...(nextToken === undefined ? {} : { NextToken: nextToken }),
            }),
          )) as ListMetricsCommandOutput;
          for (const metric of out.Metrics ?? []) {
            const dims = metric.Dimensions ?? [];
            const queue = dims.find((d) => d.Name === 'Queue')?.Value;
            if (dims.length === 1 && queue !== undefined) values.add(queue);
          }
          nextToken = out.NextToken;
        } while (nextToken);
        known = [...values];
      }
      const dimensionOf = new Map<string, string>();
      for (const q of queues) {
        const value = q.jobQueueName ?? known.find((v) => normalized(v) === normalized(q.id));
        if (value === undefined) notes.push(`${q.id}: no ${namespace} JobCompleted metric found for it yet`);
        else dimensionOf.set(q.id, value);
      }
      const end = Math.floor(now() / 60_000) * 60_000;
      const start = end - minutes * 60_000;
      const t: number[] = [];
      for (let at = start; at < end; at += 60_000) t.push(at);
      const series: Record<string, (number | null)[]> = {};
      const ids = [...dimensionOf.keys()];
      if (ids.length > 0) {
        let nextToken: string | undefined;
        do {
          const out = (await client.send(
            new GetMetricDataCommand({
              StartTime: new Date(start),
              EndTime: new Date(end),
              MetricDataQueries: ids.map((id, i) => ({
                Id: `q${i}`,
                MetricStat: {
                  Metric: {
                    Namespace: namespace,
                    MetricName: 'JobCompleted',
                    Dimensions: [{ Name: 'Queue', Value: dimensionOf.get(id) as string }],
                  },
                  Period: 60,
                  Stat: 'Sum',
                },
                ReturnData: true,
              })),
              ...(nextToken === undefined ? {} : { NextToken: nextToken }),
            }),
          )) as GetMetricDataCommandOutput;
          for (const result of out.MetricDataResults ?? []) {
            const id = ids[Number(result.Id?.slice(1))];
            if (id === undefined) continue;
            series[id] ??= t.map(() => null);
            const values = series[id];
            (result.Timestamps ?? []).forEach((at, i) => {
              const index = t.indexOf(Math.floor(at.getTime() / 60_000) * 60_000);
              const value = result.Values?.[i];
              if (index >= 0 && value !== undefined) values[index] = value;
            });
          }
          nextToken = out.NextToken;
        } while (nextToken);
      }
      for (const id of ids) series[id] ??= t.map(() => null);
      return { t, series, notes };
    },
  };
}

/** A CloudWatch client with the console's region and profile. */
export function createCloudWatchClient(config: {
  readonly region?: string;
  readonly profile?: string;
}): CloudWatchClient {
  return new CloudWatchClient({
    ...(config.region === undefined ? {} : { region: config.region }),
    ...(config.profile === undefined ? {} : { profile: config.profile }),
  });
}
