/**
 * The page's files, listed once, and where they are in both layouts the console runs from:
 * - the repository (tsx, vitest): every `.html`, `.js` and `.css` file of lib/console/page/ (the
 *   page's ES modules import each other by relative path, so a new module needs no list entry),
 *   and the browser libraries from node_modules/ ({@link VENDOR_FILES});
 * - the published package: the CLI bundle dist/bin/sqs-jobs.js, with the same files copied by
 *   bin/build.ts ({@link consoleAssetSources}) into dist/console/ (uPlot minified there), as
 *   lib/local/function-host.ts finds its thread file beside the bundle.
 *
 * No build step for the user: the page is plain ES modules the browser loads as they are (their
 * types are checked by `tsc --noEmit`, not compiled away: lib/console/page/types.ts).
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The page's HTML, served at `/` (its token filled in per request), never under its name. */
const INDEX = 'index.html';

/** Where the page's own files are, relative to the repository root. */
const PAGE_DIR = 'lib/console/page';

/** The browser libraries the page loads: name under `/` → file in the repository. */
const VENDOR_FILES: Readonly<Record<string, string>> = {
  // htm's one-file Preact build (components and hooks as tagged templates, no JSX compiler).
  'vendor/preact-htm.js': 'node_modules/htm/preact/standalone.module.js',
  'vendor/uplot.js': 'node_modules/uplot/dist/uPlot.esm.js',
  'vendor/uplot.css': 'node_modules/uplot/dist/uPlot.min.css',
};

/** Content type of each kind of file served; other files of the page folder are not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

const inRepository = import.meta.url.endsWith('.ts');

/** The served files under `folder` (names relative to it, `/`-separated; only kinds in {@link CONTENT_TYPES}). */
function servedFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => CONTENT_TYPES[extname(name)] !== undefined)
    .map((name) => name.split(sep).join('/'))
    .sort();
}

/**
 * Every file of the page (its name under dist/console/ and `/`, `index.html` included) → its
 * source, relative to the repository root. Read from the repository's lib/console/page/.
 * @param root the repository root @default the repository this module is in
 */
export function consoleAssetSources(
  root = fileURLToPath(new URL('../../', import.meta.url)),
): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const name of servedFiles(join(root, PAGE_DIR))) sources[name] = `${PAGE_DIR}/${name}`;
  return { ...sources, ...VENDOR_FILES };
}

/** A page file ready to serve. */
export interface ConsoleAsset {
  readonly body: Buffer;
  readonly type: string;
}

/**
 * Reads every file of the page once (they are small); a missing file fails the start, not a
 * page load. `files` is keyed by URL path (`/app.js`, `/vendor/uplot.js`), the index apart.
 */
export async function loadConsoleAssets(): Promise<{
  readonly index: string;
  readonly files: ReadonlyMap<string, ConsoleAsset>;
}> {
  let paths: [string, string][];
  if (inRepository) {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    paths = Object.entries(consoleAssetSources(root)).map(([name, source]) => [name, join(root, source)]);
  } else {
    // The bundle is dist/bin/sqs-jobs.js; the page is in dist/console/.
    const folder = fileURLToPath(new URL('../console/', import.meta.url));
    paths = servedFiles(folder).map((name) => [name, join(folder, name)]);
  }
  let index: string | undefined;
  const files = new Map<string, ConsoleAsset>();
  for (const [name, file] of paths) {
    if (name === INDEX) index = await readFile(file, 'utf8');
    else files.set(`/${name}`, { body: await readFile(file), type: CONTENT_TYPES[extname(name)] ?? '' });
  }
  if (index === undefined)
    throw new Error(`the console page has no ${INDEX} (looked in ${paths[0]?.[1] ?? 'nothing'})`);
  return { index, files };
}
