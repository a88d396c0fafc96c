/**
 * What NodejsFunction needs to bundle: an existing `projectRoot` and one dependency lock file
 * (found walking up from `projectRoot`, or from the entry's directory, so a monorepo with the
 * lock file at its root works). NodejsFunction's own errors would stop at the first of these.
 * Source: https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda_nodejs-readme.html (lock files, projectRoot)
 */
import * as fs from 'node:fs';
import { LOCK_FILE_NAMES } from '../lock-file.ts';
import { describeValue } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export const bundlingRule: JobQueueRule = ({ props, settings }) => {
  const findings: JobQueueFinding[] = [];
  const root: unknown = props.projectRoot;
  if (root !== undefined && typeof root !== 'string') {
    findings.push(error(`projectRoot: must be a directory path, got ${describeValue(root)}`));
  } else if (settings.projectRoot !== undefined && !isDirectory(settings.projectRoot)) {
    findings.push(error(`projectRoot: ${settings.projectRoot} is not a directory`));
    return findings; // the lock file search started there means nothing
  }
  const lock = settings.lockFile;
  switch (lock.kind) {
    case 'found':
      break;
    case 'missing':
      findings.push(error(`depsLockFilePath: ${lock.path} is not a file`));
      break;
    case 'none':
      findings.push(
        error(
          `depsLockFilePath: no lock file (${LOCK_FILE_NAMES.join(', ')}) in ${lock.startDir} or any directory above it: install the dependencies (npm install writes package-lock.json) or set depsLockFilePath`,
        ),
      );
      break;
    case 'several':
      findings.push(
        error(
          `depsLockFilePath: several lock files in one directory (${lock.paths.join(', ')}): set depsLockFilePath to the one of your package manager`,
        ),
      );
      break;
  }
  return findings;
};
