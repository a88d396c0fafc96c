/**
 * applyJobsChecks / createJobsApp / jobsAppContext / runJobsApp: the checks a user's own CDK app
 * gets in one call. The apps here hold a plain SQS queue and, where needed, a broken raw
 * resource: nothing is bundled, each synth is small.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { hasTemplateValidator, validationsOf } from '../../lib/constructs/cdk-features.ts';
import { TEMPLATE_VALIDATOR_ERRORS_FLAG } from '../../lib/constructs/checks.ts';
import {
  applyJobsChecks,
  createJobsApp,
  JobsConfigError,
  jobsAppContext,
  runJobsApp,
} from '../../lib/constructs/index.ts';
import { removeDir, tempOutdir } from './helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Report {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly violations?: readonly {
      readonly ruleName: string;
      readonly severity?: string;
      readonly violatingConstructs?: readonly { readonly constructPath?: string }[];
    }[];
  }[];
}

/** `[plugin, rule, severity]` of every finding of the synth into `outdir`. */
function findings(outdir: string): string[][] {
  const report = JSON.parse(fs.readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as Report;
  return report.pluginReports.flatMap((r) =>
    (r.violations ?? []).map((v) => [r.pluginName, v.ruleName, String(v.severity)]),
  );
}

/** Construct paths with an AwsSolutions finding. */
function nagConstructs(outdir: string): string[] {
  const report = JSON.parse(fs.readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as Report;
  const files = report.pluginReports
    .filter((r) => r.pluginName === 'AwsSolutions')
    .flatMap((r) => r.violations ?? [])
    .flatMap((v) => v.violatingConstructs ?? [])
    .map((c) => String(c.constructPath));
  return [...new Set(files)].sort();
}

/** An unencrypted queue without a TLS policy (AwsSolutions-SQS2/SQS3/SQS4) and an invalid raw resource (F3012). */
function addViolations(stack: Stack, broken = true): void {
  new sqs.Queue(stack, 'Plain', { encryption: sqs.QueueEncryption.UNENCRYPTED });
  if (broken)
    new CfnResource(stack, 'Broken', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } });
}

