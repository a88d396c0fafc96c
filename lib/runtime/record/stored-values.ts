/**
 * Warns, on the run that produced it, about a step value or result that the idempotency store
 * will not keep because it would not read back the same from its JSON text (a `Date`, a `Map`,
 * `NaN`...): said at WARN before any retry meets `StepValueNotStoredError`.
 */
import { type StoredValueSubject, unfaithfulJsonReason } from '../idempotency/faithful-json.ts';
import type { Lease } from '../idempotency/guard.ts';
import type { RecordRun } from './record-run.ts';

/**
 * `ctx.once` under a lease: the step runs at most once per job key. A value the step function
 * returned in this run that would not read back the same from its JSON text (a `Date`, a `Map`,
 * `NaN`...) is not stored by the store (marker `not-json`): said here at WARN, on the run that
 * produced it, before any retry meets `StepValueNotStoredError`.
 */
export async function onceUnderLease<T>(
  run: RecordRun,
  lease: Lease,
  stepName: string,
  fn: () => Promise<T>,
): Promise<T> {
  const value = await lease.once(stepName, fn);
  warnIfNotStored(run, value, { kind: 'step', stepName });
  return value;
}

/** What the store does instead of storing a value that would not read back the same. */
const NOT_STORED_CONSEQUENCE = {
  step: "the step's value is not stored (marker not-json): a retry of this job that reaches the step is dead-lettered with StepValueNotStoredError instead of running it again; return a JSON value from the step",
  result:
    'the result is not stored (marker not-json): a duplicate delivery is absorbed with resultStored false; return a JSON value from the job',
} as const;

/** Logs at WARN, with the sentence the store records, when `value` would not read back the same. */
export function warnIfNotStored(run: RecordRun, value: unknown, subject: StoredValueSubject): void {
  const reason = unfaithfulJsonReason(value, subject);
  if (reason === undefined) return;
  run.logger.warn(reason, {
    notStored: subject.kind,
    ...(subject.kind === 'step' ? { stepName: subject.stepName } : {}),
    consequence: NOT_STORED_CONSEQUENCE[subject.kind],
  });
}
