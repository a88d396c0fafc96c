/**
 * The workload of `npm start`: seeds the sample domain, sends bookings, payments and a few
 * deliberately bad messages through `JobClient`, waits until every job has reached a final
 * state (completed or dead-lettered) or a deadline passes, then collects the facts the report is
 * computed from (lib/sample/report/). How a job's final state is known is told in
 * workload/reconcile.ts.
 *
 * This module is the orchestration ({@link runLocal}) and the one import path of the workload's
 * parts, which live in lib/sample/workload/:
 * - options.ts, plan.ts: the workload's options and its plan (users, bookings, bad messages);
 * - send.ts: seeding the domain and sending the plan (producer resends, malformed messages);
 * - run.ts, progress.ts, queues.ts: a workload run (seed, send, wait for the queues to drain,
 *   collect, reconcile), its progress, the queues' message counts;
 * - dead-letters.ts, reconcile.ts: collecting the dead letters and one outcome per job;
 * - stack.ts, target.ts, emf-metrics.ts: the sample stack started locally, its queues and
 *   table, the workers' metrics.
 * - scheduled.ts: the time part: reservation holds sent for later (half cancelled on
 *   confirmation) and the nightly invoice schedule fired now, delivered twice.
 */

import { AWS_FAULT_KINDS, AWS_FAULT_LABELS, type AwsFaultRates } from '../local/aws-faults.ts';
import type { FaultProxyStats } from '../local/fault-proxy.ts';
import type { FunctionLogLine } from '../local/function-host.ts';
import type { RuntimeStats, startLocalRuntime } from '../local/runtime.ts';
import {
  type ExternalServiceOptions,
  type ExternalServiceStats,
  type FaultRates,
  resolveTenantRateLimit,
} from './external-service.ts';
import { nightlySummaryServiceReference } from './nightly-invoices.ts';
import { sampleLimitFacts } from './partner-limit.ts';
import { buildReport, type ReportFacts, type RunReport } from './report/index.ts';
import { soakBatchServiceReference } from './soak-batches.ts';
import { type RunWorkloadOptions, runWorkload, type WorkloadResult } from './workload/run.ts';
import { type ScheduledWorkOptions, scheduledWork } from './workload/scheduled.ts';
import { type SampleStack, startSampleStack } from './workload/stack.ts';

export {
  type CollectedDeadLetter,
  type CollectOptions,
  collectDeadLetters,
  type DeadLetterCollection,
  type FifoReadThrough,
  readFifoQueueThrough,
  rotationDeduplicationId,
} from './workload/dead-letters.ts';
export { DEMO, demoSends, seedDemo } from './workload/demo.ts';
export { addEmfMetrics } from './workload/emf-metrics.ts';
export {
  finalIdempotencyScan,
  type IdempotencyRecordSummary,
  scanIdempotencyRecords,
  summariseIdempotencyRecords,
} from './workload/idempotency-records.ts';
export {
  type ResolvedWorkloadOptions,
  resolveWorkloadOptions,
  type WorkloadOptions,
} from './workload/options.ts';
export {
  type BadMessagePlan,
  jobKey,
  plannedJobs,
  planWorkload,
  SOLD_OUT_SKU,
  type WorkloadPlan,
} from './workload/plan.ts';
export type { WorkloadProgress } from './workload/progress.ts';
export { type QueueActivity, queueActivity } from './workload/queues.ts';
export { type Reconciliation, reconcile } from './workload/reconcile.ts';
export { type RunWorkloadOptions, runWorkload, type WorkloadResult } from './workload/run.ts';
export {
  RUN_AT_PRECISION_MS,
  type ScheduledWork,
  type ScheduledWorkOptions,
  scheduledWork,
  schedulingOfRuntime,
} from './workload/scheduled.ts';
export {
  badMessageBody,
  RESEND_DELAY_SECONDS,
  type SentLedger,
  seedDomain,
  sendWorkload,
  WORKLOAD_SOURCE,
} from './workload/send.ts';
export { type SampleStack, type SampleStackOptions, startSampleStack } from './workload/stack.ts';
export { targetOf, type WorkloadTarget } from './workload/target.ts';

