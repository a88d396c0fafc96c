/**
 * Shared by the consumer suite (test/consumers): running commands the way a consumer project
 * would (its own node_modules/.bin, the machine's Node, none of this repo's npm or vitest
 * environment), the directories global-setup.ts prepared, and what a bundle that carries CDK
 * code looks like.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** What global-setup.ts prepared, shared with the test files through `inject('consumers')`. */
export interface Consumers {
  /** Temporary directory holding everything below; removed after the run. */
  readonly root: string;
  /** Absolute path of the packed tarball (`npm pack` of the repo). */
  readonly tarball: string;
  /** Directory the tarball was unpacked into (`<dir>/package/...`). */
  readonly unpacked: string;
  /** examples/cdk-app, copied and installed from the tarball. */
  readonly cdkApp: string;
  /** examples/producer-js, copied and installed from the tarball. */
  readonly producerJs: string;
  /** examples/producer-python, copied (it installs nothing from npm). */
  readonly producerPython: string;
  /** examples/migrate-from-powertools, copied and installed from the tarball. */
  readonly migrateFromPowertools: string;
  /** examples/testing (a user's job tests under vitest and jest, with `sqs-jobs/testing`), copied and installed from the tarball. */
  readonly testing: string;
  /**
   * A project made by `cdk init app --language typescript` (the repo's aws-cdk CLI), with
   * test/consumers/cdk-init-app copied over it, installed once per aws-cdk-lib version:
   * `oldest` the floor of sqs-jobs' peer range (with the floor of constructs), `newest` what the
   * generated package.json resolves to.
   */
  readonly cdkInit: { readonly oldest: CdkInitProject; readonly newest: CdkInitProject };
}

/** One install of the cdk-init project (see {@link Consumers.cdkInit}). */
export interface CdkInitProject {
  readonly dir: string;
  /** The aws-cdk-lib and constructs versions installed there. */
  readonly awsCdkLib: string;
  readonly constructs: string;
}

/** Name of the generated project: its files are bin/cdk-init-app.ts, lib/cdk-init-app-stack.ts, test/cdk-init-app.test.ts. */
export const CDK_INIT_NAME = 'cdk-init-app';

declare module 'vitest' {
  export interface ProvidedContext {
    consumers: Consumers;
  }
}

/** The outcome of {@link run}. */
export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Options of {@link run}. */
export interface RunOptions {
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) after this long. @default 300_000 */
  readonly timeoutMs?: number;
  readonly input?: string;
}

/** Runs a command without a shell and collects its output; never rejects on a non-zero exit. */
export function run(command: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? consumerEnv(),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** `command args` exited 0, or an error carrying its output (the tail of each stream). */
export function expectSuccess(what: string, result: RunResult): RunResult {
  if (result.code === 0) return result;
  throw new Error(
    `${what} failed (exit ${result.code ?? result.signal})\n--- stdout (tail)\n${tail(result.stdout)}\n--- stderr (tail)\n${tail(result.stderr)}`,
  );
}

/** The last `lines` lines of a text. */
export function tail(text: string, lines = 60): string {
  return text.split('\n').slice(-lines).join('\n');
}

/**
 * The environment of a consumer project's commands: this process's environment without what
 * `npm run` and vitest add (this repo's node_modules/.bin on the PATH, which would put the repo's
 * Node 24 and tools first; `npm_*` settings; `CDK_OUTDIR` from test/support/cdk-outdir.ts;
 * `NODE_OPTIONS`), so a consumer runs on the machine's Node with its own node_modules/.bin (npx).
 */
export function consumerEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|CDK_OUTDIR$|NODE_OPTIONS$|INIT_CWD$|NODE$)/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !resolve(dir).startsWith(REPO_ROOT))
    .join(delimiter);
  env.CDK_DISABLE_VERSION_CHECK = '1';
  return { ...env, ...extra };
}

/** Seconds with one decimal, for the printed timings. */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** KiB with no decimals, for the printed sizes. */
export const kib = (bytes: number): string => `${Math.round(bytes / 1024)} KiB`;

/** Prints one line of the suite's timings and sizes (no assertion is made on them). */
export function report(line: string): void {
  console.log(`[consumers] ${line}`);
}

