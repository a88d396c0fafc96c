/**
 * The running local stack as its users see it ({@link LocalRuntime}): its queues with their
 * DLQs, its workers (one per emulated event source mapping), counters, queue depths, fault
 * controls, and `stop`. running.ts implements it.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsFaultRates } from '../aws-faults.ts';
import type { Endpoints } from '../emulators.ts';
import type { FunctionStats } from '../event-source-mapping.ts';
import type { FaultProxyStats } from '../fault-proxy.ts';
import type { LocalCredentials } from '../function-config.ts';
import type { ProvisionedQueue } from '../provision/queues.ts';
import type { ProvisionedTable } from '../provision/tables.ts';
import type { LocalScheduler } from '../scheduler/index.ts';
import type { SynthResult } from '../synth.ts';
import type { XraySegmentDocument } from '../xray-daemon.ts';

/** A queue of the stack as it runs locally. */
export interface LocalQueue extends ProvisionedQueue {
  /** The DLQ named by the RedrivePolicy, when it is a queue of this stack. */
  readonly deadLetterQueue?: {
    readonly logicalId: string;
    readonly name: string;
    readonly url: string;
    readonly arn: string;
    /** Receives before a message moves there. */
    readonly maxReceiveCount: number;
  };
  /** True when another queue of the stack names this one as its DLQ. */
  readonly isDeadLetterQueue: boolean;
}

/** One emulated event source mapping and the function it invokes. */
export interface LocalWorker {
  readonly mappingLogicalId: string;
  readonly functionLogicalId: string;
  /** Physical function name. */
  readonly functionName: string;
  /** `JOBS_QUEUE_NAME` of the function's environment (the sample's logical queue name), when set. */
  readonly jobQueueName: string | undefined;
  readonly queueLogicalId: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  /** The function's complete environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Handler string and bundled code directory (the cloud assembly asset). */
  readonly handler: string;
  readonly assetDir: string;
  readonly timeoutSeconds: number;
  readonly memorySizeMb: number;
  readonly batchSize: number;
  readonly maximumBatchingWindowSeconds: number;
  /** Pollers / concurrent invocations of this mapping. */
  readonly concurrency: number;
  readonly reportBatchItemFailures: boolean;
  /** `Enabled` of the mapping; a disabled mapping is not polled. */
  readonly enabled: boolean;
}

/** Depth of a queue, as the CloudWatch metrics the alarms watch would show it. */
export interface QueueDepth {
  readonly url: string;
  /** `ApproximateNumberOfMessagesVisible` (GetQueueAttributes `ApproximateNumberOfMessages`). */
  readonly visible: number;
  /** `ApproximateNumberOfMessagesNotVisible`: in flight. */
  readonly notVisible: number;
  /** `ApproximateNumberOfMessagesDelayed`. */
  readonly delayed: number;
  /**
   * Age of the oldest message (visible, in flight or delayed), in milliseconds: the metric
   * `ApproximateAgeOfOldestMessage` is this in seconds. 0 for an empty queue; undefined when the
   * emulator cannot tell (external endpoints: SQS has no API for it, only CloudWatch).
   */
  readonly oldestMessageAgeMs: number | undefined;
}

/** Counters per function logical id, and their sums. Snapshots: later changes do not show. */
export interface RuntimeStats {
  readonly functions: Readonly<Record<string, FunctionStats>>;
  readonly totals: FunctionStats;
}

/** Options of {@link LocalRuntime.waitUntilDrained}. */
export interface DrainOptions {
  /** Give up after this many milliseconds. @default 60_000 */
  readonly timeoutMs?: number;
  /** Between depth checks, in milliseconds. @default 50 */
  readonly pollIntervalMs?: number;
  /** Queue selectors to watch. @default every queue an enabled mapping consumes */
  readonly queues?: readonly string[];
}

