/**
 * The age of a queue's oldest message. SQS does not return it from GetQueueAttributes: it is only
 * published as the CloudWatch metric `AWS/SQS` `ApproximateAgeOfOldestMessage` (seconds, one
 * datapoint a minute, dimension `QueueName`, reported while the queue has messages; "Available
 * CloudWatch metrics for Amazon SQS", Amazon SQS Developer Guide). So the number shown is the
 * Maximum of the latest 1-minute datapoint, with its time, read with GetMetricData (CloudWatch
 * API reference); where no datapoint exists (a local endpoint, no CloudWatch access, an idle queue)
 * the age is `null` with a note saying why, never a guess.
 *
 * On a dead-letter queue the metric is the time since the message moved there, not since it was
 * first sent ("Setting-up dead-letter queue retention in Amazon SQS").
 */
import { OpsError } from './errors.ts';

/** CloudWatch namespace, metric, dimension and statistic read. */
export const OLDEST_AGE_METRIC = {
  namespace: 'AWS/SQS',
  metricName: 'ApproximateAgeOfOldestMessage',
  dimension: 'QueueName',
  stat: 'Maximum',
  /** SQS publishes one datapoint a minute. */
  periodSeconds: 60,
  /** How far back the latest datapoint is looked for. */
  lookbackMinutes: 15,
} as const;

/** Most metric queries in one GetMetricData request (CloudWatch API reference). */
export const MAX_METRIC_QUERIES_PER_REQUEST = 500;

/** The age of a queue's oldest message, as far as it is known. */
export interface OldestMessageAge {
  /** Seconds, or `null` when unknown (`note` says why). */
  readonly seconds: number | null;
  /** `cloudwatch` when `seconds` is a CloudWatch datapoint; `null` otherwise. */
  readonly source: 'cloudwatch' | null;
  /** Start of the datapoint's minute (ISO 8601, UTC), or `null`. */
  readonly at: string | null;
  /** Why `seconds` is `null`. */
  readonly note?: string;
}

/** Reads the age of the oldest message of queues, by queue name. */
export interface OldestMessageAgeSource {
  /**
   * @param queueNames queue names (the CloudWatch `QueueName` dimension; FIFO names end in `.fifo`).
   * @returns an age for every name given. Never throws for a CloudWatch failure: the ages then
   *   carry a note naming it.
   */
  read(queueNames: readonly string[]): Promise<Map<string, OldestMessageAge>>;
}

/** The plain GetMetricData input this module sends (a subset of the SDK's `GetMetricDataInput`). */
export interface MetricDataRequest {
  readonly MetricDataQueries: ReadonlyArray<{
    readonly Id: string;
    readonly MetricStat: {
      readonly Metric: {
        readonly Namespace: string;
        readonly MetricName: string;
        readonly Dimensions: ReadonlyArray<{ readonly Name: string; readonly Value: string }>;
      };
      readonly Period: number;
      readonly Stat: string;
    };
    readonly ReturnData: boolean;
  }>;
  readonly StartTime: Date;
  readonly EndTime: Date;
  readonly ScanBy: 'TimestampDescending';
  readonly NextToken?: string;
}

/** The part of the GetMetricData output read here. */
export interface MetricDataResponse {
  readonly MetricDataResults?: ReadonlyArray<{
    readonly Id?: string;
    readonly Timestamps?: readonly Date[];
    readonly Values?: readonly number[];
  }>;
  readonly NextToken?: string;
}

/** CloudWatch's GetMetricData, behind a port: the SDK client in production, a fake in tests. */
export interface MetricDataReader {
  getMetricData(request: MetricDataRequest): Promise<MetricDataResponse>;
  /** Closes the connections, when there are any. */
  destroy?(): void;
}

/** An age source that knows no ages, for a reason (e.g. a local endpoint). */
export function unknownOldestAges(note: string): OldestMessageAgeSource {
  return {
    async read(queueNames) {
      return new Map(queueNames.map((name) => [name, { seconds: null, source: null, at: null, note }]));
    },
  };
}

function errorText(error: unknown): string {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  return `${name}: ${message}`;
}

/**
 * Ages from CloudWatch: one GetMetricData call per 500 queues, `Maximum` over 1-minute periods
 * of the last {@link OLDEST_AGE_METRIC.lookbackMinutes} minutes, latest datapoint wins.
 *
 * @param options.nowMs the clock. @default Date.now
 */