/** Options of {@link runLocal}: a workload on the local runtime with the fake external service. */
export interface LocalRunOptions
  extends Omit<RunWorkloadOptions, 'faultsByReference' | 'scheduled'>,
    ScheduledWorkOptions {
  /** Fault rates of the fake external service. */
  readonly faults?: Partial<FaultRates>;
  /**
   * Faults at the AWS API boundary (a fault proxy in front of SQS and DynamoDB, see
   * lib/local/fault-proxy.ts), met by the functions, the pollers and the producer; undefined: none.
   */
  readonly awsFaults?: Partial<AwsFaultRates>;
  /** Probability that a successful invocation's response is lost (the batch comes back). @default 0 */
  readonly lostResponseRate?: number;
  /**
   * Probability that a firing of the local EventBridge Scheduler is delivered twice (the same
   * body, as Scheduler's at-least-once delivery may), seeded by `seed`. @default 0
   */
  readonly schedulerDuplicateDeliveryRate?: number;
  /**
   * Visibility timeout of the main queues for this local run, in seconds, instead of the
   * deployed one (6 × the function timeout = 180 s): a lost response then comes back within the
   * run. Undefined keeps the deployed value.
   */
  readonly visibilityTimeoutSeconds?: number;
  /** Payment jobs sent a second time with the same id, as a producer retrying would. @default 0 */
  readonly producerDuplicates?: number;
  /** One endpoint for SQS and DynamoDB instead of the embedded emulators (see lib/local/emulators.ts). */
  readonly endpointUrl?: string;
  /** Project root (cdk.json, cdk.out). @default process.cwd() */
  readonly projectRoot?: string;
  /**
   * Timeout of the workers' external calls (`EXTERNAL_API_TIMEOUT_MS`), in ms. Generous by
   * default: on a busy 2-core machine the fake service shares a thread with the emulators. The
   * fake service's `timeout` fault hangs 1 s longer than this. @default 5000
   */
  readonly externalTimeoutMs?: number;
  /** Options of the fake service beyond faults and seed (latency, hang time...). */
  readonly externalService?: Omit<ExternalServiceOptions, 'faults' | 'seed'>;
  /**
   * `false` runs the sample jobs without their own rate limit on the partner
   * (`SAMPLE_RATE_LIMITS=off`, lib/sample/partner-limit.ts), to compare. The limit exists to stay
   * under the partner's, so without `externalService.tenantRateLimit` it is off whatever this
   * says (no token is taken: no DynamoDB calls for it). @default true
   */
  readonly sampleRateLimits?: boolean;
  /** Called with a line of text at each boot step. */
  readonly onStep?: (message: string) => void;
  /** Called with every line the functions write (the workers' EMF metrics are on stdout). */
  readonly onFunctionLog?: (line: FunctionLogLine) => void;
  /**
   * Called once the stack is up, before the workload (`npm start -- --console` starts the console
   * here, so it sees the run). When it throws, the stack is stopped and the run fails with it.
   */
  readonly onStackStarted?: (stack: SampleStack) => void | Promise<void>;
}

/** What {@link runLocal} found. */
export interface LocalRunResult {
  readonly facts: ReportFacts;
  readonly report: RunReport;
  readonly workload: WorkloadResult;
  /** The fake service's counters at the end. */
  readonly service: ExternalServiceStats;
  /** The local runtime's invocation counters at the end. */
  readonly runtime: RuntimeStats;
  /** The fault proxies' counters at the end; undefined without `awsFaults`. */
  readonly awsFaults: FaultProxyStats | undefined;
  /** Sums of the workers' EMF metrics (`JobCompleted`, `JobRetried`, ...). */
  readonly metrics: Readonly<Record<string, number>>;
  /** Differences from AWS noted by the local runtime, and local overrides. */
  readonly notes: readonly string[];
}

/** A run whose stack is still up: see {@link runLocalAndKeep}. */
export interface KeptLocalRun {
  readonly result: LocalRunResult;
  /** The sample stack, still running: the emulators, the workers and the fake external service. */
  readonly stack: SampleStack;
}

/**
 * Boots the local runtime (synthesizing cdk.out when stale) with `EXTERNAL_API_URL` pointed at
 * the fake external service, runs the workload, stops everything and builds the report.
 * @throws what {@link startLocalRuntime} throws when the stack cannot start; the workload's send errors.
 */
export async function runLocal(options: LocalRunOptions = {}): Promise<LocalRunResult> {
  const { result, stack } = await runLocalAndKeep(options);
  (options.onStep ?? (() => {}))('stopping');
  await stack.stop();
  return result;
}

/**
 * {@link runLocal} without the stop: the run's report, and the stack still running, handed over
 * to the caller, who stops it (`stack.stop()`). `npm start -- --keep-running` serves it until
 * Ctrl-C. When the run fails (the stack does not start, a send fails) nothing is left running.
 * @throws what {@link runLocal} throws.
 */
export async function runLocalAndKeep(options: LocalRunOptions = {}): Promise<KeptLocalRun> {
  const step = options.onStep ?? (() => {});
  const bootStart = Date.now();
  const stack = await startSampleStack({ ...options, sampleRateLimits: sampleLimitsOn(options) });
  try {
    const bootMs = Date.now() - bootStart;
    await options.onStackStarted?.(stack);
    return { result: await runOn(stack, options, bootMs), stack };
  } catch (error) {
    step('stopping');
    await stack.stop();
    throw error;
  }
}