/**
 * Text that appears in an esbuild bundle (minified, as JobQueue bundles workers) exactly when
 * aws-cdk-lib or constructs code is in it: jsii type names (`"aws-cdk-lib.aws_sqs.Queue"`, one
 * per exported class and enum of aws-cdk-lib) and the `Symbol.for('constructs.Construct')` key
 * of constructs. test/consumers/checks.test.ts proves they show in a bundle of `sqs-jobs/cdk`.
 */
export const CDK_CODE_MARKERS: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: 'a jsii type name of aws-cdk-lib', pattern: /"aws-cdk-lib\.[A-Za-z_]/ },
  { name: "constructs' Construct symbol", pattern: /constructs\.Construct/ },
];

/** A source map `sources` entry that is CDK code (the inputs esbuild bundled). */
export const CDK_SOURCE = /(^|\/)node_modules\/(aws-cdk-lib|constructs|cdk-nag)\//;

/** The markers found in a bundle's code. */
export function cdkMarkersIn(code: string): string[] {
  return CDK_CODE_MARKERS.filter((m) => m.pattern.test(code)).map((m) => m.name);
}

/** The `sources` of a source map file. */
export function sourceMapSources(mapFile: string): string[] {
  return (JSON.parse(readFileSync(mapFile, 'utf8')) as { sources: string[] }).sources;
}

/**
 * esbuild options equal to JobQueue's worker bundling (lib/constructs/job-queue.ts `bundling`),
 * for timing and inspecting bundles outside a synth.
 */
export const WORKER_BUNDLING = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  keepNames: true,
  sourcemap: true,
  mainFields: ['module', 'main'],
  banner: {
    js: "import { createRequire as __sqsJobsCreateRequire } from 'node:module'; const require = __sqsJobsCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
} as const;

/** A worker's code in a cloud assembly. */
export interface WorkerAsset {
  /** `sqs-jobs:queue` metadata of the function (the JobQueue name). */
  readonly queue: string;
  readonly functionLogicalId: string;
  /** The asset directory and its entry file (`index.mjs`). */
  readonly dir: string;
  readonly entryFile: string;
}

/**
 * The workers of a synthesized stack: each `AWS::Lambda::Function` with the metadata
 * `sqs-jobs:queue`, its `Code.S3Key` (`<hash>.zip`) mapped to `asset.<hash>` by the asset manifest.
 */
export function workerAssets(assemblyDir: string, stackName: string): WorkerAsset[] {
  const template = JSON.parse(readFileSync(join(assemblyDir, `${stackName}.template.json`), 'utf8')) as {
    Resources: Record<
      string,
      { Type: string; Properties?: { Code?: { S3Key?: unknown } }; Metadata?: Record<string, unknown> }
    >;
  };
  const assets = JSON.parse(readFileSync(join(assemblyDir, `${stackName}.assets.json`), 'utf8')) as {
    files: Record<string, { source: { path: string } }>;
  };
  const out: WorkerAsset[] = [];
  for (const [logicalId, r] of Object.entries(template.Resources)) {
    const queue = r.Metadata?.['sqs-jobs:queue'];
    if (r.Type !== 'AWS::Lambda::Function' || typeof queue !== 'string') continue;
    const hash = String(r.Properties?.Code?.S3Key ?? '').replace(/\.zip$/, '');
    const source = assets.files[hash]?.source.path;
    if (source === undefined) throw new Error(`worker ${logicalId}: asset ${hash} not in the asset manifest`);
    const dir = join(assemblyDir, source);
    const entryFile = join(dir, 'index.mjs');
    if (!existsSync(entryFile)) {
      throw new Error(`worker ${logicalId}: no index.mjs in ${dir} (${readdirSync(dir).join(', ')})`);
    }
    out.push({ queue, functionLogicalId: logicalId, dir, entryFile });
  }
  return out;
}

/** Polls `probe` until it returns a truthy value or the deadline passes (then throws `describe()`). */
export async function until<T>(
  probe: () => Promise<T | undefined | false>,
  options: { readonly timeoutMs: number; readonly intervalMs?: number; readonly describe: () => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${options.timeoutMs} ms: ${options.describe()}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 250));
  }
}
