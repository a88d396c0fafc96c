/**
 * `npm run build` (also run by `npm pack` / `npm publish` through `prepack`): the published
 * package in dist/.
 * - lib/ → dist/ with tsc (tsconfig.build.json): ESM `.js`, `.d.ts` and source maps per module,
 *   for the entry points `sqs-jobs`, `/client`, `/cdk` and `/ops`.
 * - The `sqs-jobs` CLI → dist/bin/ with esbuild, bundled with its own tools (commander, the local
 *   runtime), so they are not dependencies a Lambda worker or a producer installs. Packages the
 *   library declares (package.json dependencies and peerDependencies) stay external; the local
 *   runtime's function thread is a second entry beside the CLI (lib/local/function-host.ts).
 * - The web console's page (`sqs-jobs console`) → dist/console/: its HTML, script and stylesheet
 *   as written, and the browser libraries it loads (htm's Preact standalone build, uPlot, which is
 *   minified here); the CLI bundle serves them from there (lib/console/assets.ts). No build step
 *   for users: plain ES modules.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { build } from 'esbuild';
import { consoleAssetSources } from '../lib/console/assets.ts';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

rmSync(new URL('dist', root), { recursive: true, force: true });
const tsc = spawnSync('tsc', ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

const external = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)].flatMap((name) => [
  name,
  `${name}/*`,
]);
await build({
  absWorkingDir: new URL('.', root).pathname,
  entryPoints: ['bin/sqs-jobs.ts', 'lib/local/function-host-thread.ts'],
  outdir: 'dist/bin',
  entryNames: '[name]',
  bundle: true,
  platform: 'node',
  // The CLI runs on the operator's Node (20 or later); `sqs-jobs local` checks for what it needs.
  target: 'node20',
  format: 'esm',
  // No source map: it would triple the tarball, and CLI errors are messages, not stacks.
  sourcemap: false,
  external,
  // Bundled CommonJS code calls require(); an ESM bundle has none unless defined.
  banner: {
    js: "import { createRequire as __sqsJobsCreateRequire } from 'node:module'; const require = __sqsJobsCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// The console's page: copied as it is, except uPlot (145 KB as published), minified.
for (const [file, source] of Object.entries(consoleAssetSources())) {
  const target = new URL(`dist/console/${file}`, root);
  mkdirSync(dirname(target.pathname), { recursive: true });
  if (file === 'vendor/uplot.js') {
    await build({
      absWorkingDir: new URL('.', root).pathname,
      entryPoints: [source],
      outfile: target.pathname,
      bundle: false,
      minify: true,
      format: 'esm',
      target: 'es2022',
      logLevel: 'warning',
    });
  } else {
    copyFileSync(new URL(source, root), target);
  }
}
