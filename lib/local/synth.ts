/**
 * `ensureSynthesized`: reuse `cdk.out` when it is newer than every source it was built from,
 * else synthesize the CDK app again. Several processes (parallel test files) may call it at once:
 * a lock directory (in the temp directory, named after the output path) makes one of them synthesize while the others wait and
 * then reuse the result.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SynthError } from './errors.ts';

/** Options of {@link ensureSynthesized}. */
export interface EnsureSynthesizedOptions {
  /** Project root (holds cdk.json and package.json). @default process.cwd() */
  readonly projectRoot?: string;
  /** Cloud assembly directory. @default `<projectRoot>/cdk.out` */
  readonly outdir?: string;
  /**
   * Paths (relative to the root) whose files the assembly is built from.
   * @default the directories of cdk.json's `watch.include` (what `cdk watch` watches; this repo:
   *   bin, lib, functions), else the whole project (node_modules, the output directory and dot
   *   entries left out) — see {@link sourcePaths}
   */
  readonly sourceDirs?: readonly string[];
  /** Single files (relative to the root) the assembly depends on. @default the lock files present, package.json, cdk.json, tsconfig.json */
  readonly sourceFiles?: readonly string[];
  /**
   * Synthesizes into `outdir`. @default in this process through lib/stacks (`synthesizeApp`
   * or `buildApp`, see {@link synthesizeWithBuildApp}) when it exports one, else `npx cdk synth --quiet --no-notices --output <outdir>` with
   * `CDK_DISABLE_VERSION_CHECK=1`.
   */
  readonly synthesize?: (outdir: string) => Promise<void>;
  /** Synthesize even when the assembly is up to date. @default false */
  readonly force?: boolean;
  /** How long to wait for another process's synthesis, in milliseconds. @default 300_000 */
  readonly lockTimeoutMs?: number;
}

/** What {@link ensureSynthesized} did. */
export interface SynthResult {
  /** Absolute path of the cloud assembly. */
  readonly outdir: string;
  /** True when this call synthesized; false when the existing assembly was reused. */
  readonly synthesized: boolean;
  /** Why it synthesized or reused, in words. */
  readonly reason: string;
  /** Time spent, in milliseconds (waiting for a lock included). */
  readonly durationMs: number;
}

const PROJECT_FILES = [
  'package-lock.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'package.json',
  'cdk.json',
  'tsconfig.json',
] as const;
const SKIPPED_DIRS = new Set(['node_modules', 'cdk.out']);

/**
 * What a project's assembly is built from, as {@link isAssemblyFresh} checks it: the directories
 * named by cdk.json's `watch.include` globs (the part before the first wildcard: `bin/**` → `bin`,
 * `**` → the whole project), else the whole project; and the project files (lock files,
 * package.json, cdk.json, tsconfig.json). A user's jobs and workers can live anywhere (`jobs/`,
 * `workers/`): a fixed list of directories missed them and ran old code without saying so.
 * Excludes are not applied: at worst a change there synthesizes once more.
 */
export function sourcePaths(projectRoot: string): { dirs: string[]; files: string[] } {
  let include: unknown;
  try {
    include = (
      JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as { watch?: { include?: unknown } }
    ).watch?.include;
  } catch {
    include = undefined;
  }
  const patterns = (Array.isArray(include) ? include : [include]).filter(
    (p): p is string => typeof p === 'string',
  );
  const dirs = patterns.map((pattern) => {
    const fixed = pattern.split(/[*?[{]/)[0] ?? '';
    const dir = fixed.includes('/')
      ? fixed.slice(0, fixed.lastIndexOf('/'))
      : fixed.endsWith('*')
        ? ''
        : fixed;
    return dir.replace(/^\.\/?/, '') || '.';
  });
  return { dirs: dirs.length > 0 ? [...new Set(dirs)] : ['.'], files: [...PROJECT_FILES] };
}

/** Newest modification time (epoch ms) of the files under `path`, `skip` (absolute paths) left out; 0 when it does not exist. */
function newestMtimeMs(path: string, skip: ReadonlySet<string>): number {
  if (!existsSync(path) || skip.has(resolve(path))) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name)) continue;
    newest = Math.max(newest, newestMtimeMs(join(path, entry.name), skip));
  }
  return newest;
}

/**
 * Whether the assembly at `outdir` is up to date: its manifest.json is newer than every file
 * under the source directories and the source files.
 */
