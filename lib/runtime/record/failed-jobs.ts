/** A failed record as the EMF metadata `failedJobs` of its job type lists it, with its lineage. */
import { lineageLogKeys } from '../lineage.ts';
import type { FailedJobMetadata } from '../telemetry.ts';
import type { RecordRun } from './record-run.ts';

/** Lists a failed record with its lineage in the EMF metadata of its job type (`failedJobs`). */
export function noteFailure(run: RecordRun, jobType: string, outcome: 'retry' | 'dead-lettered'): void {
  const failure = failureOf(run, outcome);
  if (failure !== undefined) run.deps.metrics.addFailure(jobType, failure);
}

/** A failed record and its lineage as `failedJobs` lists it; undefined before the envelope is read. */
export function failureOf(run: RecordRun, outcome: 'retry' | 'dead-lettered'): FailedJobMetadata | undefined {
  const { envelope } = run;
  if (envelope === undefined) return undefined;
  return { jobId: envelope.id, outcome, ...lineageLogKeys(envelope) };
}
