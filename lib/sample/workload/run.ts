/**
 * Running a workload against a target: seed, send, wait until every job is final or the
 * deadline passes, collect the dead letters, reconcile.
 */
import { JobClient } from '../../client/job-client.ts';
import { DomainRepository, type DomainSnapshot } from '../domain.ts';
import type { FaultKind } from '../external-service.ts';
import type { BatchRunFacts, SoakBatchFacts } from '../report/batches.ts';
import { scanBatchItems, summariseBatches } from './batches.ts';
import { type CollectedDeadLetter, collectDeadLetters } from './dead-letters.ts';
import { finalIdempotencyScan, type IdempotencyRecordSummary } from './idempotency-records.ts';
import type { WorkloadOptions } from './options.ts';
import { plannedJobs, planWorkload, type WorkloadPlan } from './plan.ts';
import { ProgressReporter, type WorkloadProgress } from './progress.ts';
import { queueActivity } from './queues.ts';
import { type Reconciliation, reconcile } from './reconcile.ts';
import type { ScheduledWork } from './scheduled.ts';
import { type SentLedger, seedDomain, sendWorkload, WORKLOAD_SOURCE } from './send.ts';
import {
  explainSoakDeadLetter,
  foundSoakBatches,
  plannedSoakBatches,
  planSoakBatches,
  sendSoakBatches,
  soakBatchJobCount,
  soakChildrenInDlqs,
  soakCompletionsRefused,
} from './soak-batches.ts';
import { redriveRefusedSoakCompletions } from './soak-redrive.ts';
import type { WorkloadTarget } from './target.ts';

/**
 * Redrive rounds of the soak's refused completion jobs at most (a redriven job's email can draw
 * another injected 400: it is dead-lettered again and redriven in the next round).
 */
const SOAK_REDRIVE_ROUNDS = 3;

/** Options of {@link runWorkload}. */
export interface RunWorkloadOptions extends WorkloadOptions {
  /** Deadline for every job to reach a final state, in seconds from the first send. @default 180 */
  readonly timeoutSeconds?: number;
  /** Interval between checks, in ms. @default 1000 */
  readonly pollIntervalMs?: number;
  /** Called at each check. */
  readonly onProgress?: (progress: WorkloadProgress) => void;
  /** The fake service's injected faults per reference (read at the end). */
  readonly faultsByReference?: () => Readonly<Record<string, readonly FaultKind[]>>;
  /**
   * Jobs completed so far, from a cheap source (the workers' `JobCompleted` metric). Without it
   * every check scans the domain table, which competes with the workers for the emulator.
   */
  readonly completedSoFar?: () => number;
  /**
   * Scan the idempotency tables at the end ({@link finalIdempotencyScan}); when records are still
   * leased, wait up to this many ms for their lease to pass. 0 skips the scan. @default 60000
   */
  readonly idempotencyScanMaxWaitMs?: number;
  /**
   * Stops waiting for the jobs (Ctrl-C): the run then collects and reconciles what it has, like at
   * the deadline (pending jobs are unfinished, not lost), with `interrupted` set.
   */
  readonly signal?: AbortSignal;
  /**
   * Jobs sent for later and schedules fired (./scheduled.ts): started once the workload is sent;
   * its pending work keeps the run waiting like queued jobs do.
   */
  readonly scheduled?: ScheduledWork;
}

