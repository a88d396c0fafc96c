/**
 * `startLocalRuntime`: the deployed stack running on this machine. Synthesizes (or reuses an
 * up-to-date cdk.out), starts the embedded emulators (or attaches to external endpoints),
 * creates the queues, DLQs and tables from the synthesized template, and emulates every SQS
 * event source mapping against the functions' bundled code, each function in its own execution
 * environments with its own environment variables.
 *
 * ```ts
 * const rt = await startLocalRuntime({ environment: { EXTERNAL_API_URL: api.url } });
 * await rt.sqs.send(new SendMessageCommand({ QueueUrl: rt.queue('payments').url, MessageBody }));
 * await rt.waitUntilDrained();
 * console.log(rt.stats().totals, await rt.queueDepth(rt.queue('payments').deadLetterQueue!.url));
 * await rt.stop();
 * ```
 */
import { resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type AssemblyStack, readStack } from './cloud-assembly.ts';
import { type EndpointOptions, type Endpoints, type RunningEmulators, startEmulators } from './emulators.ts';
import { DrainTimeoutError, LocalRuntimeError } from './errors.ts';
import {
  EventSourceMappingPoller,
  type EventSourceMappingPollerOptions,
  emptyStats,
  type FunctionStats,
  type InvocationReport,
} from './event-source-mapping.ts';
import {
  type AwsFaultRates,
  exemptFromFaults,
  type FaultProxy,
  type FaultProxyStats,
  startFaultProxy,
  sumFaultProxyStats,
} from './fault-proxy.ts';
import { LostResponseFault, seededRandom } from './faults.ts';
import {
  type FunctionDefinition,
  functionEnvironment,
  type LocalCredentials,
  resolveFunction,
} from './function-config.ts';
import { FunctionHost, type FunctionLogLine } from './function-host.ts';
import { type LocalTracing, startLocalTracing } from './local-tracing.ts';
import type { ProvisionedQueue } from './provision/queues.ts';
import { type ProvisionedStack, provisionStack } from './provision/stack.ts';
import type { ProvisionedTable } from './provision/tables.ts';
import { type EnsureSynthesizedOptions, ensureSynthesized, type SynthResult } from './synth.ts';
import { functionTracingOf } from './xray.ts';
import type { XraySegmentDocument } from './xray-daemon.ts';

/** Default pollers (concurrent invocations) of a mapping without `ScalingConfig.MaximumConcurrency`. */
export const DEFAULT_MAPPING_CONCURRENCY = 5;
/** Region when neither the option, `SQS_JOBS_REGION` nor the stack's environment gives one. */
export const DEFAULT_REGION = 'us-east-1';

/** Environment variables read by {@link startLocalRuntime} (besides the endpoint ones, see emulators.ts). */
export const RUNTIME_ENV = {
  /** Region of the local run. */
  region: 'SQS_JOBS_REGION',
  /** `1` / `true`: print the functions' output on stderr, prefixed with the function's logical id. */
  functionLogs: 'SQS_JOBS_FUNCTION_LOGS',
} as const;

