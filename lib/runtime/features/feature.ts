/**
 * The worker's optional features (`sqs-jobs/worker`): what each one gives the record pipeline,
 * the set a worker was built with, and what happens without one. A feature is a plain object
 * exported from its own module (children.ts, batches.ts...), so a worker that does not import one
 * does not bundle its code (`sideEffects: false`); `createWorker` of `sqs-jobs` has them all
 * (all.ts). The pipeline calls a feature only through `deps.features`, never by import.
 *
 * Without a feature nothing is run without its guarantee: what the job definitions need is
 * refused by `createWorker` (`WorkerConfigError`); what only a message asks for (a batch child,
 * a job sent for later) is dead-lettered at once with {@link MissingFeatureError} as evidence,
 * redrivable once the worker is redeployed with the feature.
 */
import type { SQSRecord } from 'aws-lambda';
import { PermanentError } from '../../core/errors.ts';
import type { BatchContext } from '../batches/context.ts';
import type { completeBatchCompletion, sendCompletionOrHandOff } from '../batches/count.ts';
import type {
  afterDuplicateDelivery,
  completeChildRun,
  countBeforeSend,
  countInBatch,
} from '../batches/dead-letters.ts';
import type { BatchLedger } from '../batches/ledger.ts';
import type { requestBatch, startRequestedBatches } from '../batches/start.ts';
import type { watchBatch } from '../batches/watchdog.ts';
import type { ChainTraceHeaders } from '../chain-trace.ts';
import type { ChildSenderOptions } from '../child-sender.ts';
import type {
  ChildCollector,
  ChildSender,
  childRecordKeys,
  ParentIdentity,
  sendChildren,
} from '../children.ts';
import type { groupParkingProblems } from '../config.ts';
import type { BatchParking, jobIdentityPks, parkingGuardProblems } from '../group-park.ts';
import type { GroupParkStore, IdempotencyGuard } from '../idempotency/guard.ts';
import type { DeadLetterPolicy } from '../job.ts';
import type { rateLimitConflicts } from '../limits/rate-limit.ts';
import type { LimitStorePort, limitStoreProblems } from '../limits/store.ts';
import type { takeRateLimit } from '../limits/take.ts';
import type { identityAttributeOf } from '../raw-messages.ts';
import type { releaseSlot, takeSlot } from '../record/concurrency-slot.ts';
import type { AnyJob } from '../record/deps.ts';
import type { waitForLimit } from '../record/limit-wait.ts';
import type {
  checkParkedGroup,
  parkOnDeadLetter,
  unparkAfterCompletion,
  unparkUnderContinue,
} from '../record/parked-group.ts';
import type { rawEnvelopeOf } from '../record/raw.ts';
import type { checkScheduled } from '../record/scheduled.ts';

/**
 * What marks the six feature objects of this copy of sqs-jobs (brandFeature): module-private and
 * not `Symbol.for`, so a look-alike object (`{ name: 'children' }`) or the feature object of
 * another installed copy of sqs-jobs is refused by createWorker instead of failing at run time
 * (the other copy's code works on its own runtime's shapes).
 */
const FEATURE_BRAND: unique symbol = Symbol('sqs-jobs/worker feature');

/** What every feature object carries: its name and this copy's brand. */
interface Branded {
  readonly [FEATURE_BRAND]: true;
}

/**
 * A feature object of this copy of sqs-jobs: `feature` with the brand `featureSetOf` checks.
 * Called only by the feature modules (children.ts...), so feature.ts imports none of them.
 */
export function brandFeature<F extends WorkerFeature>(feature: Omit<F, typeof FEATURE_BRAND>): F {
  return { ...feature, [FEATURE_BRAND]: true } as F;
}

/** `ctx.enqueue` and the sends of `ctx.startBatch`: children sent through JobClient's send path. */
export interface ChildrenFeature extends Branded {
  readonly name: 'children';
  /** The default sender of a worker's children (JobClient's checks, batching, retries). */
  readonly createChildSender: (options: ChildSenderOptions) => ChildSender;
  /** Collects the children of one run (`ctx.enqueue`), checked as they are added. */
  readonly collectChildren: (parent: ParentIdentity) => ChildCollector;
  readonly sendChildren: typeof sendChildren;
  readonly childRecordKeys: typeof childRecordKeys;
  /** The X-Ray trace headers of one invocation's children (chain-trace.ts), made at its first child. */
  readonly chainTraceHeaders: (...args: ConstructorParameters<typeof ChainTraceHeaders>) => ChainTraceHeaders;
}

/**
 * A feature that keeps state in the idempotency table: the default guard it needs (the DynamoDB
 * store with parked groups, jobs sent for later and batches, idempotency/store.ts).
 */
interface KeepsStateInTable extends Branded {
  readonly createStore: (tableName: string) => IdempotencyGuard;
}

