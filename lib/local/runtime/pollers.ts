/**
 * What runs the workers: one function host per function with an enabled worker (its execution
 * environments, as many as its workers' pollers, capped by its reserved concurrency), and one
 * event source mapping poller per enabled worker, which receives batches from the queue and
 * invokes the host. Created here, started by running.ts.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { EventSourceMappingPoller, type FunctionStats } from '../event-source-mapping.ts';
import { FunctionHost, type FunctionLogLine } from '../function-host.ts';
import type { LocalTracing } from '../local-tracing.ts';
import type { ProvisionedStack } from '../provision/stack.ts';
import { functionTracingOf } from '../xray.ts';
import type { LocalWorker } from './api.ts';
import type { MappedFunctions } from './functions.ts';
import type { LostResponses } from './lost-responses.ts';
import { type LocalRuntimeOptions, RUNTIME_ENV } from './options.ts';

/** Inputs of {@link createPollers}. */
export interface PollersInput {
  readonly options: LocalRuntimeOptions;
  /** Where `SQS_JOBS_FUNCTION_LOGS` is read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly projectRoot: string;
  readonly region: string;
  readonly provisioned: ProvisionedStack;
  readonly functions: MappedFunctions;
  readonly environments: ReadonlyMap<string, Readonly<Record<string, string>>>;
  readonly workers: readonly LocalWorker[];
  /** Counters by function logical id (the pollers add to them). */
  readonly stats: ReadonlyMap<string, FunctionStats>;
  readonly lostResponses: LostResponses;
  /** The pollers' SQS client (it meets the AWS faults). */
  readonly sqs: SQSClient;
  readonly tracing: LocalTracing;
  /** Filled with every host created, so the caller can stop them should a later one fail. */
  readonly hosts: FunctionHost[];
}

function truthy(value: string | undefined): boolean {
  return value === '1' || value?.toLowerCase() === 'true';
}

/** Where the functions' output goes (`functionLogs`, else `SQS_JOBS_FUNCTION_LOGS`); undefined: nowhere. */
function functionLogSink(input: PollersInput): ((line: FunctionLogLine) => void) | undefined {
  const sink =
    input.options.functionLogs ?? (truthy(input.env[RUNTIME_ENV.functionLogs]) ? 'inherit' : 'ignore');
  if (sink === 'ignore') return undefined;
  if (sink === 'inherit') return (l) => process.stderr.write(`[${l.functionLogicalId}] ${l.line}\n`);
  return sink;
}

/** Creates the hosts (into `input.hosts`) and the pollers, not started. */
export function createPollers(input: PollersInput): EventSourceMappingPoller[] {
  const { options, provisioned } = input;
  const note = options.onNote ?? ((text: string) => process.stderr.write(`note: ${text}\n`));
  const rawProperties = (logicalId: string): Readonly<Record<string, unknown>> =>
    (provisioned.functions.find((f) => f.logicalId === logicalId)?.resource.Properties ?? {}) as Record<
      string,
      unknown
    >;
  const onLog = functionLogSink(input);
  const pollers: EventSourceMappingPoller[] = [];
  for (const fn of input.functions.all()) {
    const enabledWorkers = input.workers.filter((w) => w.functionLogicalId === fn.logicalId && w.enabled);
    if (enabledWorkers.length === 0) continue;
    const wanted = enabledWorkers.reduce((sum, w) => sum + w.concurrency, 0);
    const host = new FunctionHost({
      fn,
      env: input.environments.get(fn.logicalId) as Record<string, string>,
      projectRoot: input.projectRoot,
      maxEnvironments: Math.max(1, Math.min(wanted, fn.reservedConcurrency ?? wanted)),
      onLog,
      prewarm: options.prewarm,
      killOnFaultHeader: options.killOnFaultHeader,
      sourceMaps: options.sourceMaps,
    });
    input.hosts.push(host);
    for (const w of enabledWorkers) {
      pollers.push(
        new EventSourceMappingPoller({
          mappingLogicalId: w.mappingLogicalId,
          functionLogicalId: fn.logicalId,
          queue: { url: w.queueUrl, arn: w.queueArn },
          host,
          sqs: input.sqs,
          region: input.region,
          batchSize: w.batchSize,
          maximumBatchingWindowSeconds: w.maximumBatchingWindowSeconds,
          reportBatchItemFailures: w.reportBatchItemFailures,
          concurrency: w.concurrency,
          stats: input.stats.get(fn.logicalId) as FunctionStats,
          fault: input.lostResponses.of(fn.logicalId),
          onInvocation: options.onInvocation,
          onError: options.onError,
          tracing: {
            ...functionTracingOf(fn.arn, rawProperties(fn.logicalId), (value, key) =>
              provisioned.resolver.resolve(value as never, `Resources.${fn.logicalId}.Properties.${key}`),
            ),
            headerOf: input.tracing.proxy.headerOf,
            onStopped: (stopped, receiptHandle) => {
              note(
                `${fn.logicalId}: message ${stopped.messageId} would be invocation ${stopped.invocation} of its chain (RecursiveLoop is not Allow): held back as Lambda's recursive loop detection stops it (RecursiveInvocationException); it stays on ${w.queueUrl}, comes back after the visibility timeout and moves to the DLQ after maxReceiveCount receives`,
              );
              options.onRecursionStopped?.({
                functionLogicalId: fn.logicalId,
                queueUrl: w.queueUrl,
                messageId: stopped.messageId,
                receiptHandle,
                invocation: stopped.invocation,
              });
            },
          },
          waitTimeSeconds: options.receiveWaitTimeSeconds,
          serializeFifoReceives: options.serializeFifoReceives,
        }),
      );
    }
  }
  return pollers;
}
