/**
 * The local stack while it runs ({@link RunningLocalRuntime}, the {@link LocalRuntime} that
 * `startLocalRuntime` returns): `start` sets the queues up for polling, warms the functions
 * when asked, and starts the pollers; then it answers queries (queues, workers, counters,
 * depths, trace segments) and fault controls; `stop` takes everything down, pollers first,
 * emulators last.
 */
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsFaultRates } from '../aws-faults.ts';
import type { RunningEmulators } from '../emulators.ts';
import { LocalRuntimeError } from '../errors.ts';
import { type EventSourceMappingPoller, emptyStats, type FunctionStats } from '../event-source-mapping.ts';
import { type FaultProxyStats, sumFaultProxyStats } from '../fault-proxy.ts';
import type { FunctionHost } from '../function-host.ts';
import type { ProvisionedStack } from '../provision/stack.ts';
import type { SchedulerEmulator } from '../scheduler/index.ts';
import type { SynthResult } from '../synth.ts';
import type { XraySegmentDocument } from '../xray-daemon.ts';
import type { DrainOptions, LocalQueue, LocalRuntime, LocalWorker, QueueDepth, RuntimeStats } from './api.ts';
import type { AwsBoundary } from './boundary.ts';
import type { LostResponses } from './lost-responses.ts';
import { readQueueDepth, waitUntilDrained } from './queue-depth.ts';

/** What a {@link RunningLocalRuntime} is made of (wired by runtime.ts). */
export interface RuntimeParts {
  readonly provisioned: ProvisionedStack;
  readonly emulators: RunningEmulators;
  readonly boundary: AwsBoundary;
  readonly synth: SynthResult | undefined;
  readonly queues: readonly LocalQueue[];
  readonly workers: readonly LocalWorker[];
  /** Provisioning's warnings and the wiring's. */
  readonly warnings: readonly string[];
  /** Counters by function logical id, added to by the pollers. */
  readonly stats: ReadonlyMap<string, FunctionStats>;
  readonly lostResponses: LostResponses;
  readonly hosts: readonly FunctionHost[];
  readonly pollers: readonly EventSourceMappingPoller[];
  readonly scheduler: SchedulerEmulator;
  /** See {@link LocalRuntime.reloadFunctions}. */
  readonly reloadFunctions: () => readonly string[];
}

/**
 * The running local stack. See {@link LocalRuntime} for each member. Its operations are arrow
 * properties, bound to the instance, so they still work passed around detached
 * (`const { queue } = rt`), as they did when the runtime was a plain object of closures.
 */
export class RunningLocalRuntime implements LocalRuntime {
  readonly stackName: string;
  readonly region: string;
  readonly accountId: string;
  readonly endpoints: LocalRuntime['endpoints'];
  readonly credentials: LocalRuntime['credentials'];
  readonly sqs: LocalRuntime['sqs'];
  readonly dynamodb: LocalRuntime['dynamodb'];
  readonly queues: readonly LocalQueue[];
  readonly tables: LocalRuntime['tables'];
  readonly workers: readonly LocalWorker[];
  readonly scheduler: LocalRuntime['scheduler'];
  readonly outputs: Readonly<Record<string, string>>;
  readonly warnings: readonly string[];
  readonly skippedResources: readonly string[];
  readonly synth: SynthResult | undefined;
  private readonly parts: RuntimeParts;
  private stopping: Promise<void> | undefined;

  constructor(parts: RuntimeParts, credentials: LocalRuntime['credentials']) {
    const { provisioned, boundary } = parts;
    this.parts = parts;
    this.stackName = provisioned.stackName;
    this.region = provisioned.region;
    this.accountId = provisioned.accountId;
    this.endpoints = { ...boundary.endpoints, scheduler: parts.scheduler.url };
    this.credentials = credentials;
    this.sqs = boundary.sqs;
    this.dynamodb = boundary.dynamodb;
    this.queues = parts.queues;
    this.tables = provisioned.tables;
    this.workers = parts.workers;
    this.scheduler = parts.scheduler;
    this.outputs = provisioned.outputs;
    this.warnings = parts.warnings;
    this.skippedResources = provisioned.skipped;
    this.synth = parts.synth;
  }