/** Batches (fan-out and fan-in, lib/runtime/batches/): counting children, the completion job, `ctx.batch`, the watchdog. */
export interface BatchesFeature extends KeepsStateInTable {
  readonly name: 'batches';
  /** Where the guard keeps batches (the DynamoDB store's table); undefined: a guard without them. */
  readonly ledgerOf: (guard: IdempotencyGuard | undefined) => BatchLedger | undefined;
  /** `ctx.batch` of a completion job. @throws BatchNotFoundError (permanent) when the batch is not kept. */
  readonly readBatch: (ledger: BatchLedger, batchId: string) => Promise<BatchContext>;
  readonly watchBatch: typeof watchBatch;
  readonly requestBatch: typeof requestBatch;
  readonly startRequestedBatches: typeof startRequestedBatches;
  /** The key of a batch's item, which the starting job's record links. */
  readonly batchRecordKey: (batchId: string) => string;
  readonly completeChildRun: typeof completeChildRun;
  readonly completeBatchCompletion: typeof completeBatchCompletion;
  readonly sendCompletionOrHandOff: typeof sendCompletionOrHandOff;
  readonly countBeforeSend: typeof countBeforeSend;
  readonly countInBatch: typeof countInBatch;
  readonly afterDuplicateDelivery: typeof afterDuplicateDelivery;
}

/** Flow control (`defineJob({ concurrency, rateLimits })`, `ctx.rateLimit`): slots, buckets, waits. */
export interface LimitsFeature extends Branded {
  readonly name: 'limits';
  /** The default limit store, on the idempotency table. */
  readonly createLimitStore: (tableName: string, now: (() => number) | undefined) => LimitStorePort;
  readonly takeSlot: typeof takeSlot;
  readonly releaseSlot: typeof releaseSlot;
  readonly waitForLimit: typeof waitForLimit;
  readonly takeRateLimit: typeof takeRateLimit;
  /** Rate limits of the same name defined differently: a problem each (createWorker). */
  readonly rateLimitConflicts: typeof rateLimitConflicts;
  /** What is wrong with the `limits` option (not a limit store): a problem each (createWorker). */
  readonly limitStoreProblems: typeof limitStoreProblems;
}

/** FIFO groups parked after a dead letter (`onDeadLetter: 'park'`). */
export interface GroupParkingFeature extends KeepsStateInTable {
  readonly name: 'groupParking';
  /** The parking of one invocation (reads each group's park once). */
  readonly parkingFor: (
    store: GroupParkStore,
    queueName: string,
    defaultPolicy: DeadLetterPolicy,
  ) => BatchParking;
  /** The message group a record's park is kept under; undefined: not from a FIFO group. */
  readonly parkingGroupOf: (record: SQSRecord) => string | undefined;
  readonly jobIdentityPks: typeof jobIdentityPks;
  /** What keeps a worker's `idempotency` from keeping parked groups (createWorker). */
  readonly parkingProblems: typeof parkingGuardProblems;
  /** A queue built without group parking (`JOBS_GROUP_PARKING=false`) under a parking worker (config.ts). */
  readonly queueProblems: typeof groupParkingProblems;
  readonly checkParkedGroup: typeof checkParkedGroup;
  readonly unparkAfterCompletion: typeof unparkAfterCompletion;
  readonly parkOnDeadLetter: typeof parkOnDeadLetter;
  readonly unparkUnderContinue: typeof unparkUnderContinue;
}

/** Jobs sent for later (`runAt`, `delaySeconds` beyond SQS's): not early, not cancelled, not superseded. */
export interface ScheduledJobsFeature extends KeepsStateInTable {
  readonly name: 'scheduledJobs';
  readonly checkScheduled: typeof checkScheduled;
}

/** Bodies that are not envelopes, read as one job's messages (`defineJob({ raw })`). */
export interface RawMessagesFeature extends Branded {
  readonly name: 'rawMessages';
  readonly rawEnvelopeOf: typeof rawEnvelopeOf;
  readonly identityAttributeOf: typeof identityAttributeOf;
}

/** One optional feature of the worker, as `createWorker({ features })` of `sqs-jobs/worker` takes it. */
export type WorkerFeature =
  | ChildrenFeature
  | BatchesFeature
  | LimitsFeature
  | GroupParkingFeature
  | ScheduledJobsFeature
  | RawMessagesFeature;

/** The features a worker was built with, by name; an absent one was not given. */
export interface FeatureSet {
  readonly children?: ChildrenFeature | undefined;
  readonly batches?: BatchesFeature | undefined;
  readonly limits?: LimitsFeature | undefined;
  readonly groupParking?: GroupParkingFeature | undefined;
  readonly scheduledJobs?: ScheduledJobsFeature | undefined;
  readonly rawMessages?: RawMessagesFeature | undefined;
}

export type FeatureName = WorkerFeature['name'];

/** The default guard's store for the worker's features; undefined: the core store (no feature keeps state in the table). */
export function storeForFeatures(set: FeatureSet): ((tableName: string) => IdempotencyGuard) | undefined {
  return (set.batches ?? set.groupParking ?? set.scheduledJobs)?.createStore;
}

const FEATURE_NAMES: readonly FeatureName[] = [
  'children',
  'batches',
  'limits',
  'groupParking',
  'scheduledJobs',
  'rawMessages',
];

