/**
 * A project made by `cdk init app --language typescript` uses `sqs-jobs/cdk` unchanged, at the
 * oldest aws-cdk-lib and constructs of sqs-jobs' peer ranges and at the newest: CommonJS (no
 * `"type"`), type-checked by its own `npx tsc` and run by `npx tsx` on the machine's Node 20
 * (which loads the ESM package through require(esm)), it synthesizes; each worker is bundled from
 * the installed tarball; the synthesized stack runs on the local runtime and a job sent to it
 * completes; the project's jest test passes. On the oldest aws-cdk-lib, the checks that need a
 * newer one (cdk-nag 3's plugin API, the template validator) refuse with a message saying so.
 * global-setup.ts generates and installs the projects (test/consumers/cdk-init-app is the overlay).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/index.ts';
import { defineJob } from '../../lib/index.ts';
import { startLocalRuntime } from '../../lib/local/runtime.ts';
import {
  CDK_INIT_NAME,
  CDK_SOURCE,
  type CdkInitProject,
  cdkMarkersIn,
  consumerEnv,
  expectSuccess,
  REPO_ROOT,
  report,
  run,
  seconds,
  sourceMapSources,
  tail,
  until,
  workerAssets,
} from './support.ts';

const { cdkInit } = inject('consumers');
const STACK_NAME = 'CdkInitAppStack';
/** The producer's side of the project's jobs/greet.ts: what a send needs (type, queue, schema). */
const greet = defineJob({
  type: 'greetings.greet',
  queue: 'greetings',
  schema: z.object({ name: z.string().min(1) }),
  run: async () => {
    throw new Error('only sent from here: the project worker runs it');
  },
});
/** The bundled Node 24: jest's require(esm) needs Node >= 24.9 (and --experimental-vm-modules). */
const NODE_24 = join(REPO_ROOT, 'node_modules', '.bin', 'node');
const newestAwsCdkLib = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', 'aws-cdk-lib', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

describe.each([
  ['oldest', cdkInit.oldest],
  ['newest', cdkInit.newest],
] as const)('a cdk init app at the %s aws-cdk-lib', (which, project: CdkInitProject) => {
  const { dir } = project;

  it('is the generated CommonJS project, with the aws-cdk-lib and constructs of its end of the range', () => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.type).toBeUndefined();
    expect(JSON.parse(readFileSync(join(dir, 'cdk.json'), 'utf8')).app).toBe(
      `npx tsc && npx tsx bin/${CDK_INIT_NAME}.ts`,
    );
    const peers = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
        peerDependencies: Record<string, string>;
      }
    ).peerDependencies;
    if (which === 'oldest') {
      expect(`^${project.awsCdkLib}`).toBe(peers['aws-cdk-lib']);
      expect(`^${project.constructs}`).toBe(peers.constructs);
    } else {
      expect(project.awsCdkLib).toBe(newestAwsCdkLib);
    }
    report(`cdk-init-app (${which}): aws-cdk-lib ${project.awsCdkLib}, constructs ${project.constructs}`);
  });

  it('synthesizes with its own cdk.json (npx tsc && npx tsx), bundling the worker from the tarball', async () => {
    const result = expectSuccess(
      'cdk synth',
      await run('npx', ['cdk', 'synth', '--quiet', '--no-notices'], { cwd: dir }),
    );
    report(`cdk-init-app (${which}) synth (tsc, tsx on the machine's Node, bundling): ${seconds(result.ms)}`);
    const assembly = join(dir, 'cdk.out');
    const workers = workerAssets(assembly, STACK_NAME);
    expect(workers.map((w) => w.queue)).toEqual(['greetings']);
    for (const w of workers) {
      expect(cdkMarkersIn(readFileSync(w.entryFile, 'utf8'))).toEqual([]);
      const sources = sourceMapSources(`${w.entryFile}.map`);
      expect(sources.filter((s) => CDK_SOURCE.test(s))).toEqual([]);
      expect(sources.some((s) => s.includes('node_modules/sqs-jobs/'))).toBe(true);
      expect(sources.some((s) => s.endsWith('workers/greetings.ts'))).toBe(true);
    }
  });

  it('runs the synthesized stack locally: a job sent to the greetings queue completes', async () => {
    const logs: string[] = [];
    const rt = await startLocalRuntime({
      projectRoot: dir,
      stackName: STACK_NAME,
      synthesize: 'never',
      functionLogs: (l) => logs.push(l.line),
    });
    try {
      const client = new JobClient({
        source: '/consumers/cdk-init-app',
        queueUrls: { greetings: rt.queue('greetings').url },
        sqs: rt.sqs,
      });
      await client.send(greet, { name: which }, { id: `greet-${which}` });
      const table = rt.outputs.IdempotencyTableName;
      if (!table) throw new Error(`no IdempotencyTableName output: ${JSON.stringify(rt.outputs)}`);
      const row = await until(
        async () => {
          const out = await rt.dynamodb.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
          return out.Items?.find(
            (i: Record<string, AttributeValue>) => i.recordType?.S === 'job' && i.status?.S === 'COMPLETED',
          );
        },
        { timeoutMs: 60_000, describe: () => `no COMPLETED job record\n${tail(logs.join('\n'), 30)}` },
      );
      expect(JSON.parse(row.result?.S ?? '{}')).toEqual({
        jobId: `greet-${which}`,
        greeting: `hello ${which}`,
      });
    } finally {
      await rt.stop();
    }
  });

  it("passes the project's jest test (Node >= 24.9 with --experimental-vm-modules: jest's require(esm))", async () => {
    const result = await run(NODE_24, [join(dir, 'node_modules', 'jest', 'bin', 'jest.js')], {
      cwd: dir,
      env: consumerEnv({ NODE_OPTIONS: '--experimental-vm-modules' }),
    });
    report(`cdk-init-app (${which}) jest: ${seconds(result.ms)}, exit ${result.code}`);
    expect(result.code, tail(`${result.stdout}\n${result.stderr}`, 40)).toBe(0);
    expect(result.stderr).toMatch(/Tests:\s+1 passed, 1 total/);
  });
});

describe('the checks on the oldest aws-cdk-lib', () => {
  it('createJobsApp refuses, naming the aws-cdk-lib each check needs', async () => {
    const script = `
      const { createJobsApp } = require('sqs-jobs/cdk');
      const messages = [{}, { nag: false }].map((checks) => {
        try { createJobsApp({ checks }); return 'no error'; } catch (e) { return e.name + ': ' + e.message; }
      });
      console.log(JSON.stringify(messages));
    `;
    const result = expectSuccess(
      'node -e createJobsApp',
      await run('node', ['-e', script], { cwd: cdkInit.oldest.dir }),
    );
    const [withNag, withoutNag] = JSON.parse(result.stdout) as string[];
    expect(withNag).toMatch(/^JobsConfigError: /);
    expect(withNag).toContain(
      `nag: cdk-nag 3 runs as a policy validation plugin, which aws-cdk-lib ${cdkInit.oldest.awsCdkLib} does not have (cdk-nag 3 needs aws-cdk-lib 2.257.0 or later)`,
    );
    expect(withoutNag).toContain(
      `templateFindingsAreErrors: aws-cdk-lib ${cdkInit.oldest.awsCdkLib} has no CloudFormation template validator (added in 2.262.0)`,
    );
  });
});
