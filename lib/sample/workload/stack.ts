/** The sample stack started locally for a workload: the local runtime and the fake external service. */

import { resolveEndpointOptions } from '../../local/emulators.ts';
import {
  type LocalRuntime,
  type LocalRuntimeOptions,
  RUNTIME_ENV,
  startLocalRuntime,
} from '../../local/runtime.ts';
import { DomainRepository } from '../domain.ts';
import { type ExternalService, startExternalService } from '../external-service.ts';
import { SAMPLE_JOB_TIMEOUT_SECONDS } from '../jobs.ts';
import { SAMPLE_RATE_LIMITS_ENV } from '../partner-limit.ts';
import type { LocalRunOptions } from '../workload.ts';
import { addEmfMetrics } from './emf-metrics.ts';
import { targetOf, type WorkloadTarget } from './target.ts';

/** Options of {@link startSampleStack}. */
export type SampleStackOptions = Pick<
  LocalRunOptions,
  | 'seed'
  | 'faults'
  | 'lostResponseRate'
  | 'schedulerDuplicateDeliveryRate'
  | 'visibilityTimeoutSeconds'
  | 'endpointUrl'
  | 'projectRoot'
  | 'externalTimeoutMs'
  | 'externalService'
  | 'sampleRateLimits'
  | 'awsFaults'
  | 'onStep'
  | 'onFunctionLog'
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
  /** Invocations that ended because their execution environment was killed by the `kill` fault. */
  killedInvocations(): number;
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
    // Past the sample jobs' time limit: an `overrun` call is cut by the job's limit (when the
    // client timeout is longer) while its side effect still happens.
    overrunMs: SAMPLE_JOB_TIMEOUT_SECONDS * 1000 + 1_000,
    ...options.externalService,
    faults: options.faults,
    seed,
  });
  const metrics: Record<string, number> = {};
  const showLogs =
    process.env[RUNTIME_ENV.functionLogs] === '1' || process.env[RUNTIME_ENV.functionLogs] === 'true';
  let runtime: LocalRuntime | undefined;
  let killed = 0;
  try {
    step('synthesizing (or reusing) cdk.out and starting the local runtime');
    runtime = await startLocalRuntime({
      ...(options.projectRoot ? { projectRoot: options.projectRoot } : {}),
      ...(options.endpointUrl ? { endpoints: { endpointUrl: options.endpointUrl } } : {}),
      environment: {
        EXTERNAL_API_URL: service.url,
        EXTERNAL_API_TIMEOUT_MS: String(externalTimeoutMs),
        ...(options.sampleRateLimits === true ? { [SAMPLE_RATE_LIMITS_ENV]: 'on' } : {}),
      },
      lostResponseRate: options.lostResponseRate ?? 0,
      scheduler: { duplicateDeliveryRate: options.schedulerDuplicateDeliveryRate ?? 0 },
      seed,
      // Execution environments initialised during boot, so cold starts do not stall the first jobs.
      prewarm: true,
      // The fake service's `kill` fault names its caller by a response header.
      killOnFaultHeader: true,
      // An external SQS endpoint may be moto, whose FIFO group lock fails under concurrent long
      // polls (a later message of a group in flight is handed out): receive FIFO queues one at a time.
      ...(options.visibilityTimeoutSeconds !== undefined
        ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }
        : {}),
      serializeFifoReceives:
        resolveEndpointOptions(options.endpointUrl ? { endpointUrl: options.endpointUrl } : {}).sqs !==
        undefined,
      ...(options.awsFaults ? { awsFaults: options.awsFaults } : {}),
      onInvocation: (report) => {
        if (report.outcome === 'error' && report.error?.errorMessage.includes('(fault injection)'))
          killed += 1;
        options.onInvocation?.(report);
      },
      functionLogs: (line) => {
        if (line.stream === 'stdout') addEmfMetrics(line.line, metrics);
        options.onFunctionLog?.(line);
        if (showLogs) process.stderr.write(`[${line.functionLogicalId}] ${line.line}\n`);
      },
    });
    notes.push(...runtime.warnings);
    if (options.awsFaults) {
      notes.push(
        `fault injection: SQS and DynamoDB are reached through a fault proxy (SQS ${runtime.endpoints.sqs}, DynamoDB ${runtime.endpoints.dynamodb}); the functions, the pollers and the producer meet its faults, the run's own reads are exempt`,
      );
    }
    const target = targetOf(runtime);
    if (options.visibilityTimeoutSeconds !== undefined) {
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
      killedInvocations: () => killed,
      stop: () => {
        stopped ??= (async () => {
          if (target.producerSqs !== running.sqs) target.producerSqs.destroy();
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
