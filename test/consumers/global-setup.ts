/**
 * Global setup of the consumer suite (vitest.consumers.config.ts), run once before its files:
 * packs this repo with plain `npm pack` (its `prepack` builds dist/) into a temporary directory,
 * unpacks the tarball there, copies each project of examples/ beside it and installs the tarball
 * into the JavaScript ones (`npm install <tgz>`: a copy, not a link to the source tree). Nothing
 * is written into the repository except the build output dist/ (ignored by git). The temporary
 * directory is removed afterwards; `SQS_JOBS_KEEP_CONSUMERS=1` keeps it (its path is printed).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  CDK_INIT_NAME,
  type CdkInitProject,
  type Consumers,
  consumerEnv,
  expectSuccess,
  REPO_ROOT,
  report,
  run,
  seconds,
} from './support.ts';

/**
 * The oldest aws-cdk-lib and constructs sqs-jobs supports: the lower bounds of its peer ranges
 * (package.json), read from there so the proof follows the promise.
 */
function peerFloor(name: string): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  const range = pkg.peerDependencies[name] ?? '';
  const floor = /^\^(\d+\.\d+\.\d+)$/.exec(range)?.[1];
  if (!floor) throw new Error(`peerDependencies.${name} is ${JSON.stringify(range)}, not ^x.y.z`);
  return floor;
}

/**
 * `cdk init app --language typescript --generate-only` with the repo's aws-cdk CLI (what a new
 * user gets today), once, into `<root>/generated/cdk-init-app`; copied per version.
 */
async function generateCdkInitApp(root: string): Promise<string> {
  const dir = join(root, 'generated', CDK_INIT_NAME);
  mkdirSync(dir, { recursive: true });
  const cdk = join(REPO_ROOT, 'node_modules', '.bin', 'cdk');
  expectSuccess(
    'cdk init app --language typescript --generate-only',
    await run(cdk, ['init', 'app', '--language', 'typescript', '--generate-only'], { cwd: dir }),
  );
  return dir;
}

/** A copy of the generated project with the overlay (test/consumers/cdk-init-app) and sqs-jobs installed. */
async function cdkInitProject(
  generated: string,
  to: string,
  tarball: string,
  pins: readonly string[],
): Promise<{ project: CdkInitProject; ms: number }> {
  cpSync(generated, to, { recursive: true });
  cpSync(join(REPO_ROOT, 'test', 'consumers', CDK_INIT_NAME), to, {
    recursive: true,
    filter: (source) => basename(source) !== 'README.md',
  });
  const result = await run(
    'npm',
    ['install', tarball, 'zod@^4.6.7', ...pins, '--prefer-offline', '--no-audit', '--no-fund'],
    { cwd: to, env: consumerEnv(), timeoutMs: 600_000 },
  );
  expectSuccess(`npm install ${tarball} ${pins.join(' ')} in ${to}`, result);
  // Today's template sets up aws-cdk-lib's jest helper, which older aws-cdk-lib releases do not
  // have (2.224.0 has none): a project made when that release was current has no such line.
  if (!existsSync(join(to, 'node_modules', 'aws-cdk-lib', 'testhelpers', 'jest-autoclean.js'))) {
    const config = join(to, 'jest.config.js');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace(
        /^\s*setupFilesAfterEnv: \['aws-cdk-lib\/testhelpers\/jest-autoclean'\],?\n/m,
        '',
      ),
    );
  }
  const version = (name: string) =>
    (JSON.parse(readFileSync(join(to, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
      .version;
  return {
    project: { dir: to, awsCdkLib: version('aws-cdk-lib'), constructs: version('constructs') },
    ms: result.ms,
  };
}

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
    const generated = await generateCdkInitApp(root);
    const [cdkMs, producerMs, migrateMs, testingMs, oldest, newest] = await Promise.all([
      install(cdkApp, tarball),
      install(producerJs, tarball),
      install(migrateFromPowertools, tarball),
      install(testing, tarball),
      cdkInitProject(generated, join(root, 'cdk-init-oldest'), tarball, [
        `aws-cdk-lib@${peerFloor('aws-cdk-lib')}`,
        `constructs@${peerFloor('constructs')}`,
        '--save-exact',
      ]),
      // As generated: its own ranges, which resolve to the newest aws-cdk-lib and constructs.
      cdkInitProject(generated, join(root, 'cdk-init-newest'), tarball, []),
    ]);
    report(
      `npm install <tgz>: cdk-app ${seconds(cdkMs)}, producer-js ${seconds(producerMs)}, migrate-from-powertools ${seconds(migrateMs)}, testing ${seconds(testingMs)}, cdk-init-app at aws-cdk-lib ${oldest.project.awsCdkLib} ${seconds(oldest.ms)} and ${newest.project.awsCdkLib} ${seconds(newest.ms)} (concurrently)`,
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
      cdkInit: { oldest: oldest.project, newest: newest.project },
    };
    project.provide('consumers', consumers);
  } catch (error) {
    cleanup();
    throw error;
  }
  return cleanup;
}
