/**
 * The checks cdk-app.test.ts relies on can fail: in the installed examples/cdk-app, the app's
 * cdk-nag and template validator refuse a stack that breaks their rules, and a bundle of
 * `sqs-jobs/cdk` made like a worker bundle shows the CDK markers the worker check looks for.
 * (Runs beside cdk-app.test.ts; it writes only into its own files and output directories.)
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import {
  CDK_CODE_MARKERS,
  CDK_SOURCE,
  cdkMarkersIn,
  kib,
  report,
  run,
  seconds,
  tail,
  WORKER_BUNDLING,
} from './support.ts';

const { cdkApp, root } = inject('consumers');

interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly violations?: readonly { readonly ruleName: string; readonly severity?: string }[];
  }[];
}

describe('negative controls in the installed cdk-app', () => {
  it("the app's cdk-nag checks and template validator refuse a stack that breaks their rules", async () => {
    // The example's own app (lib/app.ts buildApp, as bin/app.ts uses it) plus a stack with an
    // unencrypted queue without TLS (cdk-nag SQS2, SQS3, SQS4) and an invalid property (validator).
    mkdirSync(join(cdkApp, 'checks'), { recursive: true });
    writeFileSync(
      join(cdkApp, 'checks', 'violation.ts'),
      `import { CfnResource, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { buildApp } from '../lib/app.ts';

const { app } = buildApp();
const extra = new Stack(app, 'Violations');
new sqs.Queue(extra, 'Plain', { encryption: sqs.QueueEncryption.UNENCRYPTED });
new CfnResource(extra, 'Broken', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } });
app.synth();
`,
    );
    const outdir = join(root, 'violation.out');
    const result = await run(
      'npx',
      ['cdk', 'synth', '--quiet', '--no-notices', '--app', 'npx tsx checks/violation.ts', '--output', outdir],
      { cwd: cdkApp },
    );
    report(`synth of the violating app (expected to fail): ${seconds(result.ms)}, exit ${result.code}`);
    expect(result.code, `synth should have failed\n${tail(result.stdout)}\n${tail(result.stderr)}`).not.toBe(
      0,
    );
    const validation = JSON.parse(
      readFileSync(join(outdir, 'validation-report.json'), 'utf8'),
    ) as ValidationReport;
    const findings = validation.pluginReports.flatMap((r) =>
      (r.violations ?? []).map((v) => `${r.pluginName} ${v.ruleName} ${v.severity}`),
    );
    expect(findings).toEqual(
      expect.arrayContaining([
        'AwsSolutions AwsSolutions-SQS2 error',
        'AwsSolutions AwsSolutions-SQS4 error',
      ]),
    );
    expect(findings.some((f) => f.startsWith('CloudFormation Validate ') && f.endsWith(' error'))).toBe(true);
  });

  it('a bundle of sqs-jobs/cdk shows every CDK marker, and minifying CDK code keeps them', async () => {
    // esbuild as the consumer has it, with JobQueue's worker options except minification (it
    // triples the time of this 40 MB bundle); the markers are string contents, which esbuild's
    // minifier never rewrites: checked below on the CDK modules themselves, minified.
    const esbuild = createRequire(join(cdkApp, 'package.json'))('esbuild') as typeof import('esbuild');
    try {
      const started = performance.now();
      const out = await esbuild.build({
        ...WORKER_BUNDLING,
        minify: false,
        sourcemap: false,
        metafile: true,
        mainFields: [...WORKER_BUNDLING.mainFields],
        stdin: { contents: "export * from 'sqs-jobs/cdk';", resolveDir: cdkApp, sourcefile: 'cdk-entry.mjs' },
        absWorkingDir: cdkApp,
        outdir: join(root, 'cdk-bundle'),
        write: false,
      });
      const ms = performance.now() - started;
      const code = out.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
      const cdkInputs = Object.keys(out.metafile.inputs).filter((s) => CDK_SOURCE.test(s));
      report(
        `bundle of sqs-jobs/cdk: ${seconds(ms)}, ${kib(code.length)}, ${cdkInputs.length} CDK input files`,
      );
      expect(cdkMarkersIn(code)).toEqual(CDK_CODE_MARKERS.map((m) => m.name));
      expect(cdkInputs.some((s) => s.includes('node_modules/aws-cdk-lib/'))).toBe(true);
      expect(cdkInputs.some((s) => s.includes('node_modules/constructs/'))).toBe(true);

      // Each marker's source module, minified as a worker bundle is: the marker is still there.
      const modules = [
        join(cdkApp, 'node_modules', 'aws-cdk-lib', 'aws-sqs', 'lib', 'queue.js'),
        join(cdkApp, 'node_modules', 'constructs', 'lib', 'construct.js'),
      ];
      const minified = await Promise.all(
        modules.map(async (file) => {
          const { code: min } = await esbuild.transform(readFileSync(file, 'utf8'), {
            minify: true,
            keepNames: true,
            format: 'cjs',
            target: 'node24',
            loader: 'js',
          });
          return min;
        }),
      );
      expect(cdkMarkersIn(minified.join('\n'))).toEqual(CDK_CODE_MARKERS.map((m) => m.name));
    } finally {
      await esbuild.stop();
    }
  });
});
