/**
 * Queue statistics for operators: per queue the visible, in-flight and delayed counts
 * (GetQueueAttributes `ApproximateNumberOfMessages`, `...NotVisible`, `...Delayed`), the age of the
 * oldest message (CloudWatch, see ./oldest-age.ts), and the depth of its dead-letter queue, found
 * through the queue's `RedrivePolicy` (`deadLetterTargetArn` → GetQueueUrl).
 *
 * Sources: GetQueueAttributes, GetQueueUrl and ListQueues API references; "Amazon SQS dead-letter
 * queues" (a DLQ is in the same account and Region as its source queue); "Amazon Resource Names"
 * (`arn:<partition>:sqs:<region>:<account-id>:<queue-name>`).
 */
import { GetQueueUrlCommand, type GetQueueUrlCommandOutput, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { OpsError, QueueNotFoundError } from './errors.ts';
import { type OldestMessageAge, type OldestMessageAgeSource, unknownOldestAges } from './oldest-age.ts';
import { callSqs, describeQueue, type OpsSqs, type QueueInfo } from './queue.ts';

/** Queues described at the same time. */
const CONCURRENCY = 8;

/** Runs `task` over `items`, at most `limit` at a time; results in input order. */
async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The depth of a dead-letter queue. */
export interface DeadLetterQueueStats {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  /** `maxReceiveCount` of the source queue's redrive policy. */
  readonly maxReceiveCount: number;
  /** `ApproximateNumberOfMessages`: what the DLQ depth alarm counts. */
  readonly visible: number;
  /** `ApproximateNumberOfMessagesNotVisible` (e.g. held by a `dlq list` running now). */
  readonly inFlight: number;
  readonly delayed: number;
}

/** One queue's numbers. Counts are approximate, as SQS reports them. */
export interface QueueStats {
  readonly name: string;
  readonly url: string;
  readonly arn: string | undefined;
  readonly fifo: boolean;
  /** `ApproximateNumberOfMessages`: waiting to be received. */
  readonly visible: number;
  /** `ApproximateNumberOfMessagesNotVisible`: received, not yet deleted (being worked on, or waiting out a backoff). */
  readonly inFlight: number;
  /** `ApproximateNumberOfMessagesDelayed`: sent with a delay not yet over. */
  readonly delayed: number;
  readonly oldestMessageAge: OldestMessageAge;
  /** The DLQ named by the queue's redrive policy; `null` when it has none or it cannot be read (`deadLetterQueueNote`). */
  readonly deadLetterQueue: DeadLetterQueueStats | null;
  /** Why `deadLetterQueue` is `null`. */
  readonly deadLetterQueueNote?: string;
}

/** What {@link readQueueStats} returns. */
export interface QueueStatsReport {
  /** When the read started (ISO 8601, UTC). */
  readonly at: string;
  /** In the order asked for. */
  readonly queues: QueueStats[];
}

/** Options of {@link readQueueStats}. */
export interface ReadQueueStatsOptions {
  readonly sqs: OpsSqs;
  /** Queue URLs; duplicates are read once. */
  readonly queueUrls: readonly string[];
  /** @default no ages ("not read") */
  readonly oldestAge?: OldestMessageAgeSource;
  /**
   * DLQ ARN → URL, filled by the call: pass the same map to repeated reads (`--watch`) to look
   * each DLQ up once.
   */
  readonly deadLetterQueueUrls?: Map<string, string>;
  /** @default Date.now */
  readonly nowMs?: () => number;
  /** How the URLs are named in errors. @default 'queue URL' */
  readonly what?: string;
}

/** The parts of an SQS queue ARN. */
export interface QueueArn {
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
  readonly name: string;
}

/** Splits `arn:<partition>:sqs:<region>:<account-id>:<queue-name>`; `undefined` for anything else. */
export function parseQueueArn(arn: string): QueueArn | undefined {
  const parts = arn.split(':');
  if (parts.length !== 6 || parts[0] !== 'arn' || parts[2] !== 'sqs') return undefined;
  const [, partition, , region, accountId, name] = parts as [string, string, string, string, string, string];
  if (!partition || !region || !accountId || !name) return undefined;
  return { partition, region, accountId, name };
}

/**
 * The URL of a queue given its ARN (GetQueueUrl with `QueueName` and `QueueOwnerAWSAccountId`).
 *
 * @throws {OpsError} `QueueNotFound` when there is no such queue; others from SQS.
 */
export async function queueUrlOfArn(sqs: OpsSqs, arn: string): Promise<string> {
  const parsed = parseQueueArn(arn);
  if (parsed === undefined) {
    throw new QueueNotFoundError(`"${arn}" is not an SQS queue ARN`, {
      code: 'QueueNotFound',
      queueUrl: arn,
    });
  }
  const out = await callSqs<GetQueueUrlCommandOutput>(
    sqs,
    new GetQueueUrlCommand({ QueueName: parsed.name, QueueOwnerAWSAccountId: parsed.accountId }),
    arn,
  );
  if (!out.QueueUrl) {
    throw new QueueNotFoundError(`GetQueueUrl returned no URL for ${arn}`, {
      code: 'QueueNotFound',
      queueUrl: arn,
    });
  }
  return out.QueueUrl;
}

/**
 * URLs of the queues whose names start with `prefix` (ListQueues, every page), sorted by URL.
 *
 * @param prefix case-sensitive; `''` lists every queue of the account and Region.
 * @throws {OpsError} from SQS (endpoint, credentials, permissions).
 */
export async function listQueueUrls(sqs: OpsSqs, prefix: string): Promise<string[]> {
  const urls: string[] = [];
  let nextToken: string | undefined;
  do {
    const out = await callSqs<{ QueueUrls?: string[]; NextToken?: string }>(
      sqs,
      new ListQueuesCommand({
        ...(prefix === '' ? {} : { QueueNamePrefix: prefix }),
        MaxResults: 1000,
        ...(nextToken === undefined ? {} : { NextToken: nextToken }),
      }),
      `queues named ${prefix}*`,
    );
    urls.push(...(out.QueueUrls ?? []));
    nextToken = out.NextToken || undefined;
  } while (nextToken !== undefined);
  return [...new Set(urls)].sort();
}

/**
 * Reads the numbers of every queue and of the DLQ of each (GetQueueAttributes `All`), and the ages
 * of their oldest messages. A DLQ that does not exist or cannot be read is a note on its queue,
 * not a failure.
 *
 * @throws {InvalidQueueUrlError} for a malformed queue URL.
 * @throws {OpsError} `QueueNotFound`, `EndpointUnreachable`, `MissingCredentials`, ... for a queue asked for.
 */
export async function readQueueStats(options: ReadQueueStatsOptions): Promise<QueueStatsReport> {
  const { sqs } = options;
  const at = new Date((options.nowMs ?? Date.now)()).toISOString();
  const urls = [...new Set(options.queueUrls)];
  const infos = await mapLimit(urls, CONCURRENCY, (url) =>
    describeQueue(sqs, url, options.what ?? 'queue URL'),
  );

  const byArn = new Map(infos.filter((q) => q.arn !== undefined).map((q) => [q.arn as string, q]));
  const dlqUrls = options.deadLetterQueueUrls ?? new Map<string, string>();
  const dlqs = new Map<string, QueueInfo | { problem: string }>();
  const dlqArns = [
    ...new Set(infos.flatMap((q) => (q.redrivePolicy ? [q.redrivePolicy.deadLetterTargetArn] : []))),
  ];
  await mapLimit(dlqArns, CONCURRENCY, async (arn) => {
    const listed = byArn.get(arn);
    if (listed) {
      dlqs.set(arn, listed);
      return;
    }
    try {
      let url = dlqUrls.get(arn);
      if (url === undefined) {
        url = await queueUrlOfArn(sqs, arn);
        dlqUrls.set(arn, url);
      }
      dlqs.set(arn, await describeQueue(sqs, url, 'dead-letter queue URL'));
    } catch (error) {
      if (!(error instanceof OpsError) || !['QueueNotFound', 'AccessDenied'].includes(error.code))
        throw error;
      dlqUrls.delete(arn);
      dlqs.set(arn, {
        problem:
          error.code === 'QueueNotFound'
            ? `the dead-letter queue ${arn} of its redrive policy does not exist`
            : `the dead-letter queue ${arn} cannot be read: ${error.message}`,
      });
    }
  });

  const ages = await (options.oldestAge ?? unknownOldestAges('not read')).read(infos.map((q) => q.name));
  const queues = infos.map((info): QueueStats => {
    const policy = info.redrivePolicy;
    const dlq = policy ? dlqs.get(policy.deadLetterTargetArn) : undefined;
    const base = {
      name: info.name,
      url: info.url,
      arn: info.arn,
      fifo: info.fifo,
      visible: info.approximateVisible,
      inFlight: info.approximateNotVisible,
      delayed: info.approximateDelayed,
      oldestMessageAge: ages.get(info.name) ?? { seconds: null, source: null, at: null, note: 'not read' },
    };
    if (!policy || dlq === undefined) {
      return {
        ...base,
        deadLetterQueue: null,
        deadLetterQueueNote: 'no redrive policy: SQS moves no failed message to a dead-letter queue',
      };
    }
    if ('problem' in dlq) return { ...base, deadLetterQueue: null, deadLetterQueueNote: dlq.problem };
    return {
      ...base,
      deadLetterQueue: {
        name: dlq.name,
        url: dlq.url,
        arn: policy.deadLetterTargetArn,
        maxReceiveCount: policy.maxReceiveCount,
        visible: dlq.approximateVisible,
        inFlight: dlq.approximateNotVisible,
        delayed: dlq.approximateDelayed,
      },
    };
  });
  return { at, queues };
}
