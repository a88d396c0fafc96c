/**
 * `sqs-jobs local` in a directory that is not a CDK project, or one without the CDK CLI: our own
 * message saying what is missing and what to do, before npm's (lib/local/synth.ts, `cliSynthProblem`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliSynthProblem } from '../../lib/local/synth.ts';
import { runCli } from '../factories/cli.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sqs-jobs-preflight-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe('sqs-jobs local outside a CDK project', () => {
  it('without cdk.json: says so, and where to run it or how to start a project', async () => {
    const dir = project({ 'package.json': '{"name":"app"}' });
    const run = await runCli(['local', '--project-root', dir], 'http://127.0.0.1:9');
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      `no cdk.json in ${dir}: sqs-jobs local runs the CDK app that cdk.json's "app" names. Run it in your CDK project's root, or pass --project-root <the directory with cdk.json>; to start one: npx cdk init app --language typescript (docs/own-app.md)`,
    );
    expect(run.stderr).not.toMatch(/npm (ERR|error)/);
  });

  it('without the aws-cdk package (and no cdk on PATH): names the package and the install command', async () => {
    const dir = project({ 'package.json': '{"name":"app"}', 'cdk.json': '{"app":"npx tsx bin/app.ts"}' });
    expect(cliSynthProblem(dir, { PATH: '' })).toBe(
      `the AWS CDK CLI is not installed for ${dir}: no package aws-cdk in its node_modules (nor a cdk command on PATH). Install it: npm install --save-dev aws-cdk`,
    );
    // A cdk on PATH (a global install) will do; so will the project's own aws-cdk.
    const bin = project({ cdk: '#!/bin/sh\n' });
    expect(cliSynthProblem(dir, { PATH: bin })).toBeUndefined();
    const installed = project({
      'cdk.json': '{"app":"npx tsx bin/app.ts"}',
      'node_modules/aws-cdk/package.json': '{"name":"aws-cdk","version":"2.1000.0"}',
    });
    expect(cliSynthProblem(installed, { PATH: '' })).toBeUndefined();
  });
});
