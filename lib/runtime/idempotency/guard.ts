/**
 * The seam between the batch worker and an idempotency store: what the worker asks before and
 * after each job run. The DynamoDB store implements it; tests may supply their own.
 */
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { LeaseExpiredPolicy } from '../job.ts';

/** Input of {@link IdempotencyGuard.begin}. */
export interface BeginRequest {
  /** Job type; keys are scoped by it. */
  readonly jobType: string;
  /** The job's idempotency key (default `source` + `id` of the envelope). */
  readonly key: string;
  /** SHA-256 hex of the canonical JSON of the job data (keys sorted). */
  readonly payloadHash: string;
  /**
   * When this run's lease ends, epoch milliseconds: the earlier of the job's time limit and the
   * Lambda deadline, plus a margin. Always a number (zero time left is a value).
   */
  readonly leaseExpiresAtMs: number;
  readonly onLeaseExpired: LeaseExpiredPolicy;
  /** The SQS messageId, for the record's evidence. */
  readonly messageId: string;
  /**
   * When SQS accepted this message: its `SentTimestamp` system attribute, epoch ms (SQS's clock).
   * Tells a copy of a dead-lettered job from a redrive of it (decide.ts, `isCopyOfDeadLetter`):
   * absent (a hand-made event without it), a message of a dead-lettered job runs as a redrive.
   */
  readonly sentAtMs?: number;
  /**
   * The parent job's record key (the envelope's `parentjob`), written on the record as its link
   * up (`parentJob`) so a job's chain can be walked; absent for a chain's root.
   */
  readonly parentJob?: string;
}

/** Result of {@link IdempotencyGuard.begin}. */
export type BeginOutcome =
  /** This run holds the lease: run the job. `attempt` counts runs of this key, 1-based. */
  | { readonly status: 'acquired'; readonly lease: Lease }
  /** Already done: do not run; acknowledge. `result` is undefined when it was over the size cap. */
  | { readonly status: 'completed'; readonly result: unknown; readonly resultStored: boolean }
  /**
   * The job is already dead-lettered and this message is no redrive of it: acknowledge it without
   * running or dead-lettering it again. Either this very message (same SQS `messageId`), whose
   * acknowledgement was lost after the DLQ send (a crash or timeout), or a copy of the job sent
   * before it was dead-lettered (another `messageId`, same key: a producer that sent again after a
   * lost response); then `copyOf` is the `messageId` of the message that was dead-lettered.
   * A redrive carries a new `messageId` and was sent after the dead-lettering, so it runs.
   */
  | { readonly status: 'dead-lettered'; readonly copyOf?: string }
  /** A live lease is held by another run (a concurrent duplicate): retry soon without spending an attempt. */
  | { readonly status: 'busy'; readonly retryAfterMs: number }
  /**
   * An earlier run's lease expired without completion and the job's policy is `dead-letter`:
   * do not run; send to the DLQ with this evidence, then call `lease.fail(..., 'permanent')`.
   */
  | { readonly status: 'lease-expired'; readonly lease: Lease; readonly previousAttempt: number };

/** Outcome of a conditional write that needs the lease: `fenced` means another run took it over. */
export type LeaseWrite = 'ok' | 'fenced';

/**
 * Outcome of a lease end written together with other items (one transaction): `ok` (all written),
 * `fenced` (another run holds the lease: nothing written), or `cancelled` when one of the other
 * items failed its condition (nothing written): `reasons` has one code per other item, in order.
 */
export type TogetherWrite = 'ok' | 'fenced' | { readonly cancelled: readonly string[] };

