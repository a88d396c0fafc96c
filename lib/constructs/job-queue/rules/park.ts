/**
 * Jobs that park their FIFO group after a dead letter (`onDeadLetter: 'park'`, lib/runtime/job.ts)
 * keep the park in the idempotency table and only mean something on a FIFO queue (a standard
 * queue has no message groups). Checked here from the `jobs` given to the queue and the queue's
 * `onDeadLetter` (the entry's `createWorker({ onDeadLetter })`, declared on the queue because the
 * entry is not visible at synth; the worker checks its own options when it starts).
 * - `onDeadLetter` other than `'continue'` or `'park'`: refused.
 * - `idempotencyTable: false` with a parking job: refused (the worker refuses to start: the park
 *   record has nowhere to live).
 * - a parking job on a standard queue: warning (the worker ignores the option there and says so).
 */
import { JOB_QUEUE_WARNINGS } from '../defaults.ts';
import { error, type JobQueueRule, warning } from './types.ts';

const POLICIES: readonly unknown[] = ['continue', 'park'];

export const parkRule: JobQueueRule = ({ props, settings }) => {
  if (props.onDeadLetter !== undefined && !POLICIES.includes(props.onDeadLetter)) {
    return [error(`onDeadLetter: ${JSON.stringify(props.onDeadLetter)} is neither 'continue' nor 'park'`)];
  }
  const parkingJobs = (Array.isArray(props.jobs) ? props.jobs : [])
    .filter((job) => job?.onDeadLetter === 'park')
    .map((job) => job.type);
  const parking = [
    ...(props.onDeadLetter === 'park' ? ["onDeadLetter 'park' (the worker's default)"] : []),
    ...(parkingJobs.length > 0 ? [`jobs ${parkingJobs.join(', ')}`] : []),
  ];
  if (parking.length === 0) return [];
  const list = parking.join(' and ');
  const findings = [];
  if (props.idempotencyTable === false) {
    findings.push(
      error(
        `idempotencyTable: false, but ${list} park their group on a dead letter (onDeadLetter: 'park'), which is kept in the idempotency table: pass the table, or use onDeadLetter: 'continue'`,
      ),
    );
  }
  if (!settings.fifo) {
    findings.push(
      warning(
        JOB_QUEUE_WARNINGS.parkOnStandardQueue,
        `${list} ask to park their group on a dead letter (onDeadLetter: 'park'), but this is a standard queue: it has no message groups, so nothing is parked; use a FIFO queue (fifo: true) or onDeadLetter: 'continue'`,
      ),
    );
  }
  return findings;
};
