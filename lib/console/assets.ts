/**
 * The page's files and where they are, in both layouts the console runs from:
 * - the repository (tsx, vitest): lib/console/page/ beside this module, the libraries from
 *   node_modules/ (htm's preact standalone build, uPlot's ESM build and stylesheet);
 * - the published package: the CLI bundle dist/bin/sqs-jobs.js, with the same files copied by
 *   bin/build.ts into dist/console/ (uPlot minified there), as lib/local/function-host.ts finds
 *   its thread file beside the bundle.
 *
 * No build step for the user: the page is plain ES modules the browser loads as they are.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** URL path → file name in the published dist/console/ folder, and its content type. */
export const CONSOLE_ASSETS = {
  '/app.js': { dist: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { dist: 'style.css', type: 'text/css; charset=utf-8' },
  '/vendor/preact-htm.js': { dist: 'vendor/preact-htm.js', type: 'text/javascript; charset=utf-8' },
  '/vendor/uplot.js': { dist: 'vendor/uplot.js', type: 'text/javascript; charset=utf-8' },
  '/vendor/uplot.css': { dist: 'vendor/uplot.css', type: 'text/css; charset=utf-8' },
} as const;

/** The page's HTML (the token is filled in per request). */
export const CONSOLE_INDEX = 'index.html';

export type ConsoleAssetPath = keyof typeof CONSOLE_ASSETS;

/** Where each file is in the repository (relative to this module). */
const REPO_FILES: Record<ConsoleAssetPath | typeof CONSOLE_INDEX, string> = {
  [CONSOLE_INDEX]: './page/index.html',
  '/app.js': './page/app.js',
  '/style.css': './page/style.css',
  '/vendor/preact-htm.js': '../../node_modules/htm/preact/standalone.module.js',
  '/vendor/uplot.js': '../../node_modules/uplot/dist/uPlot.esm.js',
  '/vendor/uplot.css': '../../node_modules/uplot/dist/uPlot.min.css',
};

/** Source files of the published copies (bin/build.ts), relative to the repository root. */
export const CONSOLE_ASSET_SOURCES: Record<string, string> = {
  [CONSOLE_INDEX]: 'lib/console/page/index.html',
  'app.js': 'lib/console/page/app.js',
  'style.css': 'lib/console/page/style.css',
  'vendor/preact-htm.js': 'node_modules/htm/preact/standalone.module.js',
  'vendor/uplot.js': 'node_modules/uplot/dist/uPlot.esm.js',
  'vendor/uplot.css': 'node_modules/uplot/dist/uPlot.min.css',
};

const inRepository = import.meta.url.endsWith('.ts');

/** The file of an asset (or of the index page) in the layout this module runs from. */
export function consoleAssetFile(path: ConsoleAssetPath | typeof CONSOLE_INDEX): string {
  if (inRepository) return fileURLToPath(new URL(REPO_FILES[path], import.meta.url));
  const dist = path === CONSOLE_INDEX ? CONSOLE_INDEX : CONSOLE_ASSETS[path].dist;
  // The bundle is dist/bin/sqs-jobs.js; the page is in dist/console/.
  return fileURLToPath(new URL(`../console/${dist}`, import.meta.url));
}

/** Reads every asset once (they are small); a missing file fails the start, not a page load. */
export async function loadConsoleAssets(): Promise<{
  readonly index: string;
  readonly files: ReadonlyMap<string, { readonly body: Buffer; readonly type: string }>;
}> {
  const index = await readFile(consoleAssetFile(CONSOLE_INDEX), 'utf8');
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [path, asset] of Object.entries(CONSOLE_ASSETS) as [
    ConsoleAssetPath,
    (typeof CONSOLE_ASSETS)[ConsoleAssetPath],
  ][]) {
    files.set(path, { body: await readFile(consoleAssetFile(path)), type: asset.type });
  }
  return { index, files };
}