export function isAssemblyFresh(
  outdir: string,
  projectRoot: string,
  sourceDirs: readonly string[] = sourcePaths(projectRoot).dirs,
  sourceFiles: readonly string[] = sourcePaths(projectRoot).files,
): { fresh: boolean; reason: string } {
  const manifest = join(outdir, 'manifest.json');
  if (!existsSync(manifest)) return { fresh: false, reason: `${manifest} does not exist` };
  const builtAt = statSync(manifest).mtimeMs;
  const skip = new Set([resolve(outdir)]);
  // The whole project ('.') is checked entry by entry, so the reason names what changed.
  const expanded = sourceDirs.flatMap((dir) =>
    dir === '.'
      ? readdirSync(projectRoot).filter((name) => !name.startsWith('.') && !SKIPPED_DIRS.has(name))
      : [dir],
  );
  for (const source of [...new Set([...expanded, ...sourceFiles])]) {
    const newest = newestMtimeMs(join(projectRoot, source), skip);
    if (newest > builtAt) return { fresh: false, reason: `${source} changed after the last synthesis` };
  }
  return { fresh: true, reason: 'cdk.out is newer than every source' };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withLock<T>(lockDir: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let age = 0;
      try {
        age = Date.now() - statSync(lockDir).mtimeMs;
      } catch {
        continue; // released between mkdir and stat
      }
      if (age > timeoutMs) rmSync(lockDir, { recursive: true, force: true });
      else if (Date.now() - started > timeoutMs) {
        throw new SynthError(`timed out waiting for another synthesis (lock ${lockDir})`, {
          context: { lockDir },
        });
      } else await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * What is missing for `cdk synth` in `projectRoot`, said as what to do; undefined when nothing
 * is. Checked before running the CLI: without cdk.json the CLI has no app to run, and without the
 * `aws-cdk` package `npx cdk` asks npm for a package named `cdk` (another project) and fails with
 * npm's own error, which names neither.
 */
export function cliSynthProblem(
  projectRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!existsSync(join(projectRoot, 'cdk.json'))) {
    return `no cdk.json in ${projectRoot}: sqs-jobs local runs the CDK app that cdk.json's "app" names. Run it in your CDK project's root, or pass --project-root <the directory with cdk.json>; to start one: npx cdk init app --language typescript (docs/own-app.md)`;
  }
  if (cdkCliOf(projectRoot, env) === undefined) {
    return `the AWS CDK CLI is not installed for ${projectRoot}: no package aws-cdk in its node_modules (nor a cdk command on PATH). Install it: npm install --save-dev aws-cdk`;
  }
  return undefined;
}

/** How to run the CDK CLI for `projectRoot`: its own `aws-cdk` (through npx), else a `cdk` on PATH. */
function cdkCliOf(
  projectRoot: string,
  env: NodeJS.ProcessEnv,
): { command: string; args: string[] } | undefined {
  try {
    createRequire(join(projectRoot, 'package.json')).resolve('aws-cdk/package.json');
    return { command: 'npx', args: ['cdk'] };
  } catch {
    // Not installed in the project: a global install will do.
  }
  for (const dir of (env.PATH ?? '').split(':')) {
    if (dir !== '' && existsSync(join(dir, 'cdk'))) return { command: join(dir, 'cdk'), args: [] };
  }
  return undefined;
}

/**
 * Synthesizes with the CDK CLI of the project (`npx cdk synth`, or a global `cdk`).
 * @throws {SynthError} saying what to do when cdk.json or the CLI is missing ({@link cliSynthProblem}),
 *   or with the CLI's output when it fails.
 */
export function synthesizeWithCli(projectRoot: string, outdir: string): Promise<void> {
  const problem = cliSynthProblem(projectRoot);
  const cli = problem === undefined ? cdkCliOf(projectRoot, process.env) : undefined;
  if (problem !== undefined || cli === undefined) {
    return Promise.reject(new SynthError(problem ?? 'no CDK CLI', { context: { projectRoot } }));
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cli.command, [...cli.args, 'synth', '--quiet', '--no-notices', '--output', outdir], {
      cwd: projectRoot,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (cause) =>
      reject(new SynthError(`cannot run ${cli.command} ${[...cli.args, 'synth'].join(' ')}`, { cause })),
    );
    child.on('close', (code) => {
      if (code === 0) resolvePromise();
      else {
        reject(
          new SynthError(`cdk synth exited with code ${code}:\n${output.trim()}`, {
            context: { projectRoot, outdir, code },
          }),
        );
      }
    });
  });
}

/**
 * Empties aws-cdk-lib's in-process cache of staged assets (`AssetStaging.clearAssetHashCache`).
 * It is keyed by the asset's source path and options, not by its files: a second synthesis in the
 * same process (`sqs-jobs local --watch` after a code change) would otherwise reuse the first
 * bundle of a worker whose code changed. Nothing to do when the project has no aws-cdk-lib.
 */