/** The running local stack. */
export interface LocalRuntime {
  readonly stackName: string;
  readonly region: string;
  /** Account id in the emulator's ARNs. */
  readonly accountId: string;
  /**
   * The endpoints the functions and the pollers use: the emulators', or with `awsFaults` the
   * fault proxies' in front of them (a client on these meets the faults); `scheduler` is the
   * local EventBridge Scheduler's (`AWS_ENDPOINT_URL_SCHEDULER` of the functions).
   */
  readonly endpoints: Endpoints & { readonly scheduler: string };
  readonly credentials: LocalCredentials;
  /** Clients on the endpoints in use (destroyed by `stop`); exempt from `awsFaults`. */
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly queues: readonly LocalQueue[];
  readonly tables: readonly ProvisionedTable[];
  readonly workers: readonly LocalWorker[];
  /**
   * The local EventBridge Scheduler (lib/local/scheduler/): fires the template's schedules and
   * those created through its endpoint; fire a schedule now, inject duplicate deliveries, read
   * its firings and counters.
   */
  readonly scheduler: LocalScheduler;
  /** Resolved stack outputs by output logical id. */
  readonly outputs: Readonly<Record<string, string>>;
  /** Differences from AWS met while starting (TTL unsupported, skipped mappings, outputs without value...). */
  readonly warnings: readonly string[];
  /** `logicalId (Type)` of the resources with no local meaning. */
  readonly skippedResources: readonly string[];
  /** What synthesis did; undefined with `synthesize: 'never'`. */
  readonly synth: SynthResult | undefined;
  /**
   * A queue by logical id, physical name, URL, ARN, or the `JOBS_QUEUE_NAME` of the worker that
   * consumes it. @throws {LocalRuntimeError} when none matches.
   */
  queue(selector: string): LocalQueue;
  /** A worker by mapping or function logical id, function name, or `JOBS_QUEUE_NAME`. @throws {LocalRuntimeError} */
  worker(selector: string): LocalWorker;
  /** Counters per function and totals. */
  stats(): RuntimeStats;
  /** Depth and oldest-message age of a queue (selector as in {@link queue}). */
  queueDepth(selector: string): Promise<QueueDepth>;
  /** Loses the responses of the next `count` successful invocations of a function (selector as in {@link worker}). */
  loseNextResponses(functionSelector: string, count: number): void;
  /** Sets the lost-response probability of a function, or of all with `*`. @throws {RangeError} outside [0, 1] */
  setLostResponseRate(functionSelector: string, rate: number): void;
  /** Counters of the fault proxies (summed); undefined without `awsFaults`. */
  awsFaultStats(): FaultProxyStats | undefined;
  /**
   * Reads the stack's template and assets again from the assembly directory (after a new synth)
   * and makes each running function whose code asset, handler or environment changed run the new
   * one (FunctionHost.reload: new invocations on the new code, in-flight ones finish on theirs).
   * Queues, tables and their messages stay as they are; added or removed resources need a restart.
   * @returns the logical ids of the functions reloaded (empty when nothing changed).
   * @throws {CloudAssemblyError} / {TemplateResolutionError} when the new assembly cannot be read.
   */
  reloadFunctions(): readonly string[];
  /**
   * The X-Ray segment documents the functions sent (the subsegments of traced jobs), oldest
   * first: Lambda's X-Ray daemon is stood in for by a local UDP sink (xray-daemon.ts).
   */
  traceSegments(): readonly XraySegmentDocument[];
  /** Changes the AWS fault rates from now on (missing kinds become 0). @throws {RangeError} without `awsFaults`, or on a bad rate. */
  setAwsFaultRates(rates: Partial<AwsFaultRates>): void;
  /**
   * Resolves when the watched queues hold no message (visible, in flight or delayed) and no batch
   * is being processed, twice in a row. @throws {DrainTimeoutError} after `timeoutMs`.
   */
  waitUntilDrained(options?: DrainOptions): Promise<void>;
  /**
   * Stops the pollers (pending long polls are aborted), waits up to `graceMs` for invocations in
   * progress, terminates the execution environments, destroys the clients and stops the embedded
   * emulators. Idempotent; leaves no open handle.
   */
  stop(options?: { readonly graceMs?: number }): Promise<void>;
}