/** Options of {@link startLocalRuntime}. Every field is optional. */
export interface LocalRuntimeOptions {
  /** Project root (cdk.json, node_modules). @default process.cwd() */
  readonly projectRoot?: string;
  /** Cloud assembly directory. @default `<projectRoot>/cdk.out` */
  readonly assemblyDir?: string;
  /**
   * `auto`: synthesize when cdk.out is missing or older than a source ({@link ensureSynthesized});
   * `always`; `never`: read cdk.out as it is. @default 'auto'
   */
  readonly synthesize?: 'auto' | 'always' | 'never';
  /** Custom synthesis, see {@link EnsureSynthesizedOptions.synthesize}. */
  readonly synthesizer?: EnsureSynthesizedOptions['synthesize'];
  /** Stack artifact id or name; needed only when the assembly holds several stacks. */
  readonly stackName?: string;
  /**
   * External endpoints; a service without one gets its embedded emulator. Read after these
   * options: `SQS_JOBS_ENDPOINT_URL`, `SQS_JOBS_SQS_ENDPOINT`, `SQS_JOBS_DYNAMODB_ENDPOINT`.
   */
  readonly endpoints?: EndpointOptions;
  /** Where the `SQS_JOBS_*` variables are read from. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** @default env `SQS_JOBS_REGION`, else the stack's region, else 'us-east-1' */
  readonly region?: string;
  /** Credentials for the emulators and the functions. @default `local` / `local` */
  readonly credentials?: LocalCredentials;
  /** Template parameter values over their `Default`s. */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** Variables added to every function's environment (win over the template's). */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Variables for one function, keyed by function selector (logical id, function name, or the
   * `JOBS_QUEUE_NAME` of its environment); they win over `environment`.
   */
  readonly functionEnvironment?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Pollers of a mapping without `MaximumConcurrency`. Integer >= 1. @default 5 */
  readonly defaultMaximumConcurrency?: number;
  /**
   * Probability in [0, 1] that a successful invocation's response is lost (the batch is treated
   * as failed after the function ran). A number for every function, or a map keyed by function
   * selector (`*` for the rest). @default 0
   */
  readonly lostResponseRate?: number | Readonly<Record<string, number>>;
  /** Seed of the fault decisions. @default 1 */
  readonly seed?: number;
  /**
   * The functions' stdout/stderr: `ignore`, `inherit` (to this process's stderr, each line
   * prefixed with `[logicalId]`), or a callback. @default `inherit` when env
   * `SQS_JOBS_FUNCTION_LOGS` is `1`/`true`, else `ignore`
   */
  readonly functionLogs?: 'ignore' | 'inherit' | ((line: FunctionLogLine) => void);
  /** Called after each invocation is settled. */
  readonly onInvocation?: (report: InvocationReport) => void;
  /** Poll / delete errors of the mappings (they retry on their own). @default ignored */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the local runtime's notes go, one line each (a record held back by the emulated
   * recursive loop detection...). @default stderr, as `note: <text>`
   */
  readonly onNote?: (note: string) => void;
  /** Queues/tables that already exist on an external endpoint: `recreate` or `fail`. @default 'recreate' */
  readonly existingResources?: 'recreate' | 'fail';
  /** Long-poll wait of the mappings' ReceiveMessage calls, in seconds (0–20). @default 20 */
  readonly receiveWaitTimeSeconds?: number;
  /**
   * Initialise every function's execution environments (one per possible concurrent invocation)
   * before polling starts, and replace one discarded after a timeout or crash at once, like
   * provisioned concurrency: invocations then rarely wait for an init phase. Without it an
   * environment starts on the invocation that needs it, as on-demand Lambda does (its init time
   * then runs against the queue's visibility timeout). @default false
   */
  readonly prewarm?: boolean;
  /**
   * Fault injection at the AWS API boundary: a fault proxy (fault-proxy.ts) starts in front of
   * each endpoint (one per distinct endpoint), and the functions, the event source mappings'
   * pollers and clients on {@link LocalRuntime.endpoints} go through it and meet these faults
   * (throttling and 5xx of DynamoDB, 5xx of SQS send / receive / delete, responses lost after the
   * operation). The runtime's own clients ({@link LocalRuntime.sqs}, {@link LocalRuntime.dynamodb}:
   * provisioning, queue depths, reading results) are exempt. Seeded by `seed`. Undefined: no
   * proxy, the endpoints are the emulators'. @default undefined
   */
  readonly awsFaults?: Partial<AwsFaultRates>;
  /**
   * Fault injection: kill an execution environment when a `fetch` response of its function
   * carries `x-sqs-jobs-fault: kill-caller` (see {@link FunctionHostOptions.killOnFaultHeader}).
   * @default false
   */
  readonly killOnFaultHeader?: boolean;
  /**
   * Receive from each FIFO queue one call at a time, short polls standing in for long polls
   * (see {@link EventSourceMappingPollerOptions.serializeFifoReceives}): for an SQS emulator whose
   * FIFO group lock does not hold under concurrent long polls (moto 5.2.1). @default false
   */
  readonly serializeFifoReceives?: boolean;
  /**
   * `VisibilityTimeout` of every queue an enabled event source mapping reads, in seconds (a local
   * override of the template's), set before polling starts: an emulator may take a long poll's
   * visibility timeout from the queue when the poll begins (moto does), so a change made later
   * would miss the first batches. Undefined keeps the template's. @default undefined
   */
  readonly visibilityTimeoutSeconds?: number;
}

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
   * fault proxies' in front of them (a client on these meets the faults).
   */
  readonly endpoints: Endpoints;
  readonly credentials: LocalCredentials;
  /** Clients on the endpoints in use (destroyed by `stop`); exempt from `awsFaults`. */
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly queues: readonly LocalQueue[];
  readonly tables: readonly ProvisionedTable[];
  readonly workers: readonly LocalWorker[];
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