function forgetStagedAssets(projectRoot: string): void {
  try {
    const cdk = createRequire(join(projectRoot, 'package.json'))('aws-cdk-lib') as {
      AssetStaging?: { clearAssetHashCache?: () => void };
    };
    cdk.AssetStaging?.clearAssetHashCache?.();
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
  }
}

/** Modules (relative to the root) that may export the programmatic synthesis, in order. */
const SYNTH_MODULES = ['lib/stacks/app.ts', 'lib/stacks/index.ts'] as const;

interface SynthModule {
  /** `synthesizeApp({ outdir })`: builds and synthesizes (lib/stacks/app.ts). */
  synthesizeApp?: (options: { outdir: string }) => unknown;
  /** `buildApp({ outdir })` → `{ app }` or an app; synthesized with `app.synth()`. */
  buildApp?: (options: { outdir: string }) => unknown;
}

/**
 * Synthesizes in this process through lib/stacks: `synthesizeApp({ outdir })` when exported,
 * else `buildApp({ outdir })` followed by `app.synth()`. Faster than the CLI (no `npx`, no
 * second TypeScript loader) and the same code path `cdk synth` runs (bin/app.ts calls `buildApp`).
 * @returns false when no module of lib/stacks exports either function.
 * @throws {SynthError} when synthesis fails (nag or template validation errors included).
 */
export async function synthesizeWithBuildApp(projectRoot: string, outdir: string): Promise<boolean> {
  for (const relative of SYNTH_MODULES) {
    const file = join(projectRoot, relative);
    if (!existsSync(file)) continue;
    const mod = (await import(pathToFileURL(file).href)) as SynthModule;
    if (typeof mod.synthesizeApp !== 'function' && typeof mod.buildApp !== 'function') continue;
    forgetStagedAssets(projectRoot);
    try {
      if (typeof mod.synthesizeApp === 'function') {
        await mod.synthesizeApp({ outdir });
      } else {
        const built = (await mod.buildApp?.({ outdir })) as {
          app?: { synth(): unknown };
          synth?: () => unknown;
        };
        const app = built?.app ?? built;
        if (typeof app?.synth !== 'function') throw new Error('buildApp returned no app');
        app.synth();
      }
    } catch (cause) {
      throw new SynthError(`synthesis through ${relative} failed: ${(cause as Error).message}`, {
        cause,
        context: { module: relative },
      });
    }
    return true;
  }
  return false;
}

/**
 * Makes sure `outdir` holds a cloud assembly built from the current sources.
 *
 * Reuses it when its manifest.json is newer than every file under `sourceDirs` and every
 * `sourceFiles` entry; otherwise synthesizes (see {@link EnsureSynthesizedOptions.synthesize}).
 *
 * @throws {SynthError} when synthesis fails (the CLI's output is in the message) or another
 *   process holds the lock longer than `lockTimeoutMs`.
 */
export async function ensureSynthesized(options: EnsureSynthesizedOptions = {}): Promise<SynthResult> {
  const started = Date.now();
  const projectRoot = resolve(options.projectRoot ?? process.cwd());
  const outdir = resolve(options.outdir ?? join(projectRoot, 'cdk.out'));
  const defaults = sourcePaths(projectRoot);
  const sourceDirs = options.sourceDirs ?? defaults.dirs;
  const sourceFiles = options.sourceFiles ?? defaults.files;
  const check = () => isAssemblyFresh(outdir, projectRoot, sourceDirs, sourceFiles);
  const first = check();
  if (first.fresh && !options.force) {
    return { outdir, synthesized: false, reason: first.reason, durationMs: Date.now() - started };
  }
  // The lock lives in the temp directory, named after the output path, so it never shows in the repo.
  const lockDir = join(
    tmpdir(),
    `sqs-jobs-synth-${createHash('sha256').update(outdir).digest('hex').slice(0, 16)}.lock`,
  );
  return withLock(lockDir, options.lockTimeoutMs ?? 300_000, async () => {
    const again = check();
    if (!options.force && again.fresh) {
      return { outdir, synthesized: false, reason: again.reason, durationMs: Date.now() - started };
    }
    if (options.synthesize) await options.synthesize(outdir);
    else if (!(await synthesizeWithBuildApp(projectRoot, outdir)))
      await synthesizeWithCli(projectRoot, outdir);
    if (!existsSync(join(outdir, 'manifest.json'))) {
      throw new SynthError(`synthesis finished but ${outdir}/manifest.json is missing`, {
        context: { outdir },
      });
    }
    return { outdir, synthesized: true, reason: first.reason, durationMs: Date.now() - started };
  });
}
