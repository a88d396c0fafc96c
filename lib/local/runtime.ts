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
 *
 * How a template becomes running emulators and functions, step by step:
 * 1. the cloud assembly: synth.ts (synthesize when stale), cloud-assembly.ts (read the stack);
 * 2. the emulators: emulators.ts (fauxqs, dynalite, or external endpoints);
 * 3. the AWS boundary in front of them: runtime/boundary.ts (trace-header proxy, fault proxies,
 *    the runtime's clients);
 * 4. the resources: provision/ (queues, tables, functions, mappings, schedules, in dependency
 *    order), then the local EventBridge Scheduler with the template's schedules (runtime/scheduler.ts);
 * 5. the wiring ({@link wire}): runtime/functions.ts (mapped functions and their environments),
 *    runtime/lost-responses.ts, runtime/workers.ts (queues with DLQs, one worker per mapping),
 *    runtime/pollers.ts (function hosts and event source mapping pollers);
 * 6. running: runtime/running.ts ({@link RunningLocalRuntime}: start polling, queries, fault
 *    controls, stop). Its public shape is runtime/api.ts's {@link LocalRuntime}; the options are
 *    runtime/options.ts's. Both are re-exported here, where callers import them from.
 */
import { resolve } from 'node:path';
import { type AssemblyStack, readStack } from './cloud-assembly.ts';
import { type RunningEmulators, startEmulators } from './emulators.ts';
import { emptyStats } from './event-source-mapping.ts';
import type { LocalCredentials } from './function-config.ts';
import type { FunctionHost } from './function-host.ts';
import { type ProvisionedStack, provisionStack } from './provision/stack.ts';
import type { LocalRuntime } from './runtime/api.ts';
import { type AwsBoundary, openAwsBoundary } from './runtime/boundary.ts';
import { functionEnvironments, MappedFunctions } from './runtime/functions.ts';
import { LostResponses } from './runtime/lost-responses.ts';
import {
  DEFAULT_MAPPING_CONCURRENCY,
  DEFAULT_REGION,
  type LocalRuntimeOptions,
  RUNTIME_ENV,
} from './runtime/options.ts';
import { createPollers } from './runtime/pollers.ts';
import { RunningLocalRuntime } from './runtime/running.ts';
import { startRuntimeScheduler } from './runtime/scheduler.ts';
import { linkDeadLetterQueues, planWorkers } from './runtime/workers.ts';
import type { SchedulerEmulator } from './scheduler/index.ts';
import { ensureSynthesized, type SynthResult } from './synth.ts';

export type {
  DrainOptions,
  LocalQueue,
  LocalRuntime,
  LocalWorker,
  QueueDepth,
  RuntimeStats,
} from './runtime/api.ts';
export {
  DEFAULT_MAPPING_CONCURRENCY,
  DEFAULT_REGION,
  type LocalRuntimeOptions,
  RUNTIME_ENV,
} from './runtime/options.ts';

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
  const emulators = await startEmulators(options.endpoints, env, options.ports);
  let boundary: AwsBoundary;
  try {
    boundary = await openAwsBoundary(emulators.endpoints, {
      region,
      credentials,
      awsFaults: options.awsFaults,
      seed: options.seed ?? 1,
      sqsPort: options.ports?.sqs,
    });
  } catch (error) {
    await emulators.stop();
    throw error;
  }
  const hosts: FunctionHost[] = [];
  let scheduler: SchedulerEmulator | undefined;
  try {
    const provisioned = await provisionStack({
      stack,
      sqs: boundary.sqs,
      dynamodb: boundary.dynamodb,
      sqsEndpoint: boundary.endpoints.sqs,
      region,
      parameters: options.parameters,
      existing: options.existingResources,
    });
    const warnings = [...provisioned.warnings];
    scheduler = await startRuntimeScheduler({
      provisioned,
      sqs: boundary.sqs,
      sqsEndpoint: boundary.endpoints.sqs,
      options: options.scheduler,
      port: options.ports?.scheduler,
      seed: options.seed ?? 1,
      onNote: options.onNote ?? ((note) => process.stderr.write(`note: ${note}\n`)),
      warnings,
    });
    const runtime = wire({
      options,
      env,
      projectRoot,
      assemblyDir,
      stack,
      provisioned,
      emulators,
      boundary,
      synth,
      credentials,
      hosts,
      scheduler,
      warnings,
    });
    await runtime.start(options);
    return runtime;
  } catch (error) {
    await Promise.all(hosts.map((h) => h.stop()));
    await scheduler?.stop();
    await boundary.close();
    await emulators.stop();
    throw error;
  }
}

