/**
 * Flow control in the report of a local run: the sample's own rate limit on the partner API
 * (lib/sample/partner-limit.ts), what it delayed (the workers' `JobLimitDelayed` and
 * `JobLimitWaitMs` metrics), and the invariant that with it on the partner's rate limit almost
 * never answers 429. Pure: unit-tested on hand-made facts like the rest of the report.
 */
import type { ReportFacts } from './facts.ts';
import type { InvariantResult } from './invariants.ts';

/** The sample's own rate limit on the partner during a run. */
export interface SampleLimitFacts {
  /** False with `npm start -- --no-limits`: the jobs called the partner without it. */
  readonly on: boolean;
  /** The limit's name (`defineRateLimit`). */
  readonly name: string;
  /** Requests per second per tenant. */
  readonly perSecond: number;
  /** Requests a tenant may make at once. */
  readonly burst: number;
  /** Lowest rate it adapts down to after 429s; undefined for a fixed limit. */
  readonly minPerSecond?: number;
}

/** What the report shows about flow control. */
export interface FlowControlSummary {
  readonly limit: SampleLimitFacts;
  /**
   * Times a job waited outside its run for a token (the workers' `JobLimitDelayed`: re-sent with a
   * delay, or a visibility delay on FIFO; no attempt spent); undefined when metrics were not read.
   */
  readonly waitsOutsideRuns: number | undefined;
  /** Milliseconds slept inside runs for a token (`JobLimitWaitMs`); undefined when not read. */
  readonly waitedInRunsMs: number | undefined;
}

/**
 * Share of the partner's requests that may still be answered 429 by its rate limit while our
 * limit is on. Our bucket grants a tenant's calls at least 1.25 s apart where the partner needs
 * 1 s (partner-limit.ts), so a 429 needs a call delayed by more than 250 ms on its way to the
 * partner behind an earlier one that was not: what a 2-core machine under load does now and then,
 * never systematically. Measured on a loaded 2-core machine (`npm start`, seed 1, 100 users): 3 of
 * 946 requests (0.3%) with our limit, 39 of 975 (4%) with `--no-limits`; a faster machine brings a
 * tenant's calls closer together and raises the second figure, not the first. 1% separates the two
 * with room for a loaded machine.
 */
export const MAX_PARTNER_429_SHARE = 0.01;
/** At least this many 429s are allowed, so a small run is not failed by one delayed request. */
export const MIN_PARTNER_429_ALLOWED = 3;

/** The 429s allowed for `requests` partner requests with our limit on. */
export function partner429Allowed(requests: number): number {
  return Math.max(MIN_PARTNER_429_ALLOWED, Math.floor(requests * MAX_PARTNER_429_SHARE));
}

/** The flow-control summary, when the run had a sample limit (on or off). */
export function summariseFlowControl(facts: ReportFacts): FlowControlSummary | undefined {
  if (facts.sampleLimit === undefined) return undefined;
  const metric = (name: string) =>
    facts.workerMetrics === undefined ? undefined : (facts.workerMetrics[name] ?? 0);
  return {
    limit: facts.sampleLimit,
    waitsOutsideRuns: metric('JobLimitDelayed'),
    waitedInRunsMs: metric('JobLimitWaitMs'),
  };
}

/**
 * The invariant: with our limit on and the partner limiting, its 429s stay within
 * {@link partner429Allowed}. Undefined (not checked) when either is off.
 */
export function partner429Invariant(facts: ReportFacts): InvariantResult | undefined {
  const partner = facts.partnerRateLimit;
  if (partner === undefined || facts.sampleLimit?.on !== true || partner.requests === undefined) {
    return undefined;
  }
  const allowed = partner429Allowed(partner.requests);
  return {
    name: "partner 429s (its rate limit per tenant) with the sample's own limit on",
    severity: 'invariant',
    ok: partner.rejected <= allowed,
    actual: `${partner.rejected} of ${partner.requests} requests`,
    expected: `<= ${allowed}: ${MAX_PARTNER_429_SHARE * 100}% of requests, at least ${MIN_PARTNER_429_ALLOWED}`,
  };
}

/** The report's line about our limit, when the run had one. */
export function flowControlLines(summary: FlowControlSummary | undefined): string[] {
  if (summary === undefined) return [];
  const { limit } = summary;
  const adaptive =
    limit.minPerSecond === undefined ? 'fixed' : `adaptive down to ${limit.minPerSecond}/s after a 429`;
  const head = `Sample's rate limit on the partner (${limit.name}: ${limit.perSecond}/s per tenant, burst ${limit.burst}, ${adaptive})`;
  if (!limit.on) return [`${head}: OFF (--no-limits): the jobs called the partner as fast as they ran`];
  const waits = summary.waitsOutsideRuns === undefined ? 'not measured' : String(summary.waitsOutsideRuns);
  const waited =
    summary.waitedInRunsMs === undefined ? 'not measured' : `${(summary.waitedInRunsMs / 1000).toFixed(1)} s`;
  return [
    `${head}: on; jobs delayed outside a run: ${waits} (JobLimitDelayed, no attempt spent); waited inside runs: ${waited} (JobLimitWaitMs)`,
  ];
}
