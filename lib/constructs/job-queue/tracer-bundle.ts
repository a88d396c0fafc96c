/**
 * The X-Ray tracer of a worker, bundled into a file of its own beside the worker's `index.mjs`.
 *
 * The worker imports the Powertools Tracer (and the X-Ray SDK under it, about 125 KB minified)
 * on its first sampled invocation only (lib/runtime/tracing.ts). esbuild, as NodejsFunction runs
 * it, writes one file (`--outfile`; code splitting needs `--outdir`, which NodejsFunction does not
 * pass), so a dynamic import is inlined into that file and read and parsed at every cold start.
 * `JobQueue` therefore leaves `@aws-lambda-powertools/tracer` external in the main bundle and,
 * in the `afterBundling` hook, bundles the runtime's tracer module (lib/runtime/xray-tracer.ts)
 * into `xray-tracer.mjs` in the same asset; the runtime imports that file, found beside its own
 * `import.meta.url`. Not `nodeModules: [...]`: that runs a package install in every synth.
 */
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetStaging } from 'aws-cdk-lib';
import { hookCommand } from './hook-command.ts';

/** The tracer's file in the asset; the runtime looks for this name (lib/runtime/tracing.ts `XRAY_TRACER_FILE`). */
export const XRAY_TRACER_FILE = 'xray-tracer.mjs';

/** The package left out of the main bundle: imported from {@link XRAY_TRACER_FILE} instead. */
export const TRACER_PACKAGE = '@aws-lambda-powertools/tracer';

/** Bundled CommonJS (the X-Ray SDK, and most of the AWS SDK) calls require(); an ESM bundle has none unless defined. */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __sqsJobsCreateRequire } from 'node:module'; const require = __sqsJobsCreateRequire(import.meta.url);";

/**
 * The runtime's tracer module, next to this package's runtime: `lib/runtime/xray-tracer.ts` in
 * the repository, `dist/runtime/xray-tracer.js` in the published package.
 */
export function tracerEntryPath(): string {
  const self = fileURLToPath(import.meta.url);
  return path.resolve(path.dirname(self), '..', '..', 'runtime', `xray-tracer${path.extname(self)}`);
}

/**
 * CommonJS run by `node -e <script> <esbuild> <entry> <outfile> <target> <banner>`: esbuild's
 * JavaScript API, loaded from the path resolved at synth time. One line, without double
 * quotes, `%`, `$` or backticks, so it survives both shells' quoting.
 */
const BUILD_SCRIPT = [
  'const [esbuild, entry, outfile, target, banner] = process.argv.slice(1);',
  "require(esbuild).buildSync({ entryPoints: [entry], outfile, bundle: true, platform: 'node',",
  "  format: 'esm', target, minify: true, mainFields: ['module', 'main'], banner: { js: banner }, logLevel: 'warning' });",
].join(' ');

/** The same build with the `esbuild` command (Docker's image, or a global install). */
function esbuildCliArgs(entry: string, outfile: string, target: string): string[] {
  return [
    'esbuild',
    '--bundle',
    entry,
    '--platform=node',
    '--format=esm',
    `--target=${target}`,
    '--minify',
    '--main-fields=module,main',
    `--outfile=${outfile}`,
    `--banner:js=${ESM_REQUIRE_BANNER}`,
    '--log-level=warning',
  ];
}

/** esbuild's JavaScript API as the project (else this package) resolves it; undefined when neither has it. */
function resolveEsbuild(bundlingRoot: string): string | undefined {
  for (const from of [path.join(bundlingRoot, 'package.json'), fileURLToPath(import.meta.url)]) {
    try {
      return createRequire(from).resolve('esbuild');
    } catch {
      // not installed there: try the next place
    }
  }
  return undefined;
}

/** What {@link tracerBundleCommand} needs from the function's bundling. */
export interface TracerBundleOptions {
  /** The hook's input directory: the bundling root locally, `/asset-input` in Docker. */
  readonly inputDir: string;
  /** The hook's output directory: the asset, holding `index.mjs`. */
  readonly outputDir: string;
  /** The directory NodejsFunction bundles from (its `projectRoot`), mounted as `/asset-input` in Docker. */
  readonly bundlingRoot: string;
  /** esbuild's target of the main bundle (`node24`). */
  readonly target: string;
  /** The runtime's tracer module. @default {@link tracerEntryPath} */
  readonly entry?: string;
  /** @default process.platform */
  readonly platform?: NodeJS.Platform;
}

/**
 * The `afterBundling` command that writes {@link XRAY_TRACER_FILE} into the asset: the tracer
 * module bundled as the main bundle is (minified ESM for the function's Node, `require` defined).
 * Locally, the Node running the synth with the project's esbuild (its `esbuild` command when the
 * package cannot be resolved, as NodejsFunction does); in Docker, the image's `esbuild`.
 * In Docker, a tracer module outside the bundling root (a linked package) cannot be seen by the
 * container: the command then fails bundling with a message saying so.
 */
export function tracerBundleCommand(options: TracerBundleOptions): string {
  const entry = options.entry ?? tracerEntryPath();
  const docker = options.inputDir === AssetStaging.BUNDLING_INPUT_DIR;
  if (docker) {
    const relative = path.relative(options.bundlingRoot, entry);
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      // NodejsFunction builds its Docker command even when it then bundles locally: fail only
      // if this command runs.
      const message = `sqs-jobs: ${entry} (the X-Ray tracer module) is outside ${options.bundlingRoot}, the directory Docker bundling mounts: install sqs-jobs inside the project (not linked), or install esbuild in the project so bundling runs locally`;
      return `${hookCommand(['echo', message], false)} >&2; exit 1`;
    }
    const dockerEntry = `${options.inputDir}/${relative.split(path.sep).join('/')}`;
    return hookCommand(
      esbuildCliArgs(dockerEntry, `${options.outputDir}/${XRAY_TRACER_FILE}`, options.target),
      false,
    );
  }
  const windows = (options.platform ?? process.platform) === 'win32';
  const outfile = path.join(options.outputDir, XRAY_TRACER_FILE);
  const esbuild = resolveEsbuild(options.bundlingRoot);
  if (esbuild === undefined) {
    return hookCommand(esbuildCliArgs(entry, outfile, options.target), windows);
  }
  return hookCommand(
    [process.execPath, '-e', BUILD_SCRIPT, esbuild, entry, outfile, options.target, ESM_REQUIRE_BANNER],
    windows,
  );
}