/** What {@link wire} connects. */
interface WireInput {
  readonly options: LocalRuntimeOptions;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly projectRoot: string;
  /** Where the stack is read from again by `reloadFunctions`. */
  readonly assemblyDir: string;
  readonly stack: AssemblyStack;
  readonly provisioned: ProvisionedStack;
  readonly emulators: RunningEmulators;
  readonly boundary: AwsBoundary;
  readonly synth: SynthResult | undefined;
  readonly credentials: LocalCredentials;
  /** Filled with every function host created, so the caller can stop them on failure. */
  readonly hosts: FunctionHost[];
  readonly scheduler: SchedulerEmulator;
  /** Provisioning's warnings and the Scheduler's; the wiring adds its own. */
  readonly warnings: string[];
}

/**
 * Step 5: the provisioned stack wired to its functions: queues linked to their DLQs, mapped
 * functions with their environments and lost-response faults, one worker per mapping, function
 * hosts and pollers (not started).
 * @throws {RangeError} on a bad `defaultMaximumConcurrency` or lost-response rate.
 * @throws {UnsupportedFunctionError} / {TemplateResolutionError} when a mapped function cannot run.
 * @throws {LocalRuntimeError} when a function selector of the options matches no mapped function.
 */
function wire(input: WireInput): RunningLocalRuntime {
  const { options, env, projectRoot, stack, provisioned, emulators, boundary, synth, credentials, hosts } =
    input;
  const { scheduler, warnings } = input;
  const region = provisioned.region;
  const defaultConcurrency = options.defaultMaximumConcurrency ?? DEFAULT_MAPPING_CONCURRENCY;
  if (!Number.isInteger(defaultConcurrency) || defaultConcurrency < 1) {
    throw new RangeError(`defaultMaximumConcurrency must be an integer >= 1, got ${defaultConcurrency}`);
  }
  const queues = linkDeadLetterQueues(provisioned.queues);
  const functions = new MappedFunctions(stack, provisioned);
  const environmentContext = {
    region,
    endpoints: { ...boundary.endpoints, scheduler: scheduler.url },
    credentials,
    tracingEnvironment: boundary.tracing.functionEnvironment,
  };
  const environments = functionEnvironments(functions, options, environmentContext);
  const stats = new Map(functions.all().map((fn) => [fn.logicalId, emptyStats()]));
  const lostResponses = new LostResponses(functions, options.lostResponseRate, options.seed ?? 1);
  const workers = planWorkers({
    provisioned,
    queues,
    functions,
    environments,
    defaultConcurrency,
    warnings,
  });
  const pollers = createPollers({
    options,
    env,
    projectRoot,
    region,
    provisioned,
    functions,
    environments,
    workers,
    stats,
    lostResponses,
    sqs: boundary.pollerSqs,
    tracing: boundary.tracing,
    hosts,
  });
  // The code of the running functions, read again from the assembly (after a new synth): a host
  // whose asset, handler or environment changed loads the new one; queues and tables stay.
  let running = environments;
  const reloadFunctions = (): string[] => {
    const next = readStack(input.assemblyDir, options.stackName);
    const nextFunctions = new MappedFunctions(next, {
      ...provisioned,
      functions: provisioned.functions.map((f) => ({
        ...f,
        resource: next.template.Resources[f.logicalId] ?? f.resource,
      })),
    });
    const nextEnvironments = functionEnvironments(nextFunctions, options, environmentContext);
    const reloaded: string[] = [];
    for (const host of hosts) {
      const { logicalId } = host.fn;
      const fn = nextFunctions.byId(logicalId);
      const fnEnv = nextEnvironments.get(logicalId);
      if (fn === undefined || fnEnv === undefined) continue;
      const same =
        fn.assetDir === host.fn.assetDir &&
        fn.handler === host.fn.handler &&
        JSON.stringify(fnEnv) === JSON.stringify(running.get(logicalId));
      if (same) continue;
      host.reload(fn, fnEnv);
      reloaded.push(logicalId);
    }
    running = nextEnvironments;
    return reloaded;
  };
  return new RunningLocalRuntime(
    {
      reloadFunctions,
      provisioned,
      emulators,
      boundary,
      synth,
      queues,
      workers,
      warnings,
      stats,
      lostResponses,
      hosts,
      pollers,
      scheduler,
    },
    credentials,
  );
}