  /**
   * Starts running: with `visibilityTimeoutSeconds` sets it on every queue an enabled worker
   * reads, with `prewarm` initialises every host's execution environments, then starts the pollers.
   */
  async start(options: {
    readonly visibilityTimeoutSeconds?: number;
    readonly prewarm?: boolean;
  }): Promise<void> {
    if (options.visibilityTimeoutSeconds !== undefined) {
      for (const url of new Set(this.workers.filter((w) => w.enabled).map((w) => w.queueUrl))) {
        await this.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: url,
            Attributes: { VisibilityTimeout: String(options.visibilityTimeoutSeconds) },
          }),
        );
      }
    }
    if (options.prewarm) await Promise.all(this.parts.hosts.map((h) => h.warmUp()));
    for (const p of this.parts.pollers) p.start();
  }

  readonly queue = (selector: string): LocalQueue => {
    const direct = this.queues.find(
      (q) => q.logicalId === selector || q.name === selector || q.url === selector || q.arn === selector,
    );
    if (direct) return direct;
    const viaWorker = this.workers.find((w) => w.jobQueueName === selector);
    const q = viaWorker && this.queues.find((x) => x.logicalId === viaWorker.queueLogicalId);
    if (q) return q;
    throw new LocalRuntimeError(
      `no queue matches ${JSON.stringify(selector)} (logical id, name, URL, ARN or JOBS_QUEUE_NAME); known: ${this.queues.map((x) => x.logicalId).join(', ')}`,
      { context: { selector } },
    );
  };

  readonly worker = (selector: string): LocalWorker => {
    const w = this.workers.find(
      (x) =>
        x.mappingLogicalId === selector ||
        x.functionLogicalId === selector ||
        x.functionName === selector ||
        x.jobQueueName === selector,
    );
    if (!w) {
      throw new LocalRuntimeError(`no worker matches ${JSON.stringify(selector)}`, {
        context: { selector },
      });
    }
    return w;
  };

  readonly stats = (): RuntimeStats => {
    const functions: Record<string, FunctionStats> = {};
    const totals = emptyStats();
    for (const [id, s] of this.parts.stats) {
      functions[id] = { ...s };
      for (const key of Object.keys(totals) as (keyof FunctionStats)[]) totals[key] += s[key];
    }
    return { functions, totals };
  };

  readonly queueDepth = async (selector: string): Promise<QueueDepth> =>
    readQueueDepth(this.sqs, this.parts.emulators, this.queue(selector));

  readonly loseNextResponses = (functionSelector: string, count: number): void => {
    this.parts.lostResponses.loseNext(functionSelector, count);
  };

  readonly setLostResponseRate = (functionSelector: string, rate: number): void => {
    this.parts.lostResponses.setRate(functionSelector, rate);
  };

  readonly traceSegments = (): readonly XraySegmentDocument[] =>
    this.parts.boundary.tracing.daemon.segments();

  readonly reloadFunctions = (): readonly string[] => this.parts.reloadFunctions();

  readonly awsFaultStats = (): FaultProxyStats | undefined => {
    const { proxies } = this.parts.boundary;
    return proxies.length === 0 ? undefined : sumFaultProxyStats(proxies.map((p) => p.stats()));
  };

  readonly setAwsFaultRates = (rates: Partial<AwsFaultRates>): void => {
    const { proxies } = this.parts.boundary;
    if (proxies.length === 0)
      throw new RangeError('the runtime was started without awsFaults: no fault proxy');
    for (const p of proxies) p.setRates(rates);
  };

  readonly waitUntilDrained = async (drain: DrainOptions = {}): Promise<void> =>
    waitUntilDrained({
      urls: drain.queues?.map((s) => this.queue(s).url) ?? [
        ...new Set(this.workers.filter((w) => w.enabled).map((w) => w.queueUrl)),
      ],
      depth: (url) => this.queueDepth(url),
      busy: () => this.parts.pollers.some((p) => p.inFlight > 0),
      timeoutMs: drain.timeoutMs ?? 60_000,
      pollIntervalMs: drain.pollIntervalMs ?? 50,
    });

  readonly stop = (stopOptions?: { readonly graceMs?: number }): Promise<void> => {
    this.stopping ??= (async () => {
      const graceMs = stopOptions?.graceMs ?? 5_000;
      const pollersDone = Promise.all(this.parts.pollers.map((p) => p.stop()));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pollersDone, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      await Promise.all(this.parts.hosts.map((h) => h.stop()));
      await pollersDone;
      await this.parts.scheduler.stop();
      await this.parts.boundary.close();
      await this.parts.emulators.stop();
    })();
    return this.stopping;
  };
}
