/**
 * Finds the dependency lock file `NodejsFunction` needs (`depsLockFilePath`). Walks up from the
 * project (or the entry's directory), so a monorepo whose lock file sits at the repository root,
 * above the CDK app, works without configuration.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Lock file names NodejsFunction understands, in its order of preference. */
export const LOCK_FILE_NAMES = [
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lock',
  'bun.lockb',
  'package-lock.json',
] as const;

/** Outcome of {@link findLockFile}. */
export type LockFileSearch =
  | { readonly kind: 'found'; readonly path: string }
  /** `depsLockFilePath` was given but is not a file. */
  | { readonly kind: 'missing'; readonly path: string }
  /** Nothing found walking up from `startDir`. */
  | { readonly kind: 'none'; readonly startDir: string }
  /** The nearest directory with a lock file has several: which package manager is meant is unclear. */
  | { readonly kind: 'several'; readonly paths: readonly string[] };

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * The given lock file (resolved against the working directory), else the lock files of the
 * nearest directory at or above `startDir` that has any.
 * @param options.given `depsLockFilePath` as given, if any.
 * @param options.startDir where the walk starts (absolute).
 */
export function findLockFile(options: {
  readonly given?: unknown;
  readonly startDir: string;
}): LockFileSearch {
  if (typeof options.given === 'string' && options.given.length > 0) {
    const p = path.resolve(options.given);
    return isFile(p) ? { kind: 'found', path: p } : { kind: 'missing', path: p };
  }
  let dir = path.resolve(options.startDir);
  for (;;) {
    const here = LOCK_FILE_NAMES.map((name) => path.join(dir, name)).filter(isFile);
    if (here.length === 1) return { kind: 'found', path: here[0]! };
    if (here.length > 1) return { kind: 'several', paths: here };
    const parent = path.dirname(dir);
    if (parent === dir) return { kind: 'none', startDir: options.startDir };
    dir = parent;
  }
}
