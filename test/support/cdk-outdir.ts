/**
 * Vitest setup file: every CDK `App` built without an `outdir` in a test file writes into one
 * temporary directory (CDK reads `CDK_OUTDIR`), removed after the file, instead of leaving a
 * new `/tmp/cdk.out*` directory per App behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const outdir = mkdtempSync(join(tmpdir(), 'sqs-jobs-test-cdk-'));
process.env.CDK_OUTDIR = outdir;
afterAll(() => rmSync(outdir, { recursive: true, force: true }));
