/**
 * A worker bundle that does not depend on where the cloud assembly is written.
 *
 * esbuild writes the source map's `sources` relative to the output file, and NodejsFunction
 * bundles into a directory inside the assembly (`cdk.out/...`): the same code synthesized into
 * `cdk.out` and into `/tmp/x/y/cdk.out` gave two maps, two code asset hashes (the asset hash is
 * the hash of the bundle directory, map included) and so two `JOBS_HANDLER_VERSION`s, and a
 * redeploy of unchanged code. The `afterBundling` hook below rewrites the map's relative
 * `sources` to paths relative to the bundling root (the project), before the asset is hashed:
 * `lib/runtime/worker.ts` instead of `../../../work/app/lib/runtime/worker.ts`. Stack traces
 * (`--enable-source-maps`) then name `/var/task/lib/runtime/worker.ts` in Lambda.
 *
 * The hook is a shell command (NodejsFunction runs hooks with `bash -c`, or `cmd /c` on Windows,
 * in the bundling environment), so the rewrite is a short Node script passed with `-e`: the Node
 * running the synth for local bundling, `node` of the image for Docker bundling.
 */
import { AssetStaging } from 'aws-cdk-lib';
import { hookCommand } from './hook-command.ts';

/** The bundle's source map, next to `index.mjs` (ESM output). */
export const SOURCE_MAP_FILE = 'index.mjs.map';

/**
 * CommonJS run by `node -e <script> <mapFile> <root>`. Only relative `sources` (esbuild's file
 * paths) are rewritten; anything else is left as it is. One line, without double quotes, `%`, `$`
 * or backticks, so it survives both shells' quoting below.
 */
const REWRITE_SCRIPT = [
  "const fs = require('node:fs'), path = require('node:path');",
  'const [file, root] = process.argv.slice(1);',
  "const map = JSON.parse(fs.readFileSync(file, 'utf8'));",
  'const dir = path.dirname(file);',
  'map.sources = (map.sources || []).map((s) => /^[.][.]?[\\\\/]/.test(s)',
  "  ? path.relative(root, path.resolve(dir, s)).split(path.sep).join('/') : s);",
  'fs.writeFileSync(file, JSON.stringify(map));',
].join(' ');

/**
 * The `afterBundling` command that makes the source map's paths relative to `inputDir` (the
 * bundling root NodejsFunction passes to the hook).
 * @param inputDir the hook's input directory: the project root locally, `/asset-input` in Docker.
 * @param outputDir the hook's output directory, holding `index.mjs.map`.
 */
export function relativeSourceMapCommand(
  inputDir: string,
  outputDir: string,
  platform: NodeJS.Platform = process.platform,
): string {
  const docker = inputDir === AssetStaging.BUNDLING_INPUT_DIR;
  const windows = !docker && platform === 'win32';
  const separator = docker || !windows ? '/' : '\\';
  const mapFile = `${outputDir}${separator}${SOURCE_MAP_FILE}`;
  const node = docker ? 'node' : process.execPath;
  return hookCommand([node, '-e', REWRITE_SCRIPT, mapFile, inputDir], windows);
}
