/**
 * Parked FIFO message groups inside one invocation (`onDeadLetter: 'park'`, docs/architecture.md
 * decision guide; the group record: docs/contracts.md "Idempotency table").
 *
 * When a job whose policy is `park` is dead-lettered, its group is parked in the idempotency
 * table before the DLQ send (so a park that could not be written never lets the group go on),
 * naming the job as the blocker. Every later record of the group, on any invocation or instance,
 * is dead-lettered as `GroupParked` without running, until the blocker itself comes back (a
 * redrive) and completes: then the park is cleared and the group runs again in order.
 *
 * Cost: a worker where no job parks (and whose `onDeadLetter` is `continue`) never builds this
 * and never reads. Otherwise, per FIFO message group and batch, one strongly consistent GetItem
 * at the group's first record that reaches the idempotency step; the group's later records in the
 * batch use what this batch knows (its own park and unpark writes included). Records of a group
 * run one at a time (batch.ts), so nothing here races within a group.
 */
import type { SQSRecord } from 'aws-lambda';
import { isFifoRecord } from './batch.ts';
import {
  type GroupPark,
  type GroupParkStore,
  type IdempotencyGuard,
  isGroupParkStore,
  type ParkGroupOutcome,
  type UnparkOutcome,
} from './idempotency/guard.ts';
import { defaultJobKey, groupRecordKey, jobRecordKey } from './idempotency/keys.ts';
import type { DeadLetterPolicy } from './job.ts';
import { GroupParkedError } from './worker-errors.ts';

/** The blocking job of a park write. */
export interface ParkBlocker {
  /** Its identity: the first of its {@link jobIdentityPks}. */
  readonly pk: string;
  readonly jobType: string;
  readonly jobId: string;
  readonly messageId: string;
  readonly reason: string;
}

/**
 * The `MessageGroupId` a record is parked under: that of a FIFO record; undefined on standard
 * queues (fair queues' groups name tenants, not an order) and for a FIFO record without one.
 */
export function parkingGroupOf(record: SQSRecord): string | undefined {
  const group = record.attributes?.MessageGroupId;
  return group !== undefined && group !== '' && isFifoRecord(record) ? group : undefined;
}

/**
 * The identities a record of a job can have as a blocker, most specific first: the `pk` of its
 * job record (`jobType` + job key, when the key is known), and the `pk` of its type with the
 * envelope's default key (`source` + `id`). A park names the first one known when it is written;
 * a record is the blocker when any of its identities equals the park's, so a job dead-lettered
 * before its key could be derived (data that failed its schema) is still recognised once fixed.
 */
export function jobIdentityPks(
  jobType: string,
  key: string | undefined,
  source: string,
  id: string,
): readonly string[] {
  const pks: string[] = [];
  for (const make of [
    () => jobRecordKey(jobType, key ?? ''),
    () => jobRecordKey(jobType, defaultJobKey(source, id)),
  ]) {
    try {
      const pk = make();
      if (!pks.includes(pk)) pks.push(pk);
    } catch {
      // an empty key or type: not an identity
    }
  }
  return pks;
}

/** Who a record's job is, as far as known: from its envelope, then its job key. */
export interface JobIdentity {
  readonly jobType: string;
  readonly jobId: string;
  /** {@link jobIdentityPks}. */
  readonly pks: readonly string[];
}

/** What a group's park means for one of its records. */
export type ParkCheck =
  /** Not parked: run the record. */
  | { readonly kind: 'free' }
  /** Parked behind this very job (a redrive of the blocker): run it; clear the park when it completes. */
  | { readonly kind: 'blocker'; readonly park: GroupPark }
  /** Parked behind another job: dead-letter this record as `GroupParked` without running it. */
  | { readonly kind: 'parked'; readonly park: GroupPark };

/** The parking state of one invocation; built per batch by the worker, never kept after it. */
export class BatchParking {
  readonly #store: GroupParkStore;
  readonly #queueName: string;
  readonly #defaultPolicy: DeadLetterPolicy;
  /** Per group: its park, `null` when known not parked; absent when not read yet. */
  readonly #known = new Map<string, GroupPark | null>();

  constructor(store: GroupParkStore, queueName: string, defaultPolicy: DeadLetterPolicy) {
    this.#store = store;
    this.#queueName = queueName;
    this.#defaultPolicy = defaultPolicy;
  }

  /** The policy of a job (the worker's `onDeadLetter` when the job says nothing or is unknown). */
  policyOf(job: { readonly onDeadLetter?: DeadLetterPolicy | undefined } | undefined): DeadLetterPolicy {
    return job?.onDeadLetter ?? this.#defaultPolicy;
  }

