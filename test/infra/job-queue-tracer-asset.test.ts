/**
 * The X-Ray tracer of a `JobQueue` worker is in a file of its own in the code asset
 * (`xray-tracer.mjs`), not in the main bundle Lambda reads and parses at every cold start:
 * one synth of a worker built on the runtime (test/fixtures/chain-worker.ts, `createWorker`),
 * then the asset's files read and the tracer file imported. That the worker loads it on a sampled
 * invocation is test/integration/local-recursion.test.ts (subsegments per job from the asset).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { App, AssetStaging, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TRACER_PACKAGE,
  tracerBundleCommand,
  tracerEntryPath,
  XRAY_TRACER_FILE,
} from '../../lib/constructs/job-queue/tracer-bundle.ts';
import { JobQueue } from '../../lib/constructs/job-queue.ts';
import { XRAY_TRACER_FILE as RUNTIME_TRACER_FILE } from '../../lib/runtime/tracing.ts';
import { logicalId, removeDir, tempOutdir } from './helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Code of the Powertools Tracer and the X-Ray SDK: names that survive minification (property
 * names, strings), each in one of them only.
 */
const TRACER_MARKERS = [
  'captureLambdaHandler', // Powertools Tracer's method
  'AWS_XRAY_DAEMON_ADDRESS', // the X-Ray SDK's daemon setting
  'AWS_XRAY_CONTEXT_MISSING', // the X-Ray SDK's context-missing strategy
];

let outdir: string;
let assetDir: string;

beforeAll(() => {
  outdir = tempOutdir('tracer-asset');
  const app = new App({ outdir });
  const stack = new Stack(app, 'TracerAsset');
  const q = new JobQueue(stack, 'Chain', {
    name: 'chain',
    entry: 'test/fixtures/chain-worker.ts',
    projectRoot: PROJECT_ROOT,
    maxAttempts: 1,
    jobTimeoutSeconds: 5,
    idempotencyTable: false,
    alarmTopic: false,
  });
  const template = app.synth().getStackByName(stack.stackName).template as {
    Resources: Record<string, { Properties: { Code?: { S3Key?: string } } }>;
  };
  // The code's key is `<asset hash>.zip`; the assembly holds the asset as `asset.<hash>/`.
  const key = String(template.Resources[logicalId(q.worker)]?.Properties.Code?.S3Key);
  assetDir = path.join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
}, 120_000);

afterAll(() => removeDir(outdir));

describe('the X-Ray tracer in a JobQueue worker asset', () => {
  it('is not in the main bundle, which leaves the tracer package to the import on a sampled invocation', () => {
    const main = fs.readFileSync(path.join(assetDir, 'index.mjs'), 'utf8');
    for (const marker of TRACER_MARKERS) expect(main.includes(marker), marker).toBe(false);
    expect(main.includes(RUNTIME_TRACER_FILE)).toBe(true);
    // No static import of it: the main bundle loads without the package (Lambda has none).
    expect(new RegExp(`(import|from)\\s*["']${TRACER_PACKAGE}["']`).test(main)).toBe(false);
  });

  it('is in xray-tracer.mjs beside it, which loads on its own and exports the Powertools Tracer', async () => {
    const file = path.join(assetDir, XRAY_TRACER_FILE);
    const code = fs.readFileSync(file, 'utf8');
    for (const marker of TRACER_MARKERS) expect(code.includes(marker), marker).toBe(true);
    const { Tracer } = (await import(pathToFileURL(file).href)) as {
      Tracer: new (options: object) => object;
    };
    expect(new Tracer({ captureHTTPsRequests: false })).toHaveProperty('captureLambdaHandler');
  });

  it('the construct and the runtime agree on the file name', () => {
    expect(XRAY_TRACER_FILE).toBe(RUNTIME_TRACER_FILE);
  });
});

describe('the tracer bundling command', () => {
  it('in Docker, bundles the tracer module from the mounted project with the image esbuild', () => {
    const command = tracerBundleCommand({
      inputDir: AssetStaging.BUNDLING_INPUT_DIR,
      outputDir: AssetStaging.BUNDLING_OUTPUT_DIR,
      bundlingRoot: PROJECT_ROOT,
      target: 'node24',
    });
    expect(command.startsWith("'esbuild' '--bundle' '/asset-input/lib/runtime/xray-tracer.ts'")).toBe(true);
    expect(command).toContain("'--outfile=/asset-output/xray-tracer.mjs'");
  });

  it('in Docker, fails bundling saying what to do when the tracer module is outside the mounted project', () => {
    const command = tracerBundleCommand({
      inputDir: AssetStaging.BUNDLING_INPUT_DIR,
      outputDir: AssetStaging.BUNDLING_OUTPUT_DIR,
      bundlingRoot: path.join(PROJECT_ROOT, 'examples'),
      target: 'node24',
      entry: tracerEntryPath(),
    });
    const run = spawnSync('bash', ['-c', command], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/outside .*examples.*install sqs-jobs inside the project/);
  });
});
