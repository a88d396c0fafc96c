/**
 * Vitest setup file: every CDK `App` built without an `outdir` in a test file writes into one
 * temporary directory, removed after the file, instead of leaving a new `/tmp/cdk.out*`
 * directory per App behind.
 *
 * Not through `CDK_OUTDIR`: with it set, every `new App()` also registers a synth on the
 * process's `beforeExit` (what the CDK CLI relies on), so a test file with a dozen Apps warned
 * `MaxListenersExceededWarning` and synthesized each App again at exit into the directory
 * already removed (`ENOENT`). Tests synthesize explicitly (`app.synth()`, `Template.fromStack`),
 * so their Apps get the directory and no auto-synth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, vi } from 'vitest';

const outdir = mkdtempSync(join(tmpdir(), 'sqs-jobs-test-cdk-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

vi.mock('aws-cdk-lib', async (importOriginal) => {
  const cdk = await importOriginal<typeof import('aws-cdk-lib')>();
  class TestApp extends cdk.App {
    constructor(props: import('aws-cdk-lib').AppProps = {}) {
      super({ ...props, outdir: props.outdir ?? outdir, autoSynth: props.autoSynth ?? false });
    }
  }
  return { ...cdk, App: TestApp };
});
