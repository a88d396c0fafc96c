/**
 * The checks of `runJob`'s options. A misspelled key (`{ jobid }`) or an attempt the worker never
 * sees (`0`, `-1`) would otherwise run the job with a default the test did not mean, and the test
 * would pass for a case that never happens in production. Unknown keys are refused as the
 * client's options are (option-keys.ts: known keys named, the nearest one suggested).
 */
import { describeValue, isPlainObject, unknownKeyProblems } from '../client/option-keys.ts';
import { JobError } from '../core/errors.ts';
import { RECORDED_LOG_LEVELS } from './log-recorder.ts';

const RUN_JOB_OPTION_KEYS = [
  'jobId',
  'source',
  'partitionKey',
  'attempt',
  'lineage',
  'timeoutMs',
  'remainingMs',
  'completedSteps',
  'batch',
  'queueUrls',
  'logLevel',
] as const;

const LINEAGE_KEYS = [
  'parentJobId',
  'rootJobId',
  'correlationId',
  'parentJob',
  'traceparent',
  'tracestate',
] as const;

/** What to write instead of a key a user may bring from SQS or the envelope. */
const HINTS: Readonly<Record<string, string>> = {
  id: 'jobId (the envelope id, ctx.jobId)',
  messagegroupid: 'partitionKey (it becomes the MessageGroupId)',
  approximatereceivecount: 'attempt (ctx.attempt, 1-based)',
  timeoutseconds: 'timeoutMs (milliseconds)',
};

/** The envelope's own names of the lineage fields. */
const LINEAGE_HINTS: Readonly<Record<string, string>> = {
  parentid: 'parentJobId',
  causationid: 'parentJobId (the envelope causationid)',
  rootid: 'rootJobId (the envelope rootid)',
  correlationid: 'correlationId',
  parentjob: 'parentJob',
};

/**
 * @throws {JobError} listing every problem: an unknown key (with the nearest known one), an
 *   `attempt` that is not an integer ≥ 1 (SQS's `ApproximateReceiveCount` starts at 1), a
 *   `timeoutMs` that is not a number > 0, a `remainingMs` that is not a number ≥ 0, `queueUrls`
 *   that is not an object of strings, `completedSteps` that is not an object of step name →
 *   value, a `batch` that is not a `BatchContext` (`id`, counts, `children()`), a `logLevel` that
 *   is not `DEBUG`, `INFO`, `WARN` or `ERROR`.
 */
export function checkRunJobOptions(options: unknown): void {
  if (!isPlainObject(options)) {
    throw new JobError(`runJob options must be an object, got ${describeValue(options)}`);
  }
  const problems = unknownKeyProblems(options, RUN_JOB_OPTION_KEYS, 'options', HINTS);
  const { attempt, timeoutMs, remainingMs, lineage, queueUrls } = options;
  if (attempt !== undefined && !(Number.isInteger(attempt) && (attempt as number) >= 1)) {
    problems.push(
      `options.attempt must be an integer ≥ 1 (the first delivery is attempt 1), got ${describeValue(attempt)}`,
    );
  }
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0)) {
    problems.push(`options.timeoutMs must be a number of milliseconds > 0, got ${describeValue(timeoutMs)}`);
  }
  if (remainingMs !== undefined && !(typeof remainingMs === 'number' && remainingMs >= 0)) {
    problems.push(
      `options.remainingMs must be a number of milliseconds ≥ 0, got ${describeValue(remainingMs)}`,
    );
  }
  if (lineage !== undefined) {
    if (isPlainObject(lineage))
      problems.push(...unknownKeyProblems(lineage, LINEAGE_KEYS, 'options.lineage', LINEAGE_HINTS));
    else problems.push(`options.lineage must be an object, got ${describeValue(lineage)}`);
  }
  if (queueUrls !== undefined) {
    if (!isPlainObject(queueUrls) || Object.values(queueUrls).some((url) => typeof url !== 'string')) {
      problems.push(
        `options.queueUrls must be an object of logical queue name → queue URL (the worker's), got ${describeValue(queueUrls)}`,
      );
    }
  }
  const { completedSteps, batch } = options;
  if (completedSteps !== undefined && !isPlainObject(completedSteps)) {
    problems.push(
      `options.completedSteps must be an object of step name → the value its earlier run returned (e.g. { charge: 'ch_1' }), got ${describeValue(completedSteps)}`,
    );
  }
  if (batch !== undefined) problems.push(...batchContextProblems(batch));
  const { logLevel } = options;
  if (logLevel !== undefined && !(RECORDED_LOG_LEVELS as readonly unknown[]).includes(logLevel)) {
    problems.push(
      `options.logLevel must be one of ${RECORDED_LOG_LEVELS.join(', ')} (as POWERTOOLS_LOG_LEVEL names them), got ${describeValue(logLevel)}`,
    );
  }
  if (problems.length > 0) throw new JobError(`runJob refused its options: ${problems.join('; ')}`);
}

/** The shape `options.batch` must have: `ctx.batch` of a completion job (a `BatchContext`). */
const BATCH_SHAPE =
  '{ id: string, total, succeeded, deadLettered: integers ≥ 0, children(): an async iterable of child outcomes (e.g. async function* () { yield ... }) }';

/**
 * What is wrong with `options.batch` (it becomes `ctx.batch`): a wrong shape would otherwise fail
 * inside the job as a TypeError, classified transient, as if the job had a bug that a retry fixes.
 */
function batchContextProblems(value: unknown): string[] {
  const batch = value as Record<string, unknown>;
  // Any object (a test may pass an instance of its own BatchContext class), not an array.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [`options.batch must be ${BATCH_SHAPE}, got ${describeValue(value)}`];
  }
  const problems: string[] = [];
  if (typeof batch.id !== 'string' || batch.id === '') {
    problems.push(
      `options.batch.id must be a non-empty string (the batch id), got ${describeValue(batch.id)}`,
    );
  }
  const badCounts = (['total', 'succeeded', 'deadLettered'] as const).filter(
    (count) => !(Number.isInteger(batch[count]) && (batch[count] as number) >= 0),
  );
  for (const count of badCounts) {
    problems.push(`options.batch.${count} must be an integer ≥ 0, got ${describeValue(batch[count])}`);
  }
  const { total, succeeded, deadLettered } = batch as {
    total: number;
    succeeded: number;
    deadLettered: number;
  };
  if (badCounts.length === 0 && succeeded + deadLettered > total) {
    problems.push(
      `options.batch.succeeded + deadLettered (${succeeded + deadLettered}) must be at most total (${total}): each child is counted once`,
    );
  }
  if (typeof batch.children !== 'function') {
    problems.push(
      `options.batch.children must be a function returning an async iterable of child outcomes (e.g. async function* () { yield { index: 0, childId, jobType, status: 'succeeded', result, resultStored: true, reason: undefined, error: undefined } }), got ${describeValue(batch.children)}`,
    );
  }
  return problems;
}