  /**
   * What the group's park means for a record with identities `pks`: read once per group and batch.
   * @throws what the store throws (transient `IdempotencyStoreError`, permanent `IdempotencyRecordError`).
   */
  async check(groupId: string, pks: readonly string[]): Promise<ParkCheck> {
    let park = this.#known.get(groupId);
    if (park === undefined) {
      park = (await this.#store.readGroupPark(this.#queueName, groupId)) ?? null;
      this.#known.set(groupId, park);
    }
    if (park === null) return { kind: 'free' };
    return pks.includes(park.blockerPk) ? { kind: 'blocker', park } : { kind: 'parked', park };
  }

  /**
   * Before a record of `groupId` is sent to the DLQ: parks its group when the policy of its job
   * (`job`, undefined when unrouted: the worker's default) is `park`, naming `identity` as the
   * blocker. Skipped (`undefined`) under `continue`, for a body that is not a job envelope (no
   * identity: nothing could ever be recognised as its redrive), and when this batch knows the
   * group is parked behind another job already (a store answering `parked-by-other` keeps it so).
   * @throws what the store throws: the record must then not be acknowledged.
   */
  async parkOnDeadLetter(
    groupId: string,
    job: { readonly onDeadLetter?: DeadLetterPolicy | undefined } | undefined,
    identity: JobIdentity | undefined,
    messageId: string,
    reason: string,
  ): Promise<ParkGroupOutcome | undefined> {
    if (this.policyOf(job) !== 'park' || identity === undefined) return undefined;
    let pk = identity.pks[0];
    const known = this.#known.get(groupId);
    if (known) {
      // Parked already: behind this job (refreshed under the identity it was parked with), or
      // behind another job, whose park stays.
      if (!identity.pks.includes(known.blockerPk)) return undefined;
      pk = known.blockerPk;
    }
    if (pk === undefined) return undefined;
    return this.park(groupId, { pk, jobType: identity.jobType, jobId: identity.jobId, messageId, reason });
  }

  /** Parks the group behind `blocker` (the write before the DLQ send). @throws what the store throws. */
  async park(groupId: string, blocker: ParkBlocker): Promise<ParkGroupOutcome> {
    const outcome = await this.#store.parkGroup({
      queueName: this.#queueName,
      messageGroupId: groupId,
      blockerPk: blocker.pk,
      blockerJobType: blocker.jobType,
      blockerJobId: blocker.jobId,
      blockerMessageId: blocker.messageId,
      blockerReason: blocker.reason,
    });
    this.#known.set(groupId, outcome.park);
    return outcome;
  }

  /** Clears the park of `blockerPk` (its job completed). @throws what the store throws. */
  async unpark(groupId: string, blockerPk: string): Promise<UnparkOutcome> {
    const outcome = await this.#store.unparkGroup(this.#queueName, groupId, blockerPk);
    if (outcome !== 'parked-by-other') this.#known.set(groupId, null);
    return outcome;
  }

  /** The error a record of a parked group is dead-lettered with: names the blocker and the group record. */
  parkedError(groupId: string, park: GroupPark): GroupParkedError {
    const pk = groupRecordKey(this.#queueName, groupId);
    return new GroupParkedError(
      `message group ${JSON.stringify(groupId)} of queue ${this.#queueName} is parked behind job ` +
        `${park.blockerJobType} ${JSON.stringify(park.blockerJobId)} (SQS message ${park.blockerMessageId}, ` +
        `dead-lettered ${new Date(park.updatedAtMs).toISOString()}: ${park.blockerReason}); this job was not run. ` +
        'Fix the cause, then redrive the DLQ group in order (the blocking job first): the group runs again once ' +
        `it completes. Group record: ${JSON.stringify(pk)}.`,
      {
        queueName: this.#queueName,
        messageGroupId: groupId,
        groupRecordKey: pk,
        blocker: {
          jobType: park.blockerJobType,
          jobId: park.blockerJobId,
          messageId: park.blockerMessageId,
          reason: park.blockerReason,
          pk: park.blockerPk,
        },
      },
    );
  }
}

/**
 * Parking keeps its state in the idempotency table: a worker without one cannot park. A problem
 * naming the fix when `idempotency` (the worker's option) cannot keep parked groups.
 * @param parks what parks (`onDeadLetter`, `job <type>`); empty: nothing parks, no problem.
 */
export function parkingGuardProblems(
  idempotency: IdempotencyGuard | false | undefined,
  parks: readonly string[],
): string[] {
  if (parks.length === 0) return [];
  const who = `onDeadLetter: 'park' (${parks.join(', ')})`;
  if (idempotency === false) {
    return [
      `${who} needs the idempotency table, where a parked group is kept across invocations; remove idempotency: false or use onDeadLetter: 'continue'`,
    ];
  }
  if (idempotency !== undefined && !isGroupParkStore(idempotency)) {
    return [
      `${who} needs an idempotency guard that keeps parked groups (readGroupPark, parkGroup, unparkGroup: GroupParkStore), as the DynamoDB store does`,
    ];
  }
  return [];
}
