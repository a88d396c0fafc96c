/** The report of a local run, as build.ts computes it from the facts and render.ts prints it. */
import type { IdempotencyRecordSummary } from '../workload/idempotency-records.ts';
import type { DeadLetterJob } from './dead-letters.ts';
import type { PartnerRateLimitFacts } from './facts.ts';
import type { FlowControlSummary } from './flow-control.ts';
import type { InvariantResult } from './invariants.ts';
import type { LatencySummary } from './latency.ts';
import type { OrderViolation } from './order.ts';
import type { ScheduleSummary } from './schedules.ts';

/** The report of a run. */
export interface RunReport {
  /** The run completed (every job final before the deadline) and every invariant holds. */
  readonly ok: boolean;
  /** A checked invariant does not hold (a real failure, even in an unfinished run). */
  readonly failed: boolean;
  /** Every job reached a final state before the deadline (the queues drained). */
  readonly complete: boolean;
  readonly jobs: {
    readonly sent: number;
    readonly enqueued: number;
    readonly total: number;
    readonly completed: number;
    readonly deadLettered: number;
    readonly lost: number;
    /** Jobs not final when the deadline passed (0 when the run completed). */
    readonly unfinished: number;
    /** Jobs that needed more than one run. */
    readonly retriedJobs: number;
    /** Runs beyond the first, summed over all jobs. */
    readonly retries: number;
    readonly byType: Readonly<
      Record<
        string,
        {
          total: number;
          completed: number;
          deadLettered: number;
          lost: number;
          unfinished: number;
          retries: number;
        }
      >
    >;
    /** Keys of lost jobs (first 10). */
    readonly lostExamples: readonly string[];
  };
  readonly deadLetters: {
    readonly total: number;
    readonly byCause: readonly {
      cause: string;
      count: number;
      expected: number;
      /** The `ErrorMessage` of one of them, shortened. */
      example?: string;
      /** The job of one of them and its chain, from its body (when the facts have the messages). */
      exampleJob?: DeadLetterJob;
    }[];
    readonly unexplained: number;
    /** Dead letters without the worker's evidence attributes (no `ErrorName`, `ErrorReason` or `Attempts`). */
    readonly withoutEvidence: number;
    /**
     * DLQ messages of a job that already has one in the DLQ (same job): the worker's DLQ send
     * repeated after its response was lost (a standard DLQ cannot drop the copy). A redrive of both
     * runs the job once (its idempotency record); they are counted so `total` is not read as jobs.
     */
    readonly copies: number;
  };
  readonly duplicatesAbsorbed: number | undefined;
  readonly duplicatesSource: string | undefined;
  readonly sideEffects: {
    readonly keys: number;
    readonly total: number;
    readonly maxPerKey: number;
    /** Keys with more than one side effect (first 10). */
    readonly keysOverOne: readonly string[];
    /** Completed jobs whose side effect happened more than once. */
    readonly duplicated: readonly string[];
    /** Completed jobs whose side effect never happened. */
    readonly missing: readonly string[];
  };
  readonly order: {
    readonly usersChecked: number;
    readonly stepsChecked: number;
    readonly violations: readonly OrderViolation[];
  };
  readonly latency: LatencySummary;
  /** 99th percentile (nearest rank) of the same latencies, ms. */
  readonly latencyP99Ms: number | undefined;
  /** The idempotency tables at the end, when scanned. */
  readonly idempotency: IdempotencyRecordSummary | undefined;
  /** Producer send retries, when counted. */
  readonly producerRetries: number | undefined;
  /** The partner API's rate limit per tenant and its 429s; undefined when it had none. */
  readonly partnerRateLimit: PartnerRateLimitFacts | undefined;
  /** The sample's own rate limit on the partner and what it delayed; undefined when not known. */
  readonly flowControl?: FlowControlSummary;
  /** Completed jobs per second over the workload window. */
  readonly throughputPerSecond: number;
  /** From the first send to the end of the run, ms. */
  readonly workloadMs: number;
  /** Boot plus workload, ms. */
  readonly wallTimeMs: number;
  /** The run ended before every job was final: at the deadline, or by Ctrl-C (`interrupted`). */
  readonly timedOut: boolean;
  /** Ctrl-C stopped the wait before every job was final (not the deadline). */
  readonly interrupted: boolean;
  readonly faultsInjected: { readonly total: number; readonly byKind: Readonly<Record<string, number>> };
  /** The workers' own metric sums, when collected. */
  readonly workerMetrics: Readonly<Record<string, number>> | undefined;
  readonly invariants: readonly InvariantResult[];
  /** Jobs sent for later and schedule firings, when the run had them. */
  readonly schedules?: ScheduleSummary;
}
