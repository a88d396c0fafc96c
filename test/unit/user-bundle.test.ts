/**
 * A worker its owner bundles with esbuild (one file, nothing marked external) carries no X-Ray
 * tracer (issue 21: it was inlined, 118 of a minimal worker's 260 KB), and tracing stays
 * available: a sampled invocation finds the tracer beside the bundle (`xray-tracer.mjs`, as
 * `JobQueue` writes it) or as a package Node resolves; with neither, the worker says once that
 * tracing is off and its jobs run. test/fixtures/chain-worker.ts is the worker; each case runs
 * its bundle in a fresh Node with a sampled trace header and reads what it wrote. With the AWS
 * SDK left external, the SQS client is not imported at a cold start either.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ESM_REQUIRE_BANNER, tracerEntryPath } from '../../lib/constructs/job-queue/tracer-bundle.ts';
import { XRAY_TRACER_FILE } from '../../lib/runtime/tracing.ts';
import { jobBody, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Names of the Powertools Tracer and the X-Ray SDK that survive minification. */
const TRACER_MARKERS = ['captureLambdaHandler', 'AWS_XRAY_DAEMON_ADDRESS', 'AWS_XRAY_CONTEXT_MISSING'];
const LOAD_FAILED = 'X-Ray tracing is off: the tracer could not be loaded';

/** The fixture bundled as its owner would: minified ESM, one file, nothing external (unless `external`). */
async function bundleWorker(outfile: string, external: string[] = []): Promise<string> {
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['test/fixtures/chain-worker.ts'],
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile,
    external,
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'silent',
  });
  return readFileSync(outfile, 'utf8');
}

/** Runs one sampled batch of one record through the bundle in a fresh Node; its stdout and stderr. */
function invokeSampled(bundle: string): string {
  const event = sqsEvent([
    sqsRecord({
      queue: 'chain',
      body: jobBody('chain.step', { chain: 'c-1', hop: 1, last: 1 }),
    }),
  ]);
  const script = `
    const { handler } = await import(process.env.BUNDLE);
    const context = { functionName: 'chain', functionVersion: '$LATEST', memoryLimitInMB: '512',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:chain', awsRequestId: 'r-1',
      getRemainingTimeInMillis: () => 60000 };
    const response = await handler(JSON.parse(process.env.EVENT), context);
    if (response.batchItemFailures.length > 0) throw new Error('the record failed');
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.dirname(bundle),
    env: {
      PATH: process.env.PATH,
      BUNDLE: bundle,
      EVENT: JSON.stringify(event),
      AWS_REGION: 'us-east-1',
      JOBS_QUEUE_NAME: 'chain',
      JOBS_QUEUE_URL: queueUrl('chain'),
      JOBS_DLQ_URL: queueUrl('chain-dlq'),
      _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  return `${result.stdout}${result.stderr}`;
}

let outside: string;
let inside: string;
beforeAll(() => {
  // Outside the project: no node_modules to find the tracer in. Inside: Node resolves the package.
  outside = mkdtempSync(path.join(tmpdir(), 'sqs-jobs-user-bundle-'));
  inside = path.join(ROOT, 'node_modules', '.cache', `sqs-jobs-user-bundle-${process.pid}`);
  mkdirSync(inside, { recursive: true });
});
afterAll(() => {
  rmSync(outside, { recursive: true, force: true });
  rmSync(inside, { recursive: true, force: true });
});

describe('a worker bundled by its owner with esbuild, nothing marked external', () => {
  it('holds no tracer, and without one at hand a sampled invocation says once that tracing is off and runs its job', async () => {
    const file = path.join(outside, 'alone', 'index.mjs');
    const code = await bundleWorker(file);
    for (const marker of TRACER_MARKERS) expect(code.includes(marker), marker).toBe(false);
    const output = invokeSampled(file);
    expect(output.split(LOAD_FAILED).length - 1).toBe(1);
    expect(output).toContain('"message":"chain step"');
  }, 60_000);

  it(`finds the tracer in ${XRAY_TRACER_FILE} beside the bundle`, async () => {
    const dir = path.join(outside, 'with-file');
    const file = path.join(dir, 'index.mjs');
    await bundleWorker(file);
    await build({
      entryPoints: [tracerEntryPath()],
      bundle: true,
      minify: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      mainFields: ['module', 'main'],
      outfile: path.join(dir, XRAY_TRACER_FILE),
      banner: { js: ESM_REQUIRE_BANNER },
      logLevel: 'silent',
    });
    const output = invokeSampled(file);
    expect(output).not.toContain(LOAD_FAILED);
    expect(output).toContain('"message":"chain step"');
  }, 60_000);

  it('with the AWS SDK external (as the Lambda runtime provides it), imports the SQS client at its first use, not at a cold start', async () => {
    const code = await bundleWorker(path.join(outside, 'sdk-external', 'index.mjs'), ['@aws-sdk/*']);
    // A static import is hoisted to the top of the bundle and loaded with it; only import() waits.
    expect(code).not.toMatch(/(import|from)\s*"@aws-sdk\/client-sqs"/);
    expect(code).toMatch(/import\("@aws-sdk\/client-sqs"\)/);
  }, 60_000);

  it('finds the tracer as a package where Node resolves one (node_modules)', async () => {
    const file = path.join(inside, 'index.mjs');
    await bundleWorker(file);
    const output = invokeSampled(file);
    expect(output).not.toContain(LOAD_FAILED);
    expect(output).toContain('"message":"chain step"');
  }, 60_000);
});
