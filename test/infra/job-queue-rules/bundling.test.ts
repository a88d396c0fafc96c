/**
 * Rule group `bundling`: projectRoot and the dependency lock file, found walking up so a
 * monorepo (lock file at the repository root, CDK app in a package below) works.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findLockFile } from '../../../lib/constructs/job-queue/lock-file.ts';
import { bundlingRule } from '../../../lib/constructs/job-queue/rules/bundling.ts';
import { ruleInput } from '../../../lib/constructs/job-queue/rules/index.ts';
import { errors, PROJECT_ROOT, props } from './helpers.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sqs-jobs-lock-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Creates the files (with parent directories) under a new directory of `tmp`. */
function layout(name: string, files: Record<string, string>): string {
  const root = path.join(tmp, name);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
  return root;
}

describe('bundling rule', () => {
  it("uses this project's own package-lock.json", () => {
    expect(errors(bundlingRule)).toEqual([]);
    expect(ruleInput(props()).settings.lockFile).toEqual({
      kind: 'found',
      path: path.join(PROJECT_ROOT, 'package-lock.json'),
    });
  });

  it('monorepo: finds the lock file at the repository root above projectRoot', () => {
    const repo = layout('monorepo', {
      'package-lock.json': '{}',
      'packages/infra/package.json': '{}',
      'packages/infra/src/worker.ts': 'export const handler = async () => ({ batchItemFailures: [] });',
    });
    const projectRoot = path.join(repo, 'packages/infra');
    const overrides = { projectRoot, entry: 'src/worker.ts' };
    expect(errors(bundlingRule, overrides)).toEqual([]);
    expect(ruleInput(props(overrides)).settings.lockFile).toEqual({
      kind: 'found',
      path: path.join(repo, 'package-lock.json'),
    });
    // Without projectRoot the walk starts at the entry's directory.
    const absolute = { projectRoot: undefined, entry: path.join(projectRoot, 'src/worker.ts') };
    expect(ruleInput(props(absolute)).settings.lockFile).toEqual({
      kind: 'found',
      path: path.join(repo, 'package-lock.json'),
    });
  });

  it('the nearest lock file wins: a package with its own lock file uses it', () => {
    const repo = layout('nested', { 'yarn.lock': '', 'app/pnpm-lock.yaml': '' });
    expect(findLockFile({ startDir: path.join(repo, 'app') })).toEqual({
      kind: 'found',
      path: path.join(repo, 'app/pnpm-lock.yaml'),
    });
  });

  it('refuses several lock files in one directory, a given file that does not exist, and no lock file at all', () => {
    const two = layout('two', { 'package-lock.json': '{}', 'yarn.lock': '' });
    expect(errors(bundlingRule, { projectRoot: two })).toEqual([
      `depsLockFilePath: several lock files in one directory (${path.join(two, 'yarn.lock')}, ${path.join(two, 'package-lock.json')}): set depsLockFilePath to the one of your package manager`,
    ]);
    expect(errors(bundlingRule, { projectRoot: two, depsLockFilePath: path.join(two, 'yarn.lock') })).toEqual(
      [],
    );
    expect(errors(bundlingRule, { depsLockFilePath: path.join(two, 'pnpm-lock.yaml') })).toEqual([
      `depsLockFilePath: ${path.join(two, 'pnpm-lock.yaml')} is not a file`,
    ]);
    // Nothing above a directory at the file-system root that is not in a project: use a fake walk.
    const none = findLockFile({ startDir: path.parse(tmp).root });
    if (none.kind === 'none') expect(none.startDir).toBe(path.parse(tmp).root);
  });

  it('reports no lock file in one line naming where the walk started', () => {
    const lonely = layout('lonely', { 'src/worker.ts': 'export const handler = 1;' });
    const found = findLockFile({ startDir: lonely });
    // A lock file above the temporary directory (unlikely) would be found instead: skip then.
    if (found.kind !== 'none') return;
    expect(errors(bundlingRule, { projectRoot: lonely, entry: 'src/worker.ts' })).toEqual([
      `depsLockFilePath: no lock file (pnpm-lock.yaml, yarn.lock, bun.lock, bun.lockb, package-lock.json) in ${lonely} or any directory above it: install the dependencies (npm install writes package-lock.json) or set depsLockFilePath`,
    ]);
  });

  it('refuses a projectRoot that is not a directory', () => {
    expect(errors(bundlingRule, { projectRoot: path.join(PROJECT_ROOT, 'package.json') })).toEqual([
      `projectRoot: ${path.join(PROJECT_ROOT, 'package.json')} is not a directory`,
    ]);
  });
});
