/** The state of one record as it goes through the pipeline's stages, and its loggers. */
import type { SQSRecord } from 'aws-lambda';
import type { JobEnvelope } from '../../core/envelope.ts';
import type { JobIdentity } from '../group-park.ts';
import type { GroupPark } from '../idempotency/guard.ts';
import { withLineage } from '../lineage.ts';
import { type WorkerLogger, withKeys } from '../telemetry.ts';
import type { RecordDeps } from './deps.ts';

/**
 * Per-record state threaded through the stages. Its loggers are built on first use: a record
 * that completes logs nothing of its own by default, and building them for every record was a
 * good part of the worker's allocations per record (issue 10 profile).
 */
export class RecordRun {
  readonly record: SQSRecord;
  readonly deps: RecordDeps;
  readonly receiveCount: number;
  jobType: string | undefined = undefined;
  /** The FIFO message group to park or check; undefined when parking does not apply. */
  readonly groupId: string | undefined;
  /** Who the job is (once the envelope is read): what a park names, what recognises a blocker. */
  identity: JobIdentity | undefined = undefined;
  /** Set when this record is the blocking job of its parked group, coming back (a redrive). */
  blocker: GroupPark | undefined = undefined;
  #envelope: JobEnvelope | undefined;
  /** For the trace: the job's key once known. */
  key: string | undefined = undefined;
  #attempt: number | undefined;
  #lineageLogger: WorkerLogger | undefined;
  #logger: WorkerLogger | undefined;

  constructor(record: SQSRecord, deps: RecordDeps) {
    this.record = record;
    this.deps = deps;
    this.receiveCount = readReceiveCount(record);
    this.groupId = deps.parking ? deps.features.groupParking?.parkingGroupOf(record) : undefined;
  }

  /** The envelope, once read. */
  get envelope(): JobEnvelope | undefined {
    return this.#envelope;
  }

  /** The worker's logger with the envelope's lineage keys, once the envelope is read. */
  get lineageLogger(): WorkerLogger {
    if (this.#envelope === undefined) return this.deps.logger;
    this.#lineageLogger ??= withLineage(this.deps.logger, this.#envelope);
    return this.#lineageLogger;
  }

  /** The record's logger: `messageId`, then `jobType` and `jobId` once read, then `attempt` once known. */
  get logger(): WorkerLogger {
    if (this.#logger === undefined) {
      const envelope = this.#envelope;
      const keys: Record<string, unknown> = { messageId: this.record.messageId };
      if (envelope !== undefined) {
        keys.jobType = envelope.type;
        keys.jobId = envelope.id;
      }
      if (this.#attempt !== undefined) keys.attempt = this.#attempt;
      this.#logger = withKeys(this.lineageLogger, keys);
    }
    return this.#logger;
  }

  /** The envelope is read: its type and id (and lineage) go into the logs from now on. */
  readEnvelope(envelope: JobEnvelope): void {
    this.#envelope = envelope;
    this.jobType = envelope.type;
    this.#lineageLogger = undefined;
    this.#logger = undefined;
  }

  /** The attempt is known (the run starts): it goes into the logs from now on. */
  startAttempt(attempt: number): void {
    this.#attempt = attempt;
    this.#logger = undefined;
  }
}

/** SQS's `ApproximateReceiveCount`: 1 on a first delivery, and when absent or unreadable. */
function readReceiveCount(record: SQSRecord): number {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isInteger(count) && count >= 1 ? count : 1;
}