/** How a user adds features: the import line and the option. */
export function featureAdvice(names: FeatureName | readonly FeatureName[]): string {
  const list = typeof names === 'string' ? [names] : names;
  const them = list.length === 1 ? 'it' : 'them';
  return `add ${them}: import { ${list.join(', ')} } from 'sqs-jobs/worker' and pass ${them} in createWorker's features (createWorker of 'sqs-jobs' has every feature)`;
}

/** The features `feature` needs besides itself that `set` lacks: batches sends through children. */
export function alsoMissing(feature: FeatureName, set: FeatureSet): FeatureName[] {
  return feature === 'batches' && set.children === undefined ? ['children'] : [];
}

/**
 * A message needs a feature the worker was built without: permanent (every delivery would fail
 * the same way), dead-lettered at once with this as evidence; redrive it after redeploying the
 * worker with the feature. Also what `ctx.enqueue`/`ctx.startBatch`/`ctx.rateLimit` throw without
 * it; a run that catches it still fails permanently (run-job.ts).
 */
export class MissingFeatureError extends PermanentError {
  override readonly name = 'MissingFeature';
  /** The feature's name, as `sqs-jobs/worker` exports it (`batches`). */
  readonly feature: FeatureName;

  /** @param also the features `feature` needs that are missing too (alsoMissing): named in the advice. */
  constructor(feature: FeatureName, needs: string, redrive: boolean, also: readonly FeatureName[] = []) {
    const needed =
      also.length === 0
        ? `the ${feature} feature`
        : `the ${feature} feature (and ${also.join(', ')}, which it needs)`;
    super(
      `${needs} needs ${needed}, which this worker was built without: ${featureAdvice([...also, feature])}${
        redrive ? ', redeploy, then redrive this message from the DLQ' : ''
      }`,
    );
    this.feature = feature;
  }
}

/**
 * The set of `features`, checked: problems for what is not a feature object of this copy of
 * sqs-jobs (unbranded), what is given twice, and batches without children.
 */
export function featureSetOf(features: unknown): { set: FeatureSet; problems: string[] } {
  if (features === undefined) return { set: {}, problems: [] };
  if (!Array.isArray(features)) {
    return {
      set: {},
      problems: [
        `features must be an array of the feature objects of sqs-jobs/worker, got ${typeof features}`,
      ],
    };
  }
  const set: Record<string, WorkerFeature> = {};
  const problems: string[] = [];
  for (const [index, feature] of features.entries()) {
    const name = (feature as { name?: unknown } | null)?.name;
    const known = typeof name === 'string' && FEATURE_NAMES.includes(name as FeatureName);
    // Only the objects this copy exports carry the brand: a look-alike would fail at run time.
    if (!known || (feature as Partial<Branded>)[FEATURE_BRAND] !== true) {
      problems.push(
        `features[${index}]${known ? ` (named ${name})` : ''} is not a feature of sqs-jobs/worker: it must be one of the objects exported by sqs-jobs/worker (${FEATURE_NAMES.join(', ')}), e.g. import { children } from 'sqs-jobs/worker'; an object of that name made by hand, or from another copy of sqs-jobs (two installed versions: run npm ls sqs-jobs), is not accepted`,
      );
    } else if (set[name] !== undefined && set[name] !== feature) {
      problems.push(`features lists two different ${name} features`);
    } else set[name] = feature as WorkerFeature;
  }
  // A batch's children, its start and its completion job are sent through the children's sender.
  if (set.batches !== undefined && set.children === undefined) {
    problems.push(
      "batches needs children (a batch's children and its completion job are sent through it): features: [children, batches], import { children, batches } from 'sqs-jobs/worker'",
    );
  }
  return { set: set as FeatureSet, problems };
}

/**
 * What the job definitions (and the worker's own `onDeadLetter`) need that `features` lacks: a
 * problem per missing feature naming the jobs and the import to add.
 * @param parks what parks (`onDeadLetter` of the worker, or `job <type>`); empty when nothing does.
 */
export function missingFeatureProblems(
  jobs: Iterable<AnyJob>,
  parks: readonly string[],
  set: FeatureSet,
): string[] {
  const distinct = [...new Set(jobs)];
  const problems: string[] = [];
  const need = (name: FeatureName, who: string[], what: string) => {
    if (who.length > 0 && set[name] === undefined) {
      problems.push(`${who.join(', ')} ${what}: that needs the ${name} feature; ${featureAdvice(name)}`);
    }
  };
  need(
    'limits',
    distinct
      .filter((job) => job.concurrency !== undefined || (job.rateLimits?.length ?? 0) > 0)
      .map((job) => `job ${job.type}`),
    'declares concurrency or rate limits',
  );
  need(
    'rawMessages',
    distinct.filter((job) => job.raw !== undefined).map((job) => `job ${job.type}`),
    'accepts raw messages',
  );
  need('groupParking', [...parks], "parks its FIFO group (onDeadLetter: 'park')");
  return problems;
}
