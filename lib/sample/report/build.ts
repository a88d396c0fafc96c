/**
 * The report of a local run (`npm start`): a pure function from the facts collected after the
 * run (facts.ts) to a report object (run-report.ts): job counts, dead letters by cause, side
 * effects, order, latency, and the invariants (invariants.ts). Nothing here does I/O, so every
 * figure and every invariant is unit-tested on hand-made facts.
 */

import { batchInvariants } from './batches.ts';
import { summariseDeadLetters } from './dead-letters.ts';
import type { JobOutcome, JobState, ReportFacts } from './facts.ts';
import { partner429Invariant, summariseFlowControl } from './flow-control.ts';
import { checkInvariants } from './invariants.ts';
import { completionLatencies, percentile, summariseLatency } from './latency.ts';
import { findOrderViolations } from './order.ts';
import type { RunReport } from './run-report.ts';
import { scheduleInvariants, summariseSchedules } from './schedules.ts';

const examples = (list: readonly string[], n = 10): string[] => list.slice(0, n);

/** Computes the report from the facts of a run. Pure; never throws on well-typed input. */
export function buildReport(facts: ReportFacts): RunReport {
  const jobs = facts.jobs;
  const tally = tallyJobs(jobs);
  const count = (state: JobState) => jobs.filter((j) => j.state === state).length;
  const lostKeys = jobs.filter((j) => j.state === 'lost').map((j) => j.key);
  const deadLetters = summariseDeadLetters(facts);
  const sideEffects = checkSideEffects(facts);
  const violations = findOrderViolations(facts.orderLogs);
  const stepsChecked = facts.orderLogs.reduce((acc, log) => acc + log.entries.length, 0);

  const { latencies, lastCompletionMs } = completionLatencies(jobs, facts.startedAtMs);
  const completed = count('completed');
  const windowMs = Math.max(1, lastCompletionMs - facts.startedAtMs);
  const workloadMs = Math.max(0, facts.finishedAtMs - facts.startedAtMs);

  const faultTotal = Object.values(facts.faultsInjected).reduce((a, b) => a + b, 0);

  const unfinished = count('unfinished');
  const schedules = facts.schedules === undefined ? undefined : summariseSchedules(facts.schedules);
  const partner429 = partner429Invariant(facts);
  const flowControl = summariseFlowControl(facts);
  const invariants = checkInvariants(facts, {
    lostKeys,
    unfinished,
    deadLettered: count('dead-lettered'),
    keys: sideEffects.keyCounts.length,
    keysOverOne: sideEffects.keysOverOne,
    maxPerKey: sideEffects.maxPerKey,
    duplicated: sideEffects.duplicated,
    missing: sideEffects.missing,
    violations,
    withoutEvidence: deadLetters.withoutEvidence,
    unexplained: deadLetters.unexplained,
  });
  if (schedules !== undefined) invariants.push(...scheduleInvariants(schedules, facts.timedOut));
  if (partner429 !== undefined) invariants.push(partner429);

  if (facts.batches !== undefined) {
    invariants.push(
      ...batchInvariants(
        facts.batches,
        facts.timedOut ? 'the deadline passed before every job was final' : undefined,
      ),
    );
  }
  const failed = invariants.some((i) => !i.ok && i.severity === 'invariant' && i.skipped === undefined);
  const complete = !facts.timedOut;
  return {
    ok: complete && !failed,
    failed,
    complete,
    jobs: {
      sent: jobs.filter((j) => j.origin === 'sent').length,
      enqueued: jobs.filter((j) => j.origin === 'enqueued').length,
      total: jobs.length,
      completed,
      deadLettered: count('dead-lettered'),
      lost: lostKeys.length,
      unfinished,
      retriedJobs: tally.retriedJobs,
      retries: tally.retries,
      byType: tally.byType,
      lostExamples: examples(lostKeys),
    },
    deadLetters,
    duplicatesAbsorbed: facts.duplicatesAbsorbed,
    duplicatesSource: facts.duplicatesSource,
    sideEffects: {
      keys: sideEffects.keyCounts.length,
      total: sideEffects.keyCounts.reduce((acc, [, n]) => acc + n, 0),
      maxPerKey: sideEffects.maxPerKey,
      keysOverOne: examples(sideEffects.keysOverOne),
      duplicated: examples(sideEffects.duplicated),
      missing: examples(sideEffects.missing),
    },
    order: { usersChecked: facts.orderLogs.length, stepsChecked, violations },
    latency: summariseLatency(latencies),
    latencyP99Ms: percentile(
      [...latencies].sort((a, b) => a - b),
      99,
    ),
    idempotency: facts.idempotency,
    producerRetries: facts.producerRetries,
    partnerRateLimit: facts.partnerRateLimit,
    ...(flowControl === undefined ? {} : { flowControl }),
    throughputPerSecond: completed === 0 ? 0 : completed / (windowMs / 1000),
    workloadMs,
    wallTimeMs: facts.bootMs + workloadMs,
    timedOut: facts.timedOut,
    interrupted: facts.interrupted === true,
    faultsInjected: { total: faultTotal, byKind: { ...facts.faultsInjected } },
    workerMetrics: facts.workerMetrics === undefined ? undefined : { ...facts.workerMetrics },
    invariants,
    ...(schedules === undefined ? {} : { schedules }),
  };
}

/** Jobs per type by final state, and the runs beyond the first (retries), per type and in all. */
function tallyJobs(
  jobs: readonly JobOutcome[],
): Pick<RunReport['jobs'], 'byType' | 'retries' | 'retriedJobs'> {
  const byType: Record<
    string,
    {
      total: number;
      completed: number;
      deadLettered: number;
      lost: number;
      unfinished: number;
      retries: number;
    }
  > = {};
  let retries = 0;
  let retriedJobs = 0;
  for (const job of jobs) {
    const row = byType[job.type] ?? {
      total: 0,
      completed: 0,
      deadLettered: 0,
      lost: 0,
      unfinished: 0,
      retries: 0,
    };
    row.total += 1;
    if (job.state === 'completed') row.completed += 1;
    else if (job.state === 'dead-lettered') row.deadLettered += 1;
    else if (job.state === 'unfinished') row.unfinished += 1;
    else row.lost += 1;
    const extra = Math.max(0, (job.attempts ?? 1) - 1);
    row.retries += extra;
    retries += extra;
    if (extra > 0) retriedJobs += 1;
    byType[job.type] = row;
  }
  return { byType, retries, retriedJobs };
}

/**
 * Side effects per idempotency key (`key ×n` for those above one) and the completed jobs whose
 * side effect happened more than once or never, all of them.
 */
function checkSideEffects(facts: ReportFacts): {
  readonly keyCounts: readonly [string, number][];
  readonly keysOverOne: string[];
  readonly maxPerKey: number;
  readonly duplicated: string[];
  readonly missing: string[];
} {
  const keyCounts = Object.entries(facts.sideEffects.byKey);
  const keysOverOne = keyCounts.filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`);
  const maxPerKey = keyCounts.reduce((max, [, n]) => Math.max(max, n), 0);
  const duplicated: string[] = [];
  const missing: string[] = [];
  for (const job of facts.jobs) {
    if (job.state !== 'completed' || job.sideEffectReference === undefined) continue;
    const n = facts.sideEffects.byReference[job.sideEffectReference] ?? 0;
    if (n === 0) missing.push(job.key);
    else if (n > 1) duplicated.push(`${job.key} ×${n}`);
  }
  return { keyCounts, keysOverOne, maxPerKey, duplicated, missing };
}
