/**
 * The settings a {@link JobQueue} runs with: its props with the defaults applied. Values that
 * cannot be known (a required prop missing or malformed, an unresolved token) stay `undefined`,
 * so the rules check only what is known and report a missing prop once, not again through
 * every value derived from it.
 */
import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { JOB_QUEUE_DEFAULTS, LIMITS } from './defaults.ts';
import { findLockFile, type LockFileSearch } from './lock-file.ts';
import type { JobQueueProps } from './props.ts';
import { jobNeeds } from './rules/jobs.ts';
import { isValidJobTimeout, isValidMaxAttempts, secondsOf } from './values.ts';

/** {@link JobQueueProps} with defaults applied; `undefined` where the value cannot be known. */
export interface JobQueueSettings {
  readonly fifo: boolean;
  /** Effective `maxAttempts`: the prop when valid, else what `jobs` need. */
  readonly maxAttempts: number | undefined;
  /** Effective `jobTimeoutSeconds`: the prop when valid, else what `jobs` need. */
  readonly jobTimeoutSeconds: number | undefined;
  readonly maxReceiveCount: number | undefined;
  readonly functionTimeout: Duration | undefined;
  readonly batchSize: number;
  readonly visibilityTimeout: Duration | undefined;
  readonly maxMessageSizeBytes: number;
  /** Absolute path of `entry`; undefined when `entry` is not a non-empty string. */
  readonly entryPath: string | undefined;
  readonly handler: string;
  /** Absolute `projectRoot`, when given. */
  readonly projectRoot: string | undefined;
  /** The lock file given or found (see ./lock-file.ts). */
  readonly lockFile: LockFileSearch;
  /**
   * The directory NodejsFunction bundles from (its `projectRoot`): the nearest directory holding
   * both `projectRoot` and the lock file (in a monorepo, the repository root). NodejsFunction
   * requires the entry and the lock file under it. Undefined when neither is known.
   */
  readonly bundlingRoot: string | undefined;
}

/** The nearest directory that contains both `a` and `b` (absolute paths). */
export function commonDirectory(a: string, b: string): string {
  let dir = a;
  for (;;) {
    const rel = path.relative(dir, b);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return dir;
    dir = parent;
  }
}

/** The default function timeout for a job time limit: max(30 s, 3 × limit), at most 15 minutes. */
export function defaultFunctionTimeout(jobTimeoutSeconds: number): Duration {
  return Duration.seconds(
    Math.min(
      LIMITS.maxFunctionTimeoutSeconds,
      Math.max(
        JOB_QUEUE_DEFAULTS.minFunctionTimeoutSeconds,
        Math.ceil(jobTimeoutSeconds * JOB_QUEUE_DEFAULTS.functionTimeoutJobMultiple),
      ),
    ),
  );
}

/**
 * Applies the defaults of {@link JobQueueProps} (see `JOB_QUEUE_DEFAULTS`). Never throws: a
 * malformed prop leaves the values derived from it undefined, for the rules to report.
 * @param props as given, possibly by JavaScript callers that left required props out.
 */
export function resolveSettings(props: JobQueueProps): JobQueueSettings {
  const needs = jobNeeds(props.jobs);
  const maxAttempts = isValidMaxAttempts(props.maxAttempts) ? props.maxAttempts : needs.maxAttempts?.value;
  const jobTimeoutSeconds = isValidJobTimeout(props.jobTimeoutSeconds)
    ? props.jobTimeoutSeconds
    : needs.jobTimeoutSeconds?.value;
  const maxReceiveCount =
    props.maxReceiveCount ??
    (maxAttempts === undefined ? undefined : maxAttempts + JOB_QUEUE_DEFAULTS.maxReceiveCountMargin);
  const functionTimeout =
    props.functionTimeout ??
    (jobTimeoutSeconds === undefined ? undefined : defaultFunctionTimeout(jobTimeoutSeconds));
  let visibilityTimeout = props.visibilityTimeout;
  if (visibilityTimeout === undefined && functionTimeout !== undefined) {
    visibilityTimeout =
      functionTimeout.isUnresolved() || props.maxBatchingWindow?.isUnresolved()
        ? functionTimeout // unresolved tokens: let CloudFormation/Lambda judge; checked at deploy
        : Duration.seconds(
            Math.ceil(
              JOB_QUEUE_DEFAULTS.visibilityTimeoutMultiple * functionTimeout.toSeconds({ integral: false }) +
                (secondsOf(props.maxBatchingWindow) ?? 0),
            ),
          );
  }
  const projectRoot = typeof props.projectRoot === 'string' ? path.resolve(props.projectRoot) : undefined;
  const entryPath =
    typeof props.entry === 'string' && props.entry.length > 0
      ? path.resolve(projectRoot ?? process.cwd(), props.entry)
      : undefined;
  const lockFile = findLockFile({
    given: props.depsLockFilePath,
    startDir: projectRoot ?? (entryPath === undefined ? process.cwd() : path.dirname(entryPath)),
  });
  const lockDir = lockFile.kind === 'found' ? path.dirname(lockFile.path) : undefined;
  const bundlingRoot =
    projectRoot !== undefined && lockDir !== undefined
      ? commonDirectory(projectRoot, lockDir)
      : (projectRoot ?? lockDir);
  return {
    fifo: props.fifo ?? false,
    maxAttempts,
    jobTimeoutSeconds,
    maxReceiveCount,
    functionTimeout,
    batchSize: props.batchSize ?? JOB_QUEUE_DEFAULTS.batchSize,
    visibilityTimeout,
    maxMessageSizeBytes: props.maxMessageSizeBytes ?? JOB_QUEUE_DEFAULTS.maxMessageSizeBytes,
    entryPath,
    handler: props.handler ?? JOB_QUEUE_DEFAULTS.handler,
    projectRoot,
    lockFile,
    bundlingRoot,
  };
}
