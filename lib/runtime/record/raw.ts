/**
 * The raw-message stage: a body that is not an envelope, on a worker with a job that accepts raw
 * messages (`defineJob({ raw })`), is read as that job's message (raw-messages.ts) and runs as the
 * envelope made of it; every later stage is the same as for an envelope.
 */
import type { SQSRecord } from 'aws-lambda';
import type { JobEnvelope } from '../../core/envelope.ts';
import { type RawMessageOptions, readRawMessage, type WorkerJobTypes } from '../raw-messages.ts';
import type { AnyJob } from './deps.ts';

/**
 * The envelope a raw message of `job` runs as; undefined when the body is an envelope of this
 * worker (bad or good: its own envelope error stands), as `isOwnEnvelope` tells by `jobTypes`.
 * @throws {RawMessageError} naming what the message lacks (permanent).
 */
export function rawEnvelopeOf(
  record: SQSRecord,
  job: AnyJob,
  jobTypes: WorkerJobTypes,
): JobEnvelope | undefined {
  return readRawMessage(record, job.type, job.raw as RawMessageOptions, jobTypes);
}