function truthy(value: string | undefined): boolean {
  return value === '1' || value?.toLowerCase() === 'true';
}

/**
 * Starts the stack locally. See the module comment and {@link LocalRuntimeOptions}.
 * @throws {SynthError} when synthesis fails.
 * @throws {CloudAssemblyError} when cdk.out or the stack cannot be read.
 * @throws {TemplateResolutionError} / {UnsupportedIntrinsicError} when the template uses something
 *   that cannot resolve locally (the message names the intrinsic and the resource).
 * @throws {ProvisionError} when an emulator refuses a queue or table.
 * @throws {UnsupportedFunctionError} when a mapped function cannot run locally.
 * Whatever it started is stopped again before it throws.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const env = options.env ?? process.env;
  const projectRoot = resolve(options.projectRoot ?? process.cwd());
  const assemblyDir = resolve(options.assemblyDir ?? resolve(projectRoot, 'cdk.out'));
  const mode = options.synthesize ?? 'auto';
  const synth =
    mode === 'never'
      ? undefined
      : await ensureSynthesized({
          projectRoot,
          outdir: assemblyDir,
          force: mode === 'always',
          synthesize: options.synthesizer,
        });
  const stack = readStack(assemblyDir, options.stackName);
  const region = options.region ?? (env[RUNTIME_ENV.region] || undefined) ?? stack.region ?? DEFAULT_REGION;
  const credentials = options.credentials ?? { accessKeyId: 'local', secretAccessKey: 'local' };
  const emulators = await startEmulators(options.endpoints, env);
  const proxies: FaultProxy[] = [];
  let endpoints = emulators.endpoints;
  let tracing: LocalTracing | undefined;
  try {
    // SQS keeps each send's trace header (AWSTraceHeader): emulated in front of the endpoint.
    tracing = await startLocalTracing(endpoints.sqs);
    endpoints = { ...endpoints, sqs: tracing.proxy.url };
    if (options.awsFaults !== undefined) {
      const seed = options.seed ?? 1;
      const byTarget = new Map<string, FaultProxy>();
      for (const target of new Set([endpoints.sqs, endpoints.dynamodb])) {
        const proxy = await startFaultProxy({
          target,
          rates: options.awsFaults,
          seed: seed + 104_729 * (proxies.length + 1),
        });
        proxies.push(proxy);
        byTarget.set(target, proxy);
      }
      endpoints = {
        ...endpoints,
        sqs: (byTarget.get(endpoints.sqs) as FaultProxy).url,
        dynamodb: (byTarget.get(endpoints.dynamodb) as FaultProxy).url,
      };
    }
  } catch (error) {
    await Promise.all(proxies.map((p) => p.close()));
    await tracing?.close();
    await emulators.stop();
    throw error;
  }
  const clientConfig = (endpoint: string) => ({ endpoint, region, credentials, maxAttempts: 3 });
  const sqs = exemptFromFaults(new SQSClient(clientConfig(endpoints.sqs)));
  const dynamodb = exemptFromFaults(new DynamoDBClient(clientConfig(endpoints.dynamodb)));
  // The pollers stand for Lambda's own event source mapping: they meet the SQS faults.
  const pollerSqs = proxies.length > 0 ? new SQSClient(clientConfig(endpoints.sqs)) : sqs;
  const hosts: FunctionHost[] = [];
  try {
    const provisioned = await provisionStack({
      stack,
      sqs,
      dynamodb,
      sqsEndpoint: endpoints.sqs,
      region,
      parameters: options.parameters,
      existing: options.existingResources,
    });
    const { runtime, pollers } = buildRuntime({
      options,
      env,
      projectRoot,
      stack,
      provisioned,
      emulators,
      endpoints,
      proxies,
      sqs,
      pollerSqs,
      dynamodb,
      credentials,
      synth,
      hosts,
      tracing,
    });
    if (options.visibilityTimeoutSeconds !== undefined) {
      for (const url of new Set(runtime.workers.filter((w) => w.enabled).map((w) => w.queueUrl))) {
        await sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: url,
            Attributes: { VisibilityTimeout: String(options.visibilityTimeoutSeconds) },
          }),
        );
      }
    }
    if (options.prewarm) await Promise.all(hosts.map((h) => h.warmUp()));
    for (const p of pollers) p.start();
    return runtime;
  } catch (error) {
    await Promise.all(hosts.map((h) => h.stop()));
    sqs.destroy();
    if (pollerSqs !== sqs) pollerSqs.destroy();
    dynamodb.destroy();
    await Promise.all(proxies.map((p) => p.close()));
    await tracing.close();
    await emulators.stop();
    throw error;
  }
}

interface BuildInput {
  readonly options: LocalRuntimeOptions;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly projectRoot: string;
  readonly stack: AssemblyStack;
  readonly provisioned: ProvisionedStack;
  readonly emulators: RunningEmulators;
  /** The endpoints in use: the emulators', or the fault proxies'. */
  readonly endpoints: Endpoints;
  readonly proxies: readonly FaultProxy[];
  readonly sqs: SQSClient;
  /** Client of the pollers: `sqs`, or one that is not exempt from the AWS faults. */
  readonly pollerSqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly credentials: LocalCredentials;
  readonly synth: SynthResult | undefined;
  /** Filled with every host created, so the caller can stop them on failure. */
  readonly hosts: FunctionHost[];
  readonly tracing: LocalTracing;
}

