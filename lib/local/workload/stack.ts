/** The sample stack started locally for a workload: the local runtime and the fake external service. */
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DomainRepository } from '../../sample/domain.ts';
import { type ExternalService, startExternalService } from '../external-service.ts';
import { type LocalRuntime, type LocalRuntimeOptions, RUNTIME_ENV, startLocalRuntime } from '../runtime.ts';
import type { LocalRunOptions } from '../workload.ts';
import { addEmfMetrics } from './emf-metrics.ts';
import { targetOf, type WorkloadTarget } from './target.ts';

/** Options of {@link startSampleStack}. */
export type SampleStackOptions = Pick<
  LocalRunOptions,
  | 'seed'
  | 'faults'
  | 'lostResponseRate'
  | 'visibilityTimeoutSeconds'
  | 'endpointUrl'
  | 'projectRoot'
  | 'externalTimeoutMs'
  | 'externalService'
  | 'onStep'
> & {
  /** Called after each invocation is settled (see {@link LocalRuntimeOptions.onInvocation}). */
  readonly onInvocation?: LocalRuntimeOptions['onInvocation'];
};

/** The sample stack running locally with its fake external service. */
export interface SampleStack {
  readonly runtime: LocalRuntime;
  readonly service: ExternalService;
  readonly target: WorkloadTarget;
  /** The domain table. */
  readonly repository: DomainRepository;
  /** Running sums of the workers' EMF metrics (`JobCompleted`, `JobDuplicateAbsorbed`, ...). */
  readonly metrics: Readonly<Record<string, number>>;
  /** The runtime's warnings and the local overrides applied. */
  readonly notes: readonly string[];
  /** Stops the runtime and the fake service. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the fake external service and the local runtime (synthesizing cdk.out when stale) with
 * `EXTERNAL_API_URL` pointed at the service, and collects the workers' metrics from their stdout.
 * `SQS_JOBS_FUNCTION_LOGS=1` also prints the functions' logs on stderr.
 * @throws what {@link startLocalRuntime} throws; whatever was started is stopped first.
 */
export async function startSampleStack(options: SampleStackOptions = {}): Promise<SampleStack> {
  const step = options.onStep ?? (() => {});
  const seed = options.seed ?? 1;
  const notes: string[] = [];
  step('starting the fake payment / mail / invoice service');
  const externalTimeoutMs = options.externalTimeoutMs ?? 5_000;
  const service = await startExternalService({
    hangMs: externalTimeoutMs + 1_000,
    ...options.externalService,
    faults: options.faults,
    seed,
  });
  const metrics: Record<string, number> = {};
  const showLogs =
    process.env[RUNTIME_ENV.functionLogs] === '1' || process.env[RUNTIME_ENV.functionLogs] === 'true';
  let runtime: LocalRuntime | undefined;
  try {
    step('synthesizing (or reusing) cdk.out and starting the local runtime');
    runtime = await startLocalRuntime({
      ...(options.projectRoot ? { projectRoot: options.projectRoot } : {}),
      ...(options.endpointUrl ? { endpoints: { endpointUrl: options.endpointUrl } } : {}),
      environment: { EXTERNAL_API_URL: service.url, EXTERNAL_API_TIMEOUT_MS: String(externalTimeoutMs) },
      lostResponseRate: options.lostResponseRate ?? 0,
      seed,
      // Execution environments initialised during boot, so cold starts do not stall the first jobs.
      prewarm: true,
      onInvocation: options.onInvocation,
      functionLogs: (line) => {
        if (line.stream === 'stdout') addEmfMetrics(line.line, metrics);
        if (showLogs) process.stderr.write(`[${line.functionLogicalId}] ${line.line}\n`);
      },
    });
    notes.push(...runtime.warnings);
    const target = targetOf(runtime);
    if (options.visibilityTimeoutSeconds !== undefined) {
      for (const url of Object.values(target.queueUrls)) {
        await runtime.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: url,
            Attributes: { VisibilityTimeout: String(options.visibilityTimeoutSeconds) },
          }),
        );
      }
      notes.push(
        `local override: visibility timeout of the main queues set to ${options.visibilityTimeoutSeconds} s (deployed: 6 × function timeout) so lost responses come back within the run`,
      );
    }
    const running = runtime;
    let stopped: Promise<void> | undefined;
    return {
      runtime: running,
      service,
      target,
      repository: new DomainRepository({ tableName: target.appTableName, client: target.dynamo }),
      metrics,
      notes,
      stop: () => {
        stopped ??= (async () => {
          await running.stop();
          await service.close();
        })();
        return stopped;
      },
    };
  } catch (error) {
    await runtime?.stop();
    await service.close();
    throw error;
  }
}