/** What {@link runWorkload} found. */
export interface WorkloadResult {
  readonly plan: WorkloadPlan;
  readonly ledger: SentLedger;
  readonly reconciliation: Reconciliation;
  readonly snapshot: DomainSnapshot;
  readonly deadLetters: readonly CollectedDeadLetter[];
  /** What reading the DLQs changed or could not do (see {@link collectDeadLetters}), for the notes. */
  readonly deadLetterNotes: readonly string[];
  /** First send, epoch ms. */
  readonly startedAtMs: number;
  /** All final (or the deadline), epoch ms. */
  readonly finishedAtMs: number;
  readonly timedOut: boolean;
  /** `signal` stopped the wait (also sets `timedOut`: the report treats both alike). */
  readonly interrupted: boolean;
  /** The idempotency tables at the end; undefined when not scanned. */
  readonly idempotency?: IdempotencyRecordSummary;
  /** Producer send retries (JobClient retrying a SendMessageBatch SQS did not take). */
  readonly producerRetries: number;
  /** The batches in the idempotency tables at the end; undefined when not scanned. */
  readonly batches?: Pick<BatchRunFacts, 'started' | 'completed' | 'open'>;
  /** The soak's batches (`batches` > 0), but the summary emails (the fake service counts them). */
  readonly soakBatches?: Omit<SoakBatchFacts, 'summaries'>;
}

/**
 * Runs a workload against a target: seed, send, wait until the main queues stay empty (two
 * checks in a row) or the deadline passes, collect the dead letters, reconcile.
 */
