/** Latency figures of a run: nearest-rank percentiles of the sent/enqueued-to-completed times. */
import type { JobOutcome } from './facts.ts';

/** Nearest-rank percentiles and extremes of a sample, in ms. */
export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number | undefined;
  readonly p95Ms: number | undefined;
  readonly maxMs: number | undefined;
}

/**
 * Nearest-rank percentile (the smallest value with at least `p`% of the sample at or below it).
 * @returns undefined for an empty sample.
 */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

/** Summarises latencies (any order) in ms. */
export function summariseLatency(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    maxMs: sorted.at(-1),
  };
}

/**
 * The latencies of the completed jobs (completion minus start, ms, where both are known) and the
 * last completion (epoch ms; `startedAtMs` when nothing completed).
 */
export function completionLatencies(
  jobs: readonly JobOutcome[],
  startedAtMs: number,
): { readonly latencies: number[]; readonly lastCompletionMs: number } {
  const latencies: number[] = [];
  let lastCompletion = startedAtMs;
  for (const job of jobs) {
    if (job.state !== 'completed' || job.completedAtMs === undefined) continue;
    lastCompletion = Math.max(lastCompletion, job.completedAtMs);
    if (job.startedAtMs !== undefined) latencies.push(Math.max(0, job.completedAtMs - job.startedAtMs));
  }
  return { latencies, lastCompletionMs: lastCompletion };
}
