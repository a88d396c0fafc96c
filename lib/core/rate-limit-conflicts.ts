/**
 * Two different rate limits under one name: they would share one bucket (buckets are kept by
 * name), each take refilling it at its own rate. Checked by `defineJob` (a job's `rateLimits`),
 * `createWorker` (every job of a worker) and the JobQueue construct at synth (the queue's `jobs`),
 * so it is here, below the runtime and the constructs.
 */

/** What the check reads of a rate limit (`defineRateLimit`'s result has it). */
export interface NamedRateLimit {
  readonly name: string;
  readonly perSecond: number;
  readonly burst: number;
  readonly adaptive?: unknown;
}

/**
 * One problem per name that two different limits among `limits` share. The same definition
 * listed twice, or two with equal settings (a limit declared in two modules alike), is fine.
 */
export function rateLimitConflicts(limits: readonly NamedRateLimit[]): string[] {
  const byName = new Map<string, NamedRateLimit>();
  const problems: string[] = [];
  for (const limit of limits) {
    const first = byName.get(limit.name);
    if (first === undefined) {
      byName.set(limit.name, limit);
    } else if (first !== limit && JSON.stringify(settingsOf(first)) !== JSON.stringify(settingsOf(limit))) {
      const problem = `rate limit ${JSON.stringify(limit.name)} is declared twice with different settings (${JSON.stringify(settingsOf(first))} and ${JSON.stringify(settingsOf(limit))}): jobs that name it share one bucket, so declare it once (defineRateLimit in a module every job imports) or give each its own name`;
      if (!problems.includes(problem)) problems.push(problem);
    }
  }
  return problems;
}

function settingsOf(limit: NamedRateLimit): object {
  return { perSecond: limit.perSecond, burst: limit.burst, adaptive: limit.adaptive ?? false };
}

/** Whether `value` has what {@link rateLimitConflicts} reads. */
export function isNamedRateLimit(value: unknown): value is NamedRateLimit {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.name === 'string' && typeof v.perSecond === 'number' && typeof v.burst === 'number';
}