export function cloudWatchOldestAges(
  reader: MetricDataReader,
  options: { readonly nowMs?: () => number } = {},
): OldestMessageAgeSource {
  const nowMs = options.nowMs ?? Date.now;
  return {
    async read(queueNames) {
      const ages = new Map<string, OldestMessageAge>();
      const end = new Date(nowMs());
      const start = new Date(end.getTime() - OLDEST_AGE_METRIC.lookbackMinutes * 60_000);
      for (let offset = 0; offset < queueNames.length; offset += MAX_METRIC_QUERIES_PER_REQUEST) {
        const names = queueNames.slice(offset, offset + MAX_METRIC_QUERIES_PER_REQUEST);
        const latest = new Map<string, { at: Date; value: number }>();
        try {
          let nextToken: string | undefined;
          do {
            const response = await reader.getMetricData({
              MetricDataQueries: names.map((name, i) => ({
                Id: `q${i}`,
                MetricStat: {
                  Metric: {
                    Namespace: OLDEST_AGE_METRIC.namespace,
                    MetricName: OLDEST_AGE_METRIC.metricName,
                    Dimensions: [{ Name: OLDEST_AGE_METRIC.dimension, Value: name }],
                  },
                  Period: OLDEST_AGE_METRIC.periodSeconds,
                  Stat: OLDEST_AGE_METRIC.stat,
                },
                ReturnData: true,
              })),
              StartTime: start,
              EndTime: end,
              ScanBy: 'TimestampDescending',
              ...(nextToken === undefined ? {} : { NextToken: nextToken }),
            });
            for (const result of response.MetricDataResults ?? []) {
              const name = names[Number(result.Id?.slice(1))];
              if (name === undefined) continue;
              (result.Timestamps ?? []).forEach((at, i) => {
                const value = result.Values?.[i];
                if (value === undefined || !Number.isFinite(value)) return;
                const seen = latest.get(name);
                if (seen === undefined || at.getTime() > seen.at.getTime()) latest.set(name, { at, value });
              });
            }
            nextToken = response.NextToken;
          } while (nextToken);
        } catch (error) {
          const note = `CloudWatch GetMetricData failed (${errorText(error)}); it needs cloudwatch:GetMetricData`;
          for (const name of names) ages.set(name, { seconds: null, source: null, at: null, note });
          continue;
        }
        for (const name of names) {
          const point = latest.get(name);
          ages.set(
            name,
            point === undefined
              ? {
                  seconds: null,
                  source: null,
                  at: null,
                  note:
                    `no ${OLDEST_AGE_METRIC.metricName} datapoint in CloudWatch for the last ` +
                    `${OLDEST_AGE_METRIC.lookbackMinutes} min (SQS publishes it while the queue has messages; a new queue takes a few minutes)`,
                }
              : { seconds: point.value, source: 'cloudwatch', at: point.at.toISOString() },
          );
        }
      }
      return ages;
    },
  };
}

/** The package that talks to CloudWatch; loaded only when `stats` needs it. */
export const CLOUDWATCH_CLIENT_PACKAGE = '@aws-sdk/client-cloudwatch';

/** The CloudWatch client package is not installed. */
export class CloudWatchUnavailableError extends OpsError {}

interface CloudWatchModule {
  CloudWatchClient: new (
    config: Record<string, unknown>,
  ) => { send(command: unknown): Promise<unknown>; destroy(): void };
  GetMetricDataCommand: new (input: MetricDataRequest) => unknown;
}

/**
 * A {@link MetricDataReader} on the SDK's `CloudWatchClient`, loaded on first use so that the other
 * commands do not need the package.
 *
 * @param config client configuration: `region`, `profile`, `requestHandler` as for the SQS client
 *   (`opsClientConfig`); its `endpoint` is not used (CloudWatch is never the SQS endpoint).
 * @param load loads the SDK module. @default `import('@aws-sdk/client-cloudwatch')` resolved at run
 *   time (the `sqs-jobs` CLI passes a static import instead, so its bundle carries the client).
 * @throws {CloudWatchUnavailableError} code `CloudWatchUnavailable` when
 *   `@aws-sdk/client-cloudwatch` cannot be loaded.
 */
export async function loadCloudWatchReader(
  config: {
    readonly region?: unknown;
    readonly profile?: unknown;
    readonly requestHandler?: unknown;
  },
  load: () => Promise<unknown> = () => {
    // A variable specifier: for library users the package is optional, resolved at run time only.
    const specifier: string = CLOUDWATCH_CLIENT_PACKAGE;
    return import(specifier);
  },
): Promise<MetricDataReader> {
  let module: CloudWatchModule;
  try {
    module = (await load()) as CloudWatchModule;
  } catch (error) {
    throw new CloudWatchUnavailableError(
      `reading it from CloudWatch needs the package ${CLOUDWATCH_CLIENT_PACKAGE} (npm install ${CLOUDWATCH_CLIENT_PACKAGE})`,
      { code: 'CloudWatchUnavailable', cause: error },
    );
  }
  const client = new module.CloudWatchClient({
    ...(config.region === undefined ? {} : { region: config.region }),
    ...(config.profile === undefined ? {} : { profile: config.profile }),
    ...(config.requestHandler === undefined ? {} : { requestHandler: config.requestHandler }),
  });
  return {
    async getMetricData(request) {
      return (await client.send(new module.GetMetricDataCommand(request))) as MetricDataResponse;
    },
    destroy() {
      client.destroy();
    },
  };
}
