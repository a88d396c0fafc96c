/**
 * Global setup of the consumer suite (vitest.consumers.config.ts), run once before its files:
 * packs this repo with plain `npm pack` (its `prepack` builds dist/) into a temporary directory,
 * unpacks the tarball there, copies each project of examples/ beside it and installs the tarball
 * into the JavaScript ones (`npm install <tgz>`: a copy, not a link to the source tree). Nothing
 * is written into the repository except the build output dist/ (ignored by git). The temporary
 * directory is removed afterwards; `SQS_JOBS_KEEP_CONSUMERS=1` keeps it (its path is printed).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type Consumers, consumerEnv, expectSuccess, REPO_ROOT, report, run, seconds } from './support.ts';

/** Copied with the example: never its local install or build output. */
const NOT_COPIED = new Set(['node_modules', 'cdk.out', '.venv', '__pycache__', 'package-lock.json']);

function copyExample(name: string, root: string): string {
  const to = join(root, name);
  cpSync(join(REPO_ROOT, 'examples', name), to, {
    recursive: true,
    filter: (source) => !NOT_COPIED.has(basename(source)),
  });
  return to;
}

async function install(dir: string, tarball: string): Promise<number> {
  const result = await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: dir,
    env: consumerEnv(),
    timeoutMs: 600_000,
  });
  expectSuccess(`npm install ${tarball} in ${dir}`, result);
  return result.ms;
}

export default async function setup(project: TestProject): Promise<() => void> {
  const started = performance.now();
  const root = mkdtempSync(join(tmpdir(), 'sqs-jobs-consumers-'));
  const cleanup = () => {
    if (process.env.SQS_JOBS_KEEP_CONSUMERS === '1') report(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  };
  try {
    const packDir = join(root, 'pack');
    mkdirSync(packDir);
    // Plain `npm pack` in the repo, as a release would: prepack builds dist/ first. It runs with
    // this process's environment (npm run's PATH), where the repo's build tools are.
    const pack = expectSuccess(
      'npm pack',
      await run('npm', ['pack', '--json', '--pack-destination', packDir], {
        cwd: REPO_ROOT,
        env: process.env,
        timeoutMs: 600_000,
      }),
    );
    // The JSON report is the last thing on stdout, after whatever the build printed.
    const json = pack.stdout.slice(Math.max(0, pack.stdout.search(/^\[\s*$/m)));
    const packed = (JSON.parse(json) as { filename: string }[])[0];
    if (!packed) throw new Error(`npm pack printed no tarball:\n${pack.stdout}`);
    const tarball = join(packDir, packed.filename);
    report(`npm pack (build included): ${seconds(pack.ms)} → ${tarball}`);

    const unpacked = join(root, 'unpacked');
    mkdirSync(unpacked);
    expectSuccess('tar', await run('tar', ['-xzf', tarball, '-C', unpacked], { cwd: root }));

    const cdkApp = copyExample('cdk-app', root);
    const producerJs = copyExample('producer-js', root);
    const producerPython = copyExample('producer-python', root);
    const migrateFromPowertools = copyExample('migrate-from-powertools', root);
    const testing = copyExample('testing', root);
    const [cdkMs, producerMs, migrateMs, testingMs] = await Promise.all([
      install(cdkApp, tarball),
      install(producerJs, tarball),
      install(migrateFromPowertools, tarball),
      install(testing, tarball),
    ]);
    report(
      `npm install <tgz>: cdk-app ${seconds(cdkMs)}, producer-js ${seconds(producerMs)}, migrate-from-powertools ${seconds(migrateMs)}, testing ${seconds(testingMs)} (concurrently)`,
    );
    report(`global setup: ${seconds(performance.now() - started)}`);

    const consumers: Consumers = {
      root,
      tarball,
      unpacked,
      cdkApp,
      producerJs,
      producerPython,
      migrateFromPowertools,
      testing,
    };
    project.provide('consumers', consumers);
  } catch (error) {
    cleanup();
    throw error;
  }
  return cleanup;
}