/** Runs the workload on a started stack and builds the report. */
async function runOn(stack: SampleStack, options: LocalRunOptions, bootMs: number): Promise<LocalRunResult> {
  const step = options.onStep ?? (() => {});
  const { runtime, service, target, metrics, notes } = stack;
  step(
    `running the workload (endpoints: SQS ${runtime.endpoints.sqs}, DynamoDB ${runtime.endpoints.dynamodb})`,
  );
  // Reservation holds and the nightly run fired now, when the run has them (workload/scheduled.ts).
  const scheduled =
    (options.holds ?? 0) > 0 || (options.nightlyBacklog ?? 0) > 0
      ? scheduledWork(runtime, target, stack.repository, options)
      : undefined;
  let workload: WorkloadResult;
  let schedules: ReportFacts['schedules'];
  try {
    workload = await runWorkload(target, {
      ...options,
      faultsByReference: () => service.stats().faultsByReference,
      completedSoFar: () => metrics.JobCompleted ?? 0,
      ...(scheduled ? { scheduled } : {}),
    });
    schedules = await scheduled?.collect(workload.deadLetters, metrics.JobCancelled ?? 0);
  } finally {
    scheduled?.close();
  }
  const serviceStats = service.stats();
  const runtimeStats = runtime.stats();
  // A nightly run's id is its firing's job id (`nightly-invoices@<scheduled time>`).
  const nightlyRuns = (schedules?.firings ?? []).flatMap((f) =>
    f.recurring && f.jobId !== undefined ? [f.jobId] : [],
  );
  const awsFaults = runtime.awsFaultStats();
  const awsFaultCounts = Object.fromEntries(
    awsFaults ? AWS_FAULT_KINDS.map((kind) => [AWS_FAULT_LABELS[kind], awsFaults.faults[kind]]) : [],
  );
  const facts: ReportFacts = {
    startedAtMs: workload.startedAtMs,
    finishedAtMs: workload.finishedAtMs,
    bootMs,
    timedOut: workload.timedOut,
    interrupted: workload.interrupted,
    jobs: workload.reconciliation.jobs,
    deadLetters: workload.reconciliation.deadLetters,
    orderLogs: workload.snapshot.orderLogs,
    sideEffects: { byKey: serviceStats.sideEffectsByKey, byReference: serviceStats.sideEffectsByReference },
    faultsInjected: {
      'API timeout': serviceStats.faults.timeout,
      'API 429': serviceStats.faults.throttle,
      'API 503': serviceStats.faults.unavailable,
      'API 400': serviceStats.faults.badRequest,
      'API slow': serviceStats.faults.slow,
      'API overrun (past the job time limit)': serviceStats.faults.overrun,
      'worker killed after side effect': stack.killedInvocations(),
      ...awsFaultCounts,
      'lost response': runtimeStats.totals.lostResponses,
      'producer resend': workload.ledger.resent,
      'malformed message': workload.plan.badMessages.length,
      'out-of-stock booking': workload.plan.soldOut.size,
    },
    duplicatesAbsorbed: metrics.JobDuplicateAbsorbed ?? 0,
    duplicatesSource: 'JobDuplicateAbsorbed metric of the workers',
    workerMetrics: { ...metrics },
    requireDeadLetterEvidence: true,
    ...(workload.idempotency ? { idempotency: workload.idempotency } : {}),
    producerRetries: workload.producerRetries,
    ...(options.externalService?.tenantRateLimit === undefined
      ? {}
      : {
          partnerRateLimit: {
            ...resolveTenantRateLimit(options.externalService.tenantRateLimit),
            rejected: serviceStats.rateLimited,
            tenantsLimited: Object.keys(serviceStats.rateLimitedByTenant).length,
            requests: serviceStats.requests,
          },
        }),
    sampleLimit: sampleLimitFacts(sampleLimitsOn(options)),
    deadLetterMessages: workload.deadLetters,
    // The nightly runs are the recurring schedule's firings (each starts one batch): checked
    // when the run fired it (or started batches otherwise).
    ...(workload.batches === undefined || (nightlyRuns.length === 0 && workload.batches.started === 0)
      ? {}
      : {
          batches: {
            ...workload.batches,
            summariesByRun: Object.fromEntries(
              nightlyRuns.map((run) => [
                run,
                serviceStats.sideEffectsByReference[nightlySummaryServiceReference(run)] ?? 0,
              ]),
            ),
            ...(workload.soakBatches === undefined
              ? {}
              : {
                  soak: {
                    ...workload.soakBatches,
                    summaries: Object.fromEntries(
                      Object.keys(workload.soakBatches.planned).map((key) => [
                        key,
                        serviceStats.sideEffectsByReference[soakBatchServiceReference(key)] ?? 0,
                      ]),
                    ),
                  },
                }),
          },
        }),
    ...(schedules ? { schedules } : {}),
  };
  return {
    facts,
    report: buildReport(facts),
    workload,
    service: serviceStats,
    runtime: runtimeStats,
    awsFaults,
    metrics: { ...metrics },
    notes: [...notes, ...workload.deadLetterNotes],
  };
}

/** Whether the sample's jobs take their rate limit: asked for, and a partner limit to stay under. */
function sampleLimitsOn(options: LocalRunOptions): boolean {
  return options.sampleRateLimits !== false && options.externalService?.tenantRateLimit !== undefined;
}