function buildRuntime(input: BuildInput): { runtime: LocalRuntime; pollers: EventSourceMappingPoller[] } {
  const {
    options,
    env,
    projectRoot,
    stack,
    provisioned,
    emulators,
    endpoints,
    proxies,
    sqs,
    dynamodb,
    credentials,
  } = input;
  const region = provisioned.region;
  const note = options.onNote ?? ((text: string) => process.stderr.write(`note: ${text}\n`));
  const rawProperties = (logicalId: string): Readonly<Record<string, unknown>> =>
    (provisioned.functions.find((f) => f.logicalId === logicalId)?.resource.Properties ?? {}) as Record<
      string,
      unknown
    >;
  const warnings = [...provisioned.warnings];
  const defaultConcurrency = options.defaultMaximumConcurrency ?? DEFAULT_MAPPING_CONCURRENCY;
  if (!Number.isInteger(defaultConcurrency) || defaultConcurrency < 1) {
    throw new RangeError(`defaultMaximumConcurrency must be an integer >= 1, got ${defaultConcurrency}`);
  }

  const byArn = new Map(provisioned.queues.map((q) => [q.arn, q]));
  const dlqArns = new Set(provisioned.queues.map((q) => q.redrive?.deadLetterTargetArn).filter(Boolean));
  const queues: LocalQueue[] = provisioned.queues.map((q) => {
    const dlq = q.redrive ? byArn.get(q.redrive.deadLetterTargetArn) : undefined;
    return {
      ...q,
      deadLetterQueue:
        dlq && q.redrive
          ? {
              logicalId: dlq.logicalId,
              name: dlq.name,
              url: dlq.url,
              arn: dlq.arn,
              maxReceiveCount: q.redrive.maxReceiveCount,
            }
          : undefined,
      isDeadLetterQueue: dlqArns.has(q.arn),
    };
  });

  // Functions with at least one mapping, resolved once each.
  const definitions = new Map<string, FunctionDefinition>();
  for (const m of provisioned.eventSourceMappings) {
    if (definitions.has(m.functionLogicalId)) continue;
    const fn = provisioned.functions.find((f) => f.logicalId === m.functionLogicalId);
    if (fn) definitions.set(fn.logicalId, resolveFunction(stack, provisioned.resolver, fn));
  }

  const jobQueueNameOf = (fn: FunctionDefinition) => fn.templateEnvironment.JOBS_QUEUE_NAME;
  const matchesFunction = (fn: FunctionDefinition, selector: string) =>
    fn.logicalId === selector || fn.name === selector || jobQueueNameOf(fn) === selector;
  const functionFor = (selector: string): FunctionDefinition => {
    const found = [...definitions.values()].find((fn) => matchesFunction(fn, selector));
    if (!found) {
      throw new LocalRuntimeError(
        `no mapped function matches ${JSON.stringify(selector)} (logical id, function name or JOBS_QUEUE_NAME); known: ${[...definitions.values()].map((f) => f.logicalId).join(', ')}`,
        { context: { selector } },
      );
    }
    return found;
  };
  for (const key of Object.keys(options.functionEnvironment ?? {})) functionFor(key);

  const logSink = options.functionLogs ?? (truthy(env[RUNTIME_ENV.functionLogs]) ? 'inherit' : 'ignore');
  const onLog =
    logSink === 'ignore'
      ? undefined
      : logSink === 'inherit'
        ? (l: FunctionLogLine) => process.stderr.write(`[${l.functionLogicalId}] ${l.line}\n`)
        : logSink;

  const seed = options.seed ?? 1;
  const rateFor = (fn: FunctionDefinition): number => {
    const r = options.lostResponseRate;
    if (r === undefined || typeof r === 'number') return r ?? 0;
    const key = Object.keys(r).find((k) => k !== '*' && matchesFunction(fn, k));
    return key !== undefined ? (r[key] as number) : (r['*'] ?? 0);
  };
  if (options.lostResponseRate !== undefined && typeof options.lostResponseRate === 'object') {
    for (const key of Object.keys(options.lostResponseRate)) if (key !== '*') functionFor(key);
  }

  const stats = new Map<string, FunctionStats>();
  const faults = new Map<string, LostResponseFault>();
  const fnHosts = new Map<string, FunctionHost>();
  const workers: LocalWorker[] = [];
  const pollers: EventSourceMappingPoller[] = [];
  let index = 0;
  const fnEnvs = new Map<string, Record<string, string>>();
  for (const fn of definitions.values()) {
    const overrides = { ...options.environment };
    for (const [key, vars] of Object.entries(options.functionEnvironment ?? {})) {
      if (matchesFunction(fn, key)) Object.assign(overrides, vars);
    }
    fnEnvs.set(
      fn.logicalId,
      functionEnvironment({
        fn,
        region,
        endpoints,
        credentials,
        overrides: { ...input.tracing.functionEnvironment, ...overrides },
      }),
    );
    stats.set(fn.logicalId, emptyStats());
    faults.set(fn.logicalId, new LostResponseFault(rateFor(fn), seededRandom(seed + 7919 * index++)));
  }

  for (const m of provisioned.eventSourceMappings) {
    const fn = definitions.get(m.functionLogicalId) as FunctionDefinition;
    const queue = queues.find((q) => q.logicalId === m.queueLogicalId) as LocalQueue;
    const fnEnv = fnEnvs.get(fn.logicalId) as Record<string, string>;
    const concurrency = Math.max(1, m.maximumConcurrency ?? defaultConcurrency);
    const enabled = m.enabled && fn.reservedConcurrency !== 0;
    if (m.enabled && !enabled)
      warnings.push(`mapping ${m.logicalId} is not polled: ${fn.logicalId} has reserved concurrency 0`);
    workers.push({
      mappingLogicalId: m.logicalId,
      functionLogicalId: fn.logicalId,
      functionName: fn.name,
      jobQueueName: jobQueueNameOf(fn),
      queueLogicalId: queue.logicalId,
      queueUrl: queue.url,
      queueArn: queue.arn,
      env: fnEnv,
      handler: fn.handler,
      assetDir: fn.assetDir,
      timeoutSeconds: fn.timeoutSeconds,
      memorySizeMb: fn.memorySizeMb,
      batchSize: m.batchSize,
      maximumBatchingWindowSeconds: m.maximumBatchingWindowSeconds,
      concurrency,
      reportBatchItemFailures: m.reportBatchItemFailures,
      enabled,
    });
  }

  for (const fn of definitions.values()) {
    const enabledWorkers = workers.filter((w) => w.functionLogicalId === fn.logicalId && w.enabled);
    if (enabledWorkers.length === 0) continue;
    const wanted = enabledWorkers.reduce((sum, w) => sum + w.concurrency, 0);
    const host = new FunctionHost({
      fn,
      env: fnEnvs.get(fn.logicalId) as Record<string, string>,
      projectRoot,
      maxEnvironments: Math.max(1, Math.min(wanted, fn.reservedConcurrency ?? wanted)),
      onLog,
      prewarm: options.prewarm,
      killOnFaultHeader: options.killOnFaultHeader,
    });
    fnHosts.set(fn.logicalId, host);
    input.hosts.push(host);
    for (const w of enabledWorkers) {
      pollers.push(
        new EventSourceMappingPoller({
          mappingLogicalId: w.mappingLogicalId,
          functionLogicalId: fn.logicalId,
          queue: { url: w.queueUrl, arn: w.queueArn },
          host,
          sqs: input.pollerSqs,
          region,
          batchSize: w.batchSize,
          maximumBatchingWindowSeconds: w.maximumBatchingWindowSeconds,
          reportBatchItemFailures: w.reportBatchItemFailures,
          concurrency: w.concurrency,
          stats: stats.get(fn.logicalId) as FunctionStats,
          fault: faults.get(fn.logicalId),
          onInvocation: options.onInvocation,
          onError: options.onError,
          tracing: {
            ...functionTracingOf(fn.arn, rawProperties(fn.logicalId), (value, key) =>
              provisioned.resolver.resolve(value as never, `Resources.${fn.logicalId}.Properties.${key}`),
            ),
            headerOf: input.tracing.proxy.headerOf,
            onStopped: (stopped) =>
              note(
                `${fn.logicalId}: message ${stopped.messageId} would be invocation ${stopped.invocation} of its chain (RecursiveLoop is not Allow): held back as Lambda's recursive loop detection stops it (RecursiveInvocationException); it stays on ${w.queueUrl}, comes back after the visibility timeout and moves to the DLQ after maxReceiveCount receives`,
              ),
          },
          waitTimeSeconds: options.receiveWaitTimeSeconds,
          serializeFifoReceives: options.serializeFifoReceives,
        }),
      );
    }
  }
  const queueFor = (selector: string): LocalQueue => {
    const direct = queues.find(
      (q) => q.logicalId === selector || q.name === selector || q.url === selector || q.arn === selector,
    );
    if (direct) return direct;
    const viaWorker = workers.find((w) => w.jobQueueName === selector);
    const q = viaWorker && queues.find((x) => x.logicalId === viaWorker.queueLogicalId);
    if (q) return q;
    throw new LocalRuntimeError(
      `no queue matches ${JSON.stringify(selector)} (logical id, name, URL, ARN or JOBS_QUEUE_NAME); known: ${queues.map((x) => x.logicalId).join(', ')}`,
      { context: { selector } },
    );
  };

  const queueDepth = async (selector: string): Promise<QueueDepth> => {
    const q = queueFor(selector);
    const out = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: q.url,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    const a = out.Attributes ?? {};
    let oldestMessageAgeMs: number | undefined;
    const inspected = emulators.fauxqs?.inspectQueue(q.name);
    if (inspected) {
      const sent = [
        ...inspected.messages.ready,
        ...inspected.messages.delayed,
        ...inspected.messages.inflight.map((e) => e.message),
      ].map((m) => m.sentTimestamp);
      oldestMessageAgeMs = sent.length === 0 ? 0 : Math.max(0, Date.now() - Math.min(...sent));
    }
    return {
      url: q.url,
      visible: Number(a.ApproximateNumberOfMessages ?? 0),
      notVisible: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
      oldestMessageAgeMs,
    };
  };

  let stopping: Promise<void> | undefined;
  const stop = (stopOptions?: { readonly graceMs?: number }): Promise<void> => {
    stopping ??= (async () => {
      const graceMs = stopOptions?.graceMs ?? 5_000;
      const pollersDone = Promise.all(pollers.map((p) => p.stop()));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pollersDone, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      await Promise.all([...fnHosts.values()].map((h) => h.stop()));
      await pollersDone;
      sqs.destroy();
      if (input.pollerSqs !== sqs) input.pollerSqs.destroy();
      dynamodb.destroy();
      await Promise.all(proxies.map((p) => p.close()));
      await input.tracing.close();
      await emulators.stop();
    })();
    return stopping;
  };

  const snapshot = (): RuntimeStats => {
    const functions: Record<string, FunctionStats> = {};
    const totals = emptyStats();
    for (const [id, s] of stats) {
      functions[id] = { ...s };
      for (const key of Object.keys(totals) as (keyof FunctionStats)[]) totals[key] += s[key];
    }
    return { functions, totals };
  };

  const runtime: LocalRuntime = {
    stackName: provisioned.stackName,
    region,
    accountId: provisioned.accountId,
    endpoints,
    credentials,
    sqs,
    dynamodb,
    queues,
    tables: provisioned.tables,
    workers,
    outputs: provisioned.outputs,
    warnings,
    skippedResources: provisioned.skipped,
    synth: input.synth,
    queue: queueFor,
    worker(selector) {
      const w = workers.find(
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
    },
    stats: snapshot,
    queueDepth,
    loseNextResponses(functionSelector, count) {
      (faults.get(functionFor(functionSelector).logicalId) as LostResponseFault).loseNext(count);
    },
    setLostResponseRate(functionSelector, rate) {
      const targets =
        functionSelector === '*'
          ? [...faults.values()]
          : [faults.get(functionFor(functionSelector).logicalId)];
      for (const f of targets) f?.setRate(rate);
    },
    traceSegments: () => input.tracing.daemon.segments(),
    awsFaultStats() {
      return proxies.length === 0 ? undefined : sumFaultProxyStats(proxies.map((p) => p.stats()));
    },
    setAwsFaultRates(rates) {
      if (proxies.length === 0)
        throw new RangeError('the runtime was started without awsFaults: no fault proxy');
      for (const p of proxies) p.setRates(rates);
    },
    async waitUntilDrained(drain = {}) {
      const timeoutMs = drain.timeoutMs ?? 60_000;
      const interval = drain.pollIntervalMs ?? 50;
      const watched = drain.queues?.map((s) => queueFor(s).url) ?? [
        ...new Set(workers.filter((w) => w.enabled).map((w) => w.queueUrl)),
      ];
      const deadline = Date.now() + timeoutMs;
      let quiet = 0;
      let depths: QueueDepth[] = [];
      for (;;) {
        depths = await Promise.all(watched.map((url) => queueDepth(url)));
        const busy = pollers.some((p) => p.inFlight > 0);
        const empty = depths.every((d) => d.visible + d.notVisible + d.delayed === 0);
        quiet = empty && !busy ? quiet + 1 : 0;
        if (quiet >= 2) return;
        if (Date.now() > deadline) {
          throw new DrainTimeoutError(
            `queues not drained after ${timeoutMs} ms: ${depths.map((d) => `${d.url} visible=${d.visible} notVisible=${d.notVisible} delayed=${d.delayed}`).join('; ')}${busy ? '; batches in progress' : ''}`,
            { context: { depths } },
          );
        }
        await new Promise((r) => setTimeout(r, interval));
      }
    },
    stop,
  };
  return { runtime, pollers };
}