/** The lease of one run: every write is conditional on still holding it (fencing token). */
export interface Lease {
  /** 1-based count of runs of this key, this one included; survives releases. */
  readonly attempt: number;
  /** When this key first failed, epoch ms (DLQ evidence); undefined before any failure. */
  readonly firstFailureAtMs: number | undefined;
  /**
   * Marks the key COMPLETED with the result (not stored whole above the size cap), and the record
   * keys of the children the run sent (`childJobs`, its links down the chain), if any.
   */
  complete(result: unknown, children?: readonly string[]): Promise<LeaseWrite>;
  /**
   * Ends the run after a failure. `transient`: the lease is released so a retry can run, and
   * the attempt count and error stay. `permanent`: the record lets a later redrive of the same
   * message run again.
   * @param failedAtMs when the failure happened, epoch ms, written as `lastFailureAtMs`. The
   *   worker passes the time it began dead-lettering, before the DLQ send (the DLQ evidence's
   *   `LastFailureAt`): a message sent before it cannot be a redrive of that dead letter.
   *   @default now
   */
  fail(error: unknown, kind: 'transient' | 'permanent', failedAtMs?: number): Promise<LeaseWrite>;
  /**
   * Ends the run without counting it as an attempt: the run stopped to wait on a flow-control
   * limit, not because it failed. The next delivery runs with this same attempt number. Optional:
   * a guard without it has the run released with `fail(error, 'transient')` (an attempt spent).
   */
  handBack?(): Promise<LeaseWrite>;
  /**
   * {@link complete}, and `items` written in the same DynamoDB transaction (a batch child's count:
   * lib/runtime/batches/). Optional: a guard without transactions leaves it out, and batches are
   * then refused. The transaction's `ClientRequestToken` derives from the lease, so a retry of a
   * transaction whose response was lost is answered without writing twice.
   */
  completeTogether?(
    result: unknown,
    children: readonly string[] | undefined,
    items: readonly TransactWriteItem[],
  ): Promise<TogetherWrite>;
  /** {@link fail} as `permanent` (the job was dead-lettered), and `items` in the same transaction. */
  failTogether?(
    error: unknown,
    items: readonly TransactWriteItem[],
    failedAtMs?: number,
  ): Promise<TogetherWrite>;
  /** Runs `fn` once per step under this key; a completed step returns its stored value. */
  once<T>(stepName: string, fn: () => Promise<T>): Promise<T>;
  /** Stable key for external APIs, per job key and step. */
  idempotencyKey(stepName: string): string;
}

/** What the worker calls per record when a job is idempotent (the default). */
export interface IdempotencyGuard {
  /**
   * Takes the lease for a key, or says why not.
   * @throws {PermanentError} when the key is already used with a different payload hash.
   * @throws transient errors (DynamoDB throttling, network) as they come.
   */
  begin(request: BeginRequest): Promise<BeginOutcome>;
}

/**
 * A FIFO message group held after one of its jobs was dead-lettered under
 * `onDeadLetter: 'park'`: the group record (docs/contracts.md, "Idempotency table"). Later
 * messages of the group are dead-lettered as `GroupParked` until the blocking job completes.
 */
export interface GroupPark {
  /** Partition key: `groupRecordKey(queueName, messageGroupId)`. */
  readonly pk: string;
  /** The worker's logical queue name (`JOBS_QUEUE_NAME`): groups are scoped by queue. */
  readonly queueName: string;
  readonly messageGroupId: string;
  /**
   * Identity of the blocking job: the `pk` of its job record (`jobRecordKey(type, key)`). A record
   * of the group is the blocker when its own job record key, or the key of its type with its
   * envelope's default key (`source` + `id`), equals this.
   */
  readonly blockerPk: string;
  /** Envelope `type` of the blocking job. */
  readonly blockerJobType: string;
  /** Envelope `id` of the blocking job. */
  readonly blockerJobId: string;
  /** SQS messageId of the blocking record when it was dead-lettered (its DLQ `SourceMessageId`). */
  readonly blockerMessageId: string;
  /** `ErrorReason` of the blocking job's dead-lettering. */
  readonly blockerReason: string;
  /** First time this blocker parked the group, epoch ms. */
  readonly parkedAtMs: number;
  /** Last (re)park by this blocker, epoch ms. */
  readonly updatedAtMs: number;
  /** How many times this blocker was dead-lettered while parking the group (1, then +1 per failed redrive). */
  readonly parkCount: number;
  /** TTL, epoch seconds: the park counts as gone from then on. */
  readonly expiresAt: number;
}

