/**
 * What each published entry point pulls in (package.json `exports`): a Lambda worker importing
 * `sqs-jobs` must not bundle the CDK or the CLI, a producer importing `sqs-jobs/client` gets the
 * SQS client only, and every package an entry point reaches is one the package declares, so an
 * install from the registry can run it.
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  exports: Record<string, { default?: string } | string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** The TypeScript source behind each subpath of `exports` (dist/x/index.js ← lib/x/index.ts). */
function sourceOf(subpath: string): string {
  const target = pkg.exports[subpath];
  const js = typeof target === 'string' ? target : target?.default;
  if (js === undefined) throw new Error(`exports["${subpath}"] has no default target`);
  return js.replace(/^\.\/dist\//, 'lib/').replace(/\.js$/, '.ts');
}

interface Reach {
  /** Repository files in the import graph, relative to the root (`lib/runtime/worker.ts`). */
  readonly files: string[];
  /** npm packages imported anywhere in the graph (`@aws-sdk/client-sqs`, `p-limit`). */
  readonly packages: Set<string>;
}

const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/** The import graph of an entry point, packages left external (type-only imports are erased, as in any bundle). */
async function reach(entry: string): Promise<Reach> {
  const result = await build({
    entryPoints: [new URL(entry, root).pathname],
    absWorkingDir: new URL('.', root).pathname,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const packages = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imported of input.imports) {
      if (imported.external && !builtins.has(imported.path)) packages.add(packageName(imported.path));
    }
  }
  return { files: Object.keys(result.metafile.inputs), packages };
}

describe('entry points', () => {
  it('sqs-jobs (the Lambda runtime) reaches neither the CDK, the CLI, the DLQ tools nor the local runtime', async () => {
    const { files, packages } = await reach(sourceOf('.'));
    expect(files).toContain('lib/runtime/worker.ts');
    expect(files.filter((f) => /^lib\/(constructs|stacks|local|ops|sample)\//.test(f))).toEqual([]);
    for (const forbidden of [
      'aws-cdk-lib',
      'constructs',
      'cdk-nag',
      'commander',
      'cli-progress',
      'fauxqs',
      'dynalite',
    ]) {
      expect(packages).not.toContain(forbidden);
    }
    // Powertools Metrics is a type only: the worker writes EMF itself unless given a Metrics.
    expect([...packages].sort()).toEqual(
      [
        '@aws-lambda-powertools/logger',
        // Imported by lib/runtime/tracing.ts on the first sampled invocation only (X-Ray).
        '@aws-lambda-powertools/tracer',
        '@aws-sdk/client-dynamodb',
        '@aws-sdk/client-sqs',
        '@middy/core',
        'p-limit',
      ].sort(),
    );
  });

  it('sqs-jobs/client reaches the SQS client only: a producer needs nothing else', async () => {
    const { files, packages } = await reach(sourceOf('./client'));
    expect(files).toContain('lib/client/job-client.ts');
    expect([...packages]).toEqual(['@aws-sdk/client-sqs']);
    expect(
      files.filter((f) => /^lib\/(constructs|local|ops|sample)\//.test(f) || f.endsWith('worker.ts')),
    ).toEqual([]);
  });

  it('sqs-jobs/ops reaches the SQS client only', async () => {
    const { packages, files } = await reach(sourceOf('./ops'));
    expect(files).toContain('lib/ops/redrive.ts');
    expect([...packages]).toEqual(['@aws-sdk/client-sqs']);
  });

  it('sqs-jobs/cdk reaches the CDK packages (peers) and no Lambda runtime code', async () => {
    const { files, packages } = await reach(sourceOf('./cdk'));
    expect(files).toContain('lib/constructs/job-queue.ts');
    expect(files.filter((f) => f.startsWith('lib/runtime/'))).toEqual([]);
    for (const name of packages) expect(Object.keys(pkg.peerDependencies)).toContain(name);
    expect(packages).toContain('aws-cdk-lib');
  });

  it('every package the runtime, client and ops entry points import is a dependency of the package', async () => {
    const reached = await Promise.all(['.', './client', './ops'].map((s) => reach(sourceOf(s))));
    const missing = reached.flatMap((r) => [...r.packages]).filter((name) => !(name in pkg.dependencies));
    expect(missing).toEqual([]);
  });
});
