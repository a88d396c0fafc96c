/**
 * Stack traces of the local functions that name the user's own source files. A worker bundle's
 * source map (`index.mjs.map` beside `index.mjs`) lists its `sources` relative to the bundling
 * root, the project (lib/constructs/job-queue/source-map.ts), so that in Lambda they resolve under
 * `/var/task`. Node resolves them against the map's own directory, inside `cdk.out`, where those
 * files are not. The function thread (function-host-thread.ts) loads each bundle through
 * {@link withLocalSourceMap}: the map is inlined with its `sources` made absolute under the
 * directory that holds them, and source maps are on, so an error's stack (the DLQ evidence, the
 * logs) reads `<project>/jobs/greet.ts:12:11` instead of `index.mjs:1:48213`. The files in
 * `cdk.out` are not changed (their hash is the code asset's).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, parse, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The `//# sourceMappingURL=<file>` comment esbuild ends a bundle with (a file beside it, not a data: URL). */
const MAP_COMMENT = /\n\/\/# sourceMappingURL=([^\s:]+\.map)\s*$/;

interface RawSourceMap {
  sources?: unknown;
  sourceRoot?: unknown;
  [key: string]: unknown;
}

/**
 * The directory the map's relative `sources` are relative to: the first of `projectRoot` and its
 * parents (a monorepo bundles from the directory of its lock file) that holds one of the project's
 * own sources (one outside node_modules); `undefined` when none does.
 */
function sourcesBase(sources: readonly string[], projectRoot: string): string | undefined {
  const own = sources.filter((s) => !isAbsolute(s) && !s.includes('node_modules/') && !s.startsWith('../'));
  if (own.length === 0) return undefined;
  let dir = resolve(projectRoot);
  for (;;) {
    if (own.some((s) => existsSync(join(dir, s)))) return dir;
    if (dir === parse(dir).root) return undefined;
    dir = dirname(dir);
  }
}

/**
 * `source` (the code of `file`) with its source map inlined and the map's relative `sources` made
 * absolute `file:` URLs under the directory that holds them; `source` unchanged when it names no
 * map file beside it, the map cannot be read, or its sources are not found on this machine.
 */
export function withLocalSourceMap(file: string, source: string, projectRoot: string): string {
  const comment = MAP_COMMENT.exec(source);
  if (comment === null) return source;
  const mapFile = join(dirname(file), comment[1] as string);
  let map: RawSourceMap;
  try {
    map = JSON.parse(readFileSync(mapFile, 'utf8')) as RawSourceMap;
  } catch {
    return source;
  }
  if (!Array.isArray(map.sources) || map.sourceRoot) return source;
  const sources = map.sources.filter((s): s is string => typeof s === 'string');
  const base = sourcesBase(sources, projectRoot);
  if (base === undefined) return source;
  const absolute = {
    ...map,
    sources: map.sources.map((s) =>
      typeof s === 'string' && !isAbsolute(s) && !/^[a-z]+:/i.test(s) ? pathToFileURL(join(base, s)).href : s,
    ),
  };
  const inline = Buffer.from(JSON.stringify(absolute)).toString('base64');
  return `${source.slice(0, comment.index)}\n//# sourceMappingURL=data:application/json;base64,${inline}\n`;
}