/** Input of {@link GroupParkStore.parkGroup}: the group and its blocking job. */
export interface ParkGroupRequest {
  readonly queueName: string;
  readonly messageGroupId: string;
  readonly blockerPk: string;
  readonly blockerJobType: string;
  readonly blockerJobId: string;
  readonly blockerMessageId: string;
  readonly blockerReason: string;
}

/** Outcome of {@link GroupParkStore.parkGroup}. */
export type ParkGroupOutcome =
  /** The group is parked behind this blocker (new, or refreshed when the same blocker failed again). */
  | { readonly status: 'parked'; readonly park: GroupPark }
  /** Another job already parks the group (and keeps doing so): `park` is that one's. */
  | { readonly status: 'parked-by-other'; readonly park: GroupPark };

/** Outcome of {@link GroupParkStore.unparkGroup}: `cleared`, or nothing to clear for this blocker. */
export type UnparkOutcome = 'cleared' | 'not-parked' | 'parked-by-other';

/**
 * Where parked FIFO groups are kept, so the park holds across invocations and Lambda instances.
 * The DynamoDB store implements it next to {@link IdempotencyGuard} (same table, its own record
 * kind); a worker with `onDeadLetter: 'park'` needs a guard that also implements this.
 */
export interface GroupParkStore {
  /**
   * The park of a group, or undefined when it is not parked (no record, or its TTL passed).
   * Strongly consistent: a park written just before the blocker was acknowledged is seen by the
   * next message of the group on any instance.
   */
  readGroupPark(queueName: string, messageGroupId: string): Promise<GroupPark | undefined>;
  /** Parks a group behind a blocker (conditional write: absent, expired, or the same blocker). */
  parkGroup(request: ParkGroupRequest): Promise<ParkGroupOutcome>;
  /** Clears the park of a group if `blockerPk` holds it (conditional delete). */
  unparkGroup(queueName: string, messageGroupId: string, blockerPk: string): Promise<UnparkOutcome>;
}

/** Whether a guard also keeps parked groups. */
export function isGroupParkStore(value: unknown): value is GroupParkStore {
  const v = value as Partial<GroupParkStore> | null | undefined;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.readGroupPark === 'function' &&
    typeof v.parkGroup === 'function' &&
    typeof v.unparkGroup === 'function'
  );
}

/** Input of {@link ScheduledJobStore.startScheduledJob}: the job sent for later and its message's generation. */
export interface ScheduledStartRequest {
  /** The envelope `source`. */
  readonly source: string;
  /** The envelope `id`. */
  readonly id: string;
  /** The envelope's `schedulegeneration`, as a number. */
  readonly generation: number;
  /** The SQS messageId, kept on the item as evidence of the delivery that started it. */
  readonly messageId: string;
}

/**
 * Outcome of {@link ScheduledJobStore.startScheduledJob}: `started` (run it: first start, or this
 * generation started before: a redelivery or a second firing), `cancelled`, `superseded` (the job
 * was rescheduled: another generation runs), `missing` (no state item, or it expired).
 */
export type ScheduledStart = 'started' | 'cancelled' | 'superseded' | 'missing';

/**
 * Where the state of jobs sent for later is kept (docs/contracts.md, "Jobs sent for later"). The
 * DynamoDB store implements it next to {@link IdempotencyGuard} (same table, its own items).
 */
export interface ScheduledJobStore {
  /** One conditional write: marks the job started if its message's generation is current and it is not cancelled. */
  startScheduledJob(request: ScheduledStartRequest): Promise<ScheduledStart>;
  /**
   * Whether a state item (not expired) exists for the job `source`/`id`: asked only of a message
   * that arrives far before its `runat` (more than 15 minutes, which no message of `JobClient`
   * does), to tell a job that waits from a hand-made one that would wait forever. Optional: a
   * store without it lets such a message wait.
   */
  scheduledJobExists?(source: string, id: string): Promise<boolean>;
}

/** Whether a guard also keeps the state of jobs sent for later. */
export function isScheduledJobStore(value: unknown): value is ScheduledJobStore {
  const v = value as Partial<ScheduledJobStore> | null | undefined;
  return typeof v === 'object' && v !== null && typeof v.startScheduledJob === 'function';
}
