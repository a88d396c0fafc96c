/**
 * X-Ray tracing of `JobQueue` workers: `TracingConfig` in the template, the X-Ray write policy on
 * the worker's role only (its own policy, the function depending on it), cdk-nag clean with the
 * `AwsSolutions-IAM5[Resource::*]` finding acknowledged on that policy and nowhere else, and
 * `tracing: Tracing.DISABLED` removing both. One synth of three queues (each mode), with
 * cdk-nag's AwsSolutions checks, plus small apps that prove the acknowledgement is narrow.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobsConfigError } from '../../lib/constructs/errors.ts';
import { JobQueue, type JobQueueProps, XRAY_WRITE_ACTIONS } from '../../lib/constructs/job-queue.ts';
import { logicalId, referencedId, removeDir, roleStatements, tempOutdir } from './helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
type TemplateJson = {
  Resources: Record<
    string,
    { Type: string; Properties: Record<string, unknown>; DependsOn?: string[]; Metadata?: unknown }
  >;
};

const base = (name: string): JobQueueProps => ({
  name,
  entry: 'test/fixtures/worker-handler.ts',
  projectRoot: PROJECT_ROOT,
  maxAttempts: 2,
  jobTimeoutSeconds: 5,
  idempotencyTable: false,
  alarmTopic: false,
});

function nagApp(outdir: string): { app: App; stack: Stack } {
  const app = new App({ outdir, postCliContext: { '@aws-cdk/core:validateAgainstDefaultRules': true } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack: new Stack(app, 'TracingTest') };
}

/** `[rule, construct path]` of every AwsSolutions finding in the synth's report. */
function nagFindings(outdir: string): string[][] {
  const report = JSON.parse(fs.readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: {
      pluginName: string;
      violations?: { ruleName: string; violatingConstructs?: { constructPath?: string }[] }[];
    }[];
  };
  return report.pluginReports
    .filter((r) => r.pluginName === 'AwsSolutions')
    .flatMap((r) => r.violations ?? [])
    .flatMap((v) => (v.violatingConstructs ?? []).map((c) => [v.ruleName, String(c.constructPath)]));
}

/** Every policy resource whose statements name an X-Ray action, with the roles it is attached to. */
function xrayPolicies(template: TemplateJson): { id: string; roles: string[]; statements: unknown[] }[] {
  return Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties).includes('xray:'))
    .map(([id, r]) => ({
      id,
      roles: ((r.Properties.Roles as unknown[]) ?? []).map((x) => referencedId(x) ?? JSON.stringify(x)),
      statements: (r.Properties.PolicyDocument as { Statement: unknown[] }).Statement,
    }));
}

describe('JobQueue tracing: active by default, PassThrough, disabled', () => {
  let outdir: string;
  let template: TemplateJson;
  let active: JobQueue;
  let passThrough: JobQueue;
  let disabled: JobQueue;

  beforeAll(() => {
    outdir = tempOutdir('construct-tracing');
    const { app, stack } = nagApp(outdir);
    active = new JobQueue(stack, 'Active', base('active'));
    passThrough = new JobQueue(stack, 'Pass', { ...base('pass'), tracing: lambda.Tracing.PASS_THROUGH });
    disabled = new JobQueue(stack, 'Off', { ...base('off'), tracing: lambda.Tracing.DISABLED });
    template = app.synth().getStackArtifact(stack.artifactId).template as TemplateJson;
  });
  afterAll(() => removeDir(outdir));

  it('cdk-nag reports nothing: the X-Ray wildcard is acknowledged', () => {
    expect(nagFindings(outdir)).toEqual([]);
  });

  it('sets TracingConfig Active when tracing is left out, PassThrough when asked, none when disabled', () => {
    const config = (q: JobQueue) => template.Resources[logicalId(q.worker)]!.Properties.TracingConfig;
    expect(active.tracing).toBe(lambda.Tracing.ACTIVE);
    expect(config(active)).toEqual({ Mode: 'Active' });
    expect(config(passThrough)).toEqual({ Mode: 'PassThrough' });
    expect(config(disabled)).toBeUndefined();
    expect(disabled.tracingPolicy).toBeUndefined();
  });

  it('grants the two X-Ray write actions on * in a policy of its own, attached to the traced workers only', () => {
    expect([...XRAY_WRITE_ACTIONS]).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    const policies = xrayPolicies(template);
    expect(policies.map((p) => p.id).sort()).toEqual(
      [logicalId(active.tracingPolicy!), logicalId(passThrough.tracingPolicy!)].sort(),
    );
    for (const [q, policy] of [
      [active, policies.find((p) => p.id === logicalId(active.tracingPolicy!))],
      [passThrough, policies.find((p) => p.id === logicalId(passThrough.tracingPolicy!))],
    ] as const) {
      expect(policy?.roles).toEqual([logicalId(q.worker.role!)]);
      expect(policy?.statements).toEqual([
        { Effect: 'Allow', Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' },
      ]);
      // Nothing else of the role is on `*`; the default policy holds no X-Ray action.
      const { statements } = roleStatements(template, logicalId(q.worker.role!));
      expect(statements.filter((s) => s.resources.includes('"*"')).flatMap((s) => s.actions)).toEqual([
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
      ]);
    }
    const off = roleStatements(template, logicalId(disabled.worker.role!));
    expect(off.statements.flatMap((s) => s.actions).filter((a) => a.startsWith('xray:'))).toEqual([]);
    expect(off.statements.flatMap((s) => s.resources)).not.toContain('"*"');
  });

  it('creates the worker after its X-Ray policy (Lambda checks the role when tracing is on)', () => {
    const dependsOn = template.Resources[logicalId(active.worker)]!.DependsOn ?? [];
    expect(dependsOn).toContain(logicalId(active.tracingPolicy!));
  });
});

describe('JobQueue tracing: the acknowledgement is narrow', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) removeDir(d);
  });

  it('another wildcard on the worker role is still an AwsSolutions-IAM5 error', () => {
    const outdir = tempOutdir('construct-tracing-nag');
    dirs.push(outdir);
    const { app, stack } = nagApp(outdir);
    const q = new JobQueue(stack, 'Q', base('q'));
    q.worker.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: ['*'] }));
    expect(() => app.synth()).toThrow();
    const findings = nagFindings(outdir);
    expect(findings).toEqual([
      ['AwsSolutions-IAM5[Resource::*]', `${q.worker.role!.node.path}/DefaultPolicy/Resource`],
    ]);
  });

  it('refuses a tracing value that is not a lambda.Tracing', () => {
    const stack = new Stack(new App(), 'Bad');
    expect(() => new JobQueue(stack, 'Q', { ...base('q'), tracing: 'On' as lambda.Tracing })).toThrow(
      JobsConfigError,
    );
    expect(() => new JobQueue(stack, 'Q2', { ...base('q2'), tracing: 'On' as lambda.Tracing })).toThrow(
      /tracing: "On" is not a lambda\.Tracing value/,
    );
  });
});