export async function runWorkload(
  target: WorkloadTarget,
  options: RunWorkloadOptions = {},
): Promise<WorkloadResult> {
  const plan = planWorkload(options);
  const timeoutMs = (options.timeoutSeconds ?? 180) * 1000;
  const pollMs = options.pollIntervalMs ?? 1_000;
  const repository = new DomainRepository({ tableName: target.appTableName, client: target.dynamo });
  // The soak's batches' jobs count in the progress total (their keys are made once the run starts).
  const plannedTotal = plannedJobs(plan) + soakBatchJobCount(planSoakBatches(options.batches ?? 0, ''));
  const progress = new ProgressReporter(options.onProgress ?? (() => {}), Date.now(), plannedTotal);

  progress.report('seeding');
  await seedDomain(repository, plan);
  let producerRetries = 0;
  const quiet = () => {};
  const client = new JobClient({
    source: WORKLOAD_SOURCE,
    queueUrls: target.queueUrls,
    sqs: target.producerSqs,
    // A producer that keeps trying through injected SQS faults, and counts its retries.
    retry: { maxAttempts: 8, baseDelayMs: 200 },
    logger: {
      debug: quiet,
      info: quiet,
      warn: (message, extra) => {
        if (message.startsWith('SQS did not take some jobs')) producerRetries += 1;
        else process.stderr.write(`producer: ${message} ${JSON.stringify(extra ?? {})}\n`);
      },
      error: (message, extra) =>
        process.stderr.write(`producer: ${message} ${JSON.stringify(extra ?? {})}\n`),
    },
  });
  const startedAtMs = Date.now();
  progress.report('sending');
  const ledger = await sendWorkload(client, target, plan, (n) => {
    progress.addSent(n);
    progress.report('sending');
  });
  // The soak's small batches (--batches N): workload/soak-batches.ts.
  const soakPlans = planSoakBatches(options.batches ?? 0, `run-${startedAtMs}`);
  await sendSoakBatches(client, soakPlans, (n) => {
    progress.addSent(n);
    progress.report('sending');
  });
  await options.scheduled?.start(plan);

  const faults = options.faultsByReference ?? (() => ({}));
  // Waits until the main queues stay empty (two checks in a row); true when the deadline or the
  // signal stopped the wait first.
  const drain = async (): Promise<boolean> => {
    let quietChecks = 0;
    for (;;) {
      const activity = await Promise.all(
        Object.values(target.queueUrls).map((url) => queueActivity(target.sqs, url)),
      );
      const dlqActivity = await Promise.all(
        Object.values(target.dlqUrls).map((url) => queueActivity(target.sqs, url)),
      );
      const inQueues =
        activity.reduce((acc, a) => acc + a.visible + a.inFlight + a.delayed, 0) +
        (options.scheduled?.pending() ?? 0);
      const deadLettered = dlqActivity.reduce((acc, a) => acc + a.visible + a.inFlight + a.delayed, 0);
      if (options.completedSoFar) {
        progress.report('running', {
          completed: options.completedSoFar(),
          deadLettered,
          total: plannedTotal,
          inQueues,
        });
      } else {
        const partial = reconcile({
          plan,
          ledger,
          snapshot: await repository.snapshot(),
          deadLetters: [],
          faultsByReference: {},
          final: false,
        });
        progress.report('running', {
          completed: partial.completed,
          deadLettered,
          total: partial.projectedTotal,
          inQueues,
        });
      }
      quietChecks = inQueues === 0 ? quietChecks + 1 : 0;
      if (quietChecks >= 2) return false;
      if (Date.now() - startedAtMs > timeoutMs || options.signal?.aborted) return true;
      await abortableSleep(pollMs, options.signal);
    }
  };
  let timedOut = await drain();
  // The soak's operator step: redrive the completion jobs an injected API 400 dead-lettered, then
  // drain again (./soak-redrive.ts); a job refused again is redriven again, up to the rounds' limit.
  const redrivenCompletions: string[] = [];
  const redriveProblems: string[] = [];
  for (let round = 0; soakPlans.length > 0 && !timedOut && round < SOAK_REDRIVE_ROUNDS; round += 1) {
    const { moved, problems } = await redriveRefusedSoakCompletions(target, faults());
    redrivenCompletions.push(...moved);
    redriveProblems.push(...problems);
    if (moved.length === 0) break;
    timedOut = await drain();
  }
  const finishedAtMs = Date.now();

  progress.report('collecting');
  const dlqCounts: Record<string, number> = {};
  for (const [queue, url] of Object.entries(target.dlqUrls)) {
    const a = await queueActivity(target.sqs, url);
    dlqCounts[queue] = a.visible + a.inFlight + a.delayed;
  }
  // Read so that every dead letter stays in its DLQ, visible (an operator's `dlq list` and the
  // console see them all afterwards): see workload/dead-letters.ts.
  const collected = await collectDeadLetters(target.sqs, target.dlqUrls, dlqCounts);
  const { deadLetters } = collected;
  const deadLetterNotes = [
    ...collected.notes,
    ...redriveProblems.map((problem) => `soak completion job redrive: ${problem}`),
  ];
  const snapshot = await repository.snapshot();
  const scanWaitMs = options.idempotencyScanMaxWaitMs ?? 60_000;
  const idempotency =
    scanWaitMs > 0 && target.idempotencyTables.length > 0
      ? await finalIdempotencyScan(target.dynamodb, target.idempotencyTables, {
          maxWaitMs: timedOut ? 0 : scanWaitMs,
        })
      : undefined;
  const reconciliation = reconcile({
    plan,
    ledger,
    snapshot,
    deadLetters,
    faultsByReference: faults(),
    final: true,
    timedOut,
    explainUnplanned: (dl) => explainSoakDeadLetter(dl, faults()),
  });
  const batchItems =
    target.idempotencyTables.length > 0
      ? await scanBatchItems(target.dynamodb, target.idempotencyTables)
      : undefined;
  const batches = batchItems === undefined ? undefined : summariseBatches(batchItems);
  const soakBatches =
    batchItems === undefined || soakPlans.length === 0
      ? undefined
      : {
          planned: plannedSoakBatches(soakPlans),
          found: foundSoakBatches(batchItems),
          childrenInDlqs: soakChildrenInDlqs(deadLetters),
          completionsRefused: soakCompletionsRefused(deadLetters, faults()),
          redrivenCompletions,
        };
  progress.report('done', {
    completed: reconciliation.completed,
    deadLettered: reconciliation.deadLettered,
    total: reconciliation.jobs.length,
  });
  return {
    plan,
    ledger,
    reconciliation,
    snapshot,
    deadLetters,
    deadLetterNotes,
    startedAtMs,
    finishedAtMs,
    timedOut,
    interrupted: options.signal?.aborted === true,
    ...(idempotency ? { idempotency } : {}),
    producerRetries,
    ...(batches ? { batches } : {}),
    ...(soakBatches ? { soakBatches } : {}),
  };
}

/** Waits `ms`, or less when `signal` aborts. */
function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
