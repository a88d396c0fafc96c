/**
 * `JOBS_HANDLER_VERSION` defaults to the hash of the worker's code asset. The same app
 * synthesized into two cloud-assembly directories (at different depths, as `cdk.out` of a CI
 * checkout and a developer's temporary directory are) must give the same version: it lands in
 * DLQ evidence, and a version that changes without the code changing sends operators looking
 * for a deploy that never happened (and redeploys unchanged code).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relativeSourceMapCommand } from '../../lib/constructs/job-queue/source-map.ts';
import { JobQueue } from '../../lib/constructs/job-queue.ts';
import { findWorkerAssets } from '../../lib/stacks/app.ts';
import { logicalId, removeDir, tempOutdir } from './helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

type TemplateJson = { Resources: Record<string, { Properties: Record<string, unknown> }> };

interface Synthesized {
  readonly handlerVersion: unknown;
  readonly s3Key: unknown;
  readonly sourceMap: { sources: string[] };
}

function synthInto(outdir: string): Synthesized {
  const app = new App({ outdir });
  const stack = new Stack(app, 'HandlerVersion');
  const queue = new JobQueue(stack, 'Jobs', {
    name: 'jobs',
    entry: 'test/fixtures/worker-handler.ts',
    projectRoot: PROJECT_ROOT,
    maxAttempts: 3,
    jobTimeoutSeconds: 5,
    idempotencyTable: false,
    alarmTopic: false,
  });
  const assembly = app.synth();
  const artifact = assembly.getStackArtifact(stack.artifactId);
  const fn = (artifact.template as TemplateJson).Resources[logicalId(queue.worker)]!.Properties;
  const [worker] = findWorkerAssets(assembly, artifact);
  return {
    handlerVersion: (fn.Environment as { Variables: Record<string, unknown> }).Variables.JOBS_HANDLER_VERSION,
    s3Key: (fn.Code as { S3Key: unknown }).S3Key,
    sourceMap: JSON.parse(fs.readFileSync(`${worker!.entryFile}.map`, 'utf8')) as { sources: string[] },
  };
}

describe('JOBS_HANDLER_VERSION does not depend on the cloud assembly directory', () => {
  let shallow: string;
  let deepRoot: string;
  let first: Synthesized;
  let second: Synthesized;

  beforeAll(() => {
    shallow = tempOutdir('version-a');
    deepRoot = tempOutdir('version-b');
    first = synthInto(shallow);
    second = synthInto(path.join(deepRoot, 'nested', 'twice', 'cdk.out'));
  });
  afterAll(() => {
    removeDir(shallow);
    removeDir(deepRoot);
  });

  it('gives the same code asset hash, hence the same handler version, in both directories', () => {
    expect(typeof first.handlerVersion).toBe('string');
    expect(first.s3Key).toBe(`${first.handlerVersion}.zip`);
    expect(second.handlerVersion).toBe(first.handlerVersion);
    expect(second.s3Key).toBe(first.s3Key);
  });

  it('keeps the source map, its sources relative to the project root (not to the assembly directory)', () => {
    expect(first.sourceMap.sources).toEqual(['test/fixtures/worker-handler.ts']);
    expect(second.sourceMap).toEqual(first.sourceMap);
  });
});

describe('the afterBundling command that rewrites the source map', () => {
  it('in Docker bundling uses the image node and the container paths', () => {
    const command = relativeSourceMapCommand('/asset-input', '/asset-output');
    expect(command.startsWith("'node' '-e' 'const fs = require(")).toBe(true);
    expect(command.endsWith("' '/asset-output/index.mjs.map' '/asset-input'")).toBe(true);
  });

  it('on Windows quotes with double quotes and wraps the line once more for cmd /c', () => {
    const command = relativeSourceMapCommand('C:\\app', 'C:\\app\\cdk.out\\b', 'win32');
    expect(command.startsWith(`""${process.execPath}" "-e" "const fs = require('node:fs')`)).toBe(true);
    expect(command.endsWith('" "C:\\app\\cdk.out\\b\\index.mjs.map" "C:\\app""')).toBe(true);
  });
});
