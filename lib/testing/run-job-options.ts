/**
 * The checks of `runJob`'s options. A misspelled key (`{ jobid }`) or an attempt the worker never
 * sees (`0`, `-1`) would otherwise run the job with a default the test did not mean, and the test
 * would pass for a case that never happens in production. Unknown keys are refused as the
 * client's options are (option-keys.ts: known keys named, the nearest one suggested).
 */
import { describeValue, isPlainObject, unknownKeyProblems } from '../client/option-keys.ts';
import { JobError } from '../core/errors.ts';

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
 *   that is not an object of strings.
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
  if (problems.length > 0) throw new JobError(`runJob refused its options: ${problems.join('; ')}`);
}
