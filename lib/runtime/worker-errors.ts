/**
 * Errors raised by the batch worker itself (as opposed to errors thrown by jobs). Each one is a
 * {@link PermanentError} or {@link TransientError} so {@link classifyError} routes it without
 * special cases, and its `name` is what lands in the DLQ evidence attribute `ErrorName`.
 */
import { JobError, PermanentError, TransientError } from '../core/errors.ts';

/**
 * The worker's options or environment are unusable (missing `JOBS_QUEUE_URL`, duplicate job
 * types, ...). Raised by {@link createWorker} for mistakes in code; for mistakes in the
 * environment it is logged and every record of the event is reported failed.
 */
export class WorkerConfigError extends JobError {
  /** Every problem found, one sentence each. */
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid worker configuration: ${problems.join('; ')}`, { context: { problems } });
    this.problems = problems;
  }
}

/** The envelope `type` names no job of this worker: permanent, a retry routes it the same way. */
export class UnknownJobTypeError extends PermanentError {
  constructor(type: string, known: readonly string[]) {
    super(`no job of type ${JSON.stringify(type)} in this worker (known: ${known.join(', ') || 'none'})`, {
      context: { type },
    });
  }
}

/** The job data failed the job's Standard Schema: permanent. `issues` lists the schema's findings. */
export class JobDataInvalidError extends PermanentError {
  readonly issues: readonly string[];
  constructor(type: string, issues: readonly string[]) {
    super(`data of ${type} failed its schema: ${issues.join('; ')}`, { context: { type, issues } });
    this.issues = issues;
  }
}

/**
 * A run hit its soft time limit (the job's `timeoutSeconds`) or the Lambda deadline minus the
 * worker's margin; the run's `ctx.signal` was aborted with this error. Transient.
 */
export class JobTimeoutError extends TransientError {
  /** Which limit fired: `job` = `timeoutSeconds`, `lambda` = the invocation deadline. */
  readonly limit: 'job' | 'lambda';
  constructor(type: string, limitMs: number, limit: 'job' | 'lambda') {
    const what = limit === 'job' ? 'its timeoutSeconds' : 'the Lambda deadline minus the worker margin';
    super(`${type} was aborted after ${limitMs} ms: it reached ${what}`, {
      context: { type, limitMs, limit },
    });
    this.limit = limit;
  }
}

/**
 * The job's identity could not be computed from its message: its idempotency key (the job's
 * `idempotency.key(data)` threw, or returned something other than a non-empty string) or the hash
 * of its data (`payloadHash`). Both are functions of the message alone, so every delivery would
 * fail the same way: permanent, dead-lettered with this evidence on the first delivery, and never
 * taken for the idempotency store being unavailable (DESIGN.md, "Poison is permanent"; issue 22).
 * `context` has `type` and `step` (`key` or `payload-hash`); `cause` is what was thrown, if anything.
 */
export class JobIdentityError extends PermanentError {
  /** What failed: the idempotency key, or the hash of the data. */
  readonly step: 'key' | 'payload-hash';
  constructor(type: string, step: 'key' | 'payload-hash', problem: string, cause?: unknown) {
    super(
      `the ${step === 'key' ? 'idempotency key' : 'payload hash'} of ${type} could not be computed: ${problem}`,
      {
        cause,
        context: { type, step },
      },
    );
    this.step = step;
  }
}

/** Some children enqueued by a successful run were not sent: transient, the re-run derives the same child ids. */
export class ChildEnqueueError extends TransientError {}

/**
 * The children of a successful run were refused before sending (unknown queue, data failing the
 * child's schema, FIFO child without partition key): permanent, a re-run builds the same ones.
 */
export class ChildRejectedError extends PermanentError {}

/**
 * An earlier run of this job took the lease and never completed (crash, timeout), and the job's
 * idempotency policy is `onLeaseExpired: 'dead-letter'` (rather never than twice): the job is
 * not run again but dead-lettered for a person to decide. Permanent.
 */
export class LeaseExpiredError extends PermanentError {}

/**
 * FIFO: this record's message group is parked behind a job that was dead-lettered under
 * `onDeadLetter: 'park'`, so this job was not run: it is dead-lettered after its blocker, with
 * `ErrorReason` `GroupParked` and a message naming the blocker (type, job id, SQS message id, its
 * reason) and the group record. Permanent. The stack is left out of the evidence: no code failed.
 * `context` has `queueName`, `messageGroupId`, `groupRecordKey` and `blocker`.
 */
export class GroupParkedError extends PermanentError {
  constructor(message: string, context: Record<string, unknown>) {
    super(message, { context });
    this.stack = `${this.name}: ${message}`;
  }
}

/**
 * A message for a job that accepts raw messages (`defineJob({ raw })`) could not be read: its
 * body is not JSON, not the shape `raw.from` names (an SNS notification, an EventBridge event),
 * or it has no identity where `raw.id` says. A property of the message: permanent, dead-lettered
 * with this evidence on the first delivery. `field` names what is missing or wrong.
 */
export class RawMessageError extends PermanentError {
  readonly field: string;
  constructor(type: string, field: string, problem: string) {
    super(`raw message for ${type}: ${field} ${problem}`, { context: { type, field } });
    this.field = field;
  }
}

/**
 * A job that needs order per key (`ordered: true`) arrived without a FIFO message group: it was
 * sent to a standard queue, where SQS keeps no order, so running it could apply it out of order.
 * Permanent: dead-lettered with this evidence on its first delivery, never retried; send it to
 * the job's FIFO queue with a partition key. `context` has `type` and `eventSourceARN`.
 */
export class OrderedJobWithoutGroupError extends PermanentError {
  constructor(type: string, eventSourceARN: string | undefined) {
    super(
      `${type} needs order per key (ordered: true) but arrived without a FIFO message group${eventSourceARN === undefined ? '' : ` (from ${eventSourceARN})`}: SQS keeps no order on a standard queue, so it was not run. Send it to the job's FIFO queue with a partitionKey (its MessageGroupId), or drop ordered: true if the job does not depend on order`,
      { context: { type, eventSourceARN } },
    );
  }
}
