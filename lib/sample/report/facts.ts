/**
 * What a local run's report is computed from: the facts collected after the run (each job's
 * outcome, the dead letters read, order logs, side effects, faults, scans), gathered by the
 * workload (lib/sample/workload/) and turned into a report by build.ts.
 */

import type { OrderLog } from '../domain.ts';
import type { IdempotencyRecordSummary } from '../workload/idempotency-records.ts';
import type { BatchRunFacts } from './batches.ts';
import type { SampleLimitFacts } from './flow-control.ts';
import type { ScheduleFacts } from './schedules.ts';

/**
 * Final state of a job at the end of a run: `lost` = neither completed nor dead-lettered once
 * every queue drained; `unfinished` = not final yet when the deadline passed (still queued or in
 * flight, or its chain had not reached it).
 */
export type JobState = 'completed' | 'dead-lettered' | 'lost' | 'unfinished';

/** What is known about one job (sent by the workload or enqueued by another job). */
export interface JobOutcome {
  /** Stable identity within the run, e.g. `booking.issue-invoice:b-7`. */
  readonly key: string;
  readonly type: string;
  /** Logical queue name. */
  readonly queue: string;
  /** `sent` by the workload, or `enqueued` by a job it chained from. */
  readonly origin: 'sent' | 'enqueued';
  readonly state: JobState;
  /** When the job came into being (sent, or its parent completed), epoch ms. */
  readonly startedAtMs?: number;
  /** When it completed, epoch ms. */
  readonly completedAtMs?: number;
  /** Runs it took: the attempt that completed it, or the `Attempts` of its DLQ evidence. */
  readonly attempts?: number;
  /** The fake service's reference of the side effect this job performs, if it calls one. */
  readonly sideEffectReference?: string;
}

/** A dead-lettered message as read from a DLQ, with its evidence attributes. */
export interface DeadLetterFact {
  /** Logical name of the queue whose DLQ holds it. */
  readonly queue: string;
  /** `JobType` attribute (absent for a body that was not an envelope). */
  readonly jobType?: string;
  /** `ErrorName` attribute. */
  readonly errorName?: string;
  /** `ErrorReason` attribute (the classification reason). */
  readonly errorReason?: string;
  /** `ErrorMessage` attribute. */
  readonly errorMessage?: string;
  /** `Attempts` attribute. */
  readonly attempts?: number;
  /** The job it belongs to, when it could be matched. */
  readonly jobKey?: string;
  /** Why it was meant to fail (deliberate bad message, out of stock, injected 400); undefined = unexplained. */
  readonly expectedBecause?: string;
}

/** Everything the report is computed from. */
export interface ReportFacts {
  /** When the workload started sending, epoch ms. */
  readonly startedAtMs: number;
  /** When the run ended (all jobs final, or the deadline), epoch ms. */
  readonly finishedAtMs: number;
  /** Time spent booting emulators and provisioning before the workload, ms. */
  readonly bootMs: number;
  /** True when the deadline passed (or Ctrl-C stopped the wait) before every job was final. */
  readonly timedOut: boolean;
  /** True when Ctrl-C stopped the wait, not the deadline (the report is partial either way). @default false */
  readonly interrupted?: boolean;
  readonly jobs: readonly JobOutcome[];
  readonly deadLetters: readonly DeadLetterFact[];
  /** Per-user order logs of the booking steps, as recorded by the jobs. */
  readonly orderLogs: readonly OrderLog[];
  /** Side effects the fake service performed, per idempotency key and per business reference. */
  readonly sideEffects: {
    readonly byKey: Readonly<Record<string, number>>;
    readonly byReference: Readonly<Record<string, number>>;
  };
  /** Faults injected, by kind (fake service kinds, lost responses, deliberate bad messages...). */
  readonly faultsInjected: Readonly<Record<string, number>>;
  /** Duplicate deliveries the idempotency store absorbed; undefined when not measured. */
  readonly duplicatesAbsorbed: number | undefined;
  /** Where the duplicate count came from (for the text). */
  readonly duplicatesSource?: string;
  /** Sums of the workers' own metrics (`JobCompleted`, `JobRetried`, ...), shown for comparison. */
  readonly workerMetrics?: Readonly<Record<string, number>>;
  /**
   * Every dead letter must carry the worker's evidence (`ErrorName`, `ErrorReason`, `Attempts`):
   * an invariant when true. @default false
   */
  readonly requireDeadLetterEvidence?: boolean;
  /** The idempotency tables scanned at the end of the run; the stuck-record invariant when given. */
  readonly idempotency?: IdempotencyRecordSummary;
  /** Producer send retries (requests SQS did not take, sent again); undefined when not counted. */
  readonly producerRetries?: number;
  /** The batches of the run (the nightly invoice run); undefined when not read (no batch invariants). */
  readonly batches?: BatchRunFacts;
  /**
   * The partner API's rate limit per tenant and its 429 answers (`npm start -- --partner-rate-limit`);
   * undefined when the partner has no limit. Shown, not an invariant: each 429 is retried.
   */
  readonly partnerRateLimit?: PartnerRateLimitFacts;
  /**
   * The sample's own rate limit on the partner (lib/sample/partner-limit.ts), on or off
   * (`--no-limits`); undefined when not known. With it on and a partner limit, the partner's 429s
   * are an invariant (flow-control.ts).
   */
  readonly sampleLimit?: SampleLimitFacts;
  /**
   * The dead-lettered messages as read (body and evidence attributes), for the examples of each
   * cause: the body is the original envelope, which names the job and its chain (`causationid`,
   * `rootid`, `correlationid`, `traceparent`). Undefined: the examples show the error only.
   */
  /**
   * Jobs sent for later and the Scheduler's firings (reservation holds, the nightly run); the
   * time invariants when given (schedules.ts).
   */
  readonly schedules?: ScheduleFacts;
  readonly deadLetterMessages?: readonly {
    readonly body: string;
    readonly attributes: Readonly<Record<string, string>>;
  }[];
}

/** The partner's rate limit per tenant during a run, and what it refused. */
export interface PartnerRateLimitFacts {
  /** Requests per second per tenant. */
  readonly requestsPerSecond: number;
  /** Requests a tenant may make at once. */
  readonly burst: number;
  /** 429 answers of the limit. */
  readonly rejected: number;
  /** Tenants that got at least one. */
  readonly tenantsLimited: number;
  /** Requests the partner received on its side-effect endpoints (429s included); undefined when not counted. */
  readonly requests?: number;
}