const dirs: string[] = [];
function outdir(): string {
  const d = tempOutdir('checks');
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

describe('applyJobsChecks', () => {
  it('on an app whose stacks already exist: cdk-nag errors and template validator findings as errors', () => {
    const dir = outdir();
    const app = new App({ outdir: dir });
    addViolations(new Stack(app, 'Users'));
    applyJobsChecks(app); // after the stacks: the flag can no longer be set with setContext
    expect(app.node.tryGetContext(TEMPLATE_VALIDATOR_ERRORS_FLAG)).toBe(true);
    expect(() => app.synth()).toThrow();
    expect(findings(dir)).toEqual(
      expect.arrayContaining([
        ['AwsSolutions', 'AwsSolutions-SQS4', 'error'],
        ['CloudFormation Validate', 'F3012', 'error'],
      ]),
    );
  });

  it('without it, the same app synthesizes: nag does not run and the validator only warns', () => {
    const dir = outdir();
    const app = new App({ outdir: dir });
    addViolations(new Stack(app, 'Users'));
    expect(() => app.synth()).not.toThrow();
    expect(findings(dir)).toEqual([['CloudFormation Validate', 'F3012', 'warning']]);
  });

  it('on a stack: nag checks that stack only; applying twice adds no second copy', () => {
    const dir = outdir();
    const app = new App({ outdir: dir });
    const checked = new Stack(app, 'Checked');
    addViolations(checked, false);
    addViolations(new Stack(app, 'Other'), false);
    applyJobsChecks(checked);
    applyJobsChecks(checked);
    expect(() => app.synth()).toThrow();
    expect(nagConstructs(dir)).toEqual(['Checked/Plain/Resource']);
    const sqs4 = findings(dir).filter(([, rule]) => rule === 'AwsSolutions-SQS4');
    expect(sqs4).toEqual([['AwsSolutions', 'AwsSolutions-SQS4', 'error']]);
  });

  it('options: nag off and validator findings left as warnings', () => {
    const dir = outdir();
    const app = new App({ outdir: dir });
    addViolations(new Stack(app, 'Users'));
    applyJobsChecks(app, { nag: false, templateFindingsAreErrors: false });
    expect(() => app.synth()).not.toThrow();
    expect(findings(dir)).toEqual([['CloudFormation Validate', 'F3012', 'warning']]);
  });

  it('refuses a scope that is not an App or a Stack in an App', () => {
    const lonely = new Stack(new Construct(undefined as never, ''), 'NoApp');
    expect(() => applyJobsChecks(lonely)).toThrow(JobsConfigError);
    expect(() => applyJobsChecks(lonely)).toThrow(/scope: must be a CDK App, or a Stack inside an App/);
    expect(() => applyJobsChecks(new Construct(new App(), 'Plain') as never)).toThrow(
      /scope: must be a CDK App/,
    );
  });
});

describe('createJobsApp and jobsAppContext', () => {
  it('createJobsApp: a new App with the checks on', () => {
    const dir = outdir();
    const app = createJobsApp({ outdir: dir });
    addViolations(new Stack(app, 'Users'));
    expect(() => app.synth()).toThrow();
    expect(findings(dir)).toEqual(
      expect.arrayContaining([
        ['AwsSolutions', 'AwsSolutions-SQS2', 'error'],
        ['CloudFormation Validate', 'F3012', 'error'],
      ]),
    );
  });

  it('jobsAppContext: the flag for new App({ postCliContext }) or cdk.json, a fresh object each call', () => {
    expect(jobsAppContext()).toEqual({ '@aws-cdk/core:validateAgainstDefaultRules': true });
    expect(jobsAppContext()).not.toBe(jobsAppContext());
    const app = new App({
      postCliContext: jobsAppContext(),
      context: { [TEMPLATE_VALIDATOR_ERRORS_FLAG]: false },
    });
    expect(app.node.tryGetContext(TEMPLATE_VALIDATOR_ERRORS_FLAG)).toBe(true);
  });
});

describe('runJobsApp', () => {
  function capture() {
    const out = { stderr: '', codes: [] as number[] };
    return {
      out,
      options: {
        stderr: (t: string) => {
          out.stderr += t;
        },
        exit: (code: number) => {
          out.codes.push(code);
        },
        env: {},
      },
    };
  }

  it('prints a JobsConfigError as its list of problems, without a stack, and exits 1', async () => {
    const { out, options } = capture();
    await runJobsApp(() => {
      throw new JobsConfigError("JobQueue 'payments'", 'App/Payments', [
        'entry: x does not exist',
        'maxAttempts: 0 must be a whole number of at least 1',
      ]);
    }, options);
    expect(out.stderr).toBe(
      "JobQueue 'payments' at App/Payments has 2 unsafe settings:\n  - entry: x does not exist\n  - maxAttempts: 0 must be a whole number of at least 1\n",
    );
    expect(out.codes).toEqual([1]);
  });

  it('adds the stack trace with SQS_JOBS_DEBUG=1, and lets other errors through unchanged', async () => {
    const { out, options } = capture();
    await runJobsApp(
      async () => {
        throw new JobsConfigError('JobsStack', 'App', ['queues: bad']);
      },
      { ...options, env: { SQS_JOBS_DEBUG: '1' } },
    );
    expect(out.stderr).toMatch(/queues: bad\n.*JobsConfigError: JobsStack at App/s);
    const boom = new Error('boom');
    await expect(runJobsApp(() => Promise.reject(boom), options)).rejects.toBe(boom);
    expect(out.codes).toEqual([1]);
  });

  it('in a CDK app run by the CLI: only the problems on stderr, exit 1, no synth-on-exit of the half-built stack', () => {
    const dir = outdir();
    const script = path.join(dir, 'app.mts');
    fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    const constructs = path.join(PROJECT_ROOT, 'lib/constructs/index.ts');
    fs.writeFileSync(
      script,
      `import { App, Stack } from 'aws-cdk-lib';
import { JobQueue, runJobsApp } from ${JSON.stringify(constructs)};
await runJobsApp(() => {
  const app = new App();
  const stack = new Stack(app, 'Users');
  new JobQueue(stack, 'Payments', { name: 'payments', entry: 'workers/payments.ts', idempotencyTable: false } as never);
  app.synth();
});
`,
    );
    // CDK_OUTDIR is what the CDK CLI sets: the App then synthesizes itself when the process is about to exit.
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], {
      cwd: dir,
      env: { ...process.env, CDK_OUTDIR: path.join(dir, 'cdk.out'), SQS_JOBS_DEBUG: '' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      "JobQueue 'payments' at Users/Payments has 4 unsafe settings:",
      "  - maxAttempts: required unless jobs are given: the highest retry.maxAttempts among the worker's jobs",
      "  - jobTimeoutSeconds: required unless jobs are given: the highest timeoutSeconds among the worker's jobs, in seconds",
      `  - entry: ${path.join(dir, 'workers/payments.ts')} does not exist (resolved against the working directory)`,
      `  - depsLockFilePath: no lock file (pnpm-lock.yaml, yarn.lock, bun.lock, bun.lockb, package-lock.json) in ${path.join(dir, 'workers')} or any directory above it: install the dependencies (npm install writes package-lock.json) or set depsLockFilePath`,
    ]);
  });

  it('returns normally when main succeeds', async () => {
    const { out, options } = capture();
    let ran = false;
    await runJobsApp(() => {
      ran = true;
    }, options);
    expect([ran, out.stderr, out.codes]).toEqual([true, '', []]);
  });
});

describe('aws-cdk-lib features newer than the oldest supported aws-cdk-lib (lib/constructs/cdk-features.ts)', () => {
  it("names the template validator's flag as the installed aws-cdk-lib does, and finds the validator and Validations", () => {
    // test/consumers/cdk-init-app.test.ts proves the refusals on the oldest aws-cdk-lib, which has neither.
    expect(TEMPLATE_VALIDATOR_ERRORS_FLAG).toBe(cxapi.VALIDATE_AGAINST_DEFAULT_RULES);
    expect(hasTemplateValidator()).toBe(true);
    expect(validationsOf(new App())).toBeDefined();
  });
});
