/**
 * The published package in dist/, built by `npm run build` (bin/build.ts; also run by `npm pack`
 * / `npm publish` through `prepack`):
 * - lib/ → dist/ with tsc (tsconfig.build.json): ESM `.js`, `.d.ts` and source maps per module,
 *   for the entry points `sqs-jobs`, `/worker`, `/client`, `/cdk`, `/ops` and `/testing`.
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
import { consoleAssetSources } from '../console/assets.ts';

/**
 * Builds dist/ of the package at `root` (a directory URL ending in `/`), from scratch.
 * @returns the exit code: 0 built, else tsc's (its errors are on the inherited stderr).
 * @throws what esbuild throws when a bundle fails (its errors are logged first).
 */
export async function buildPackage(root: URL): Promise<number> {
  rmSync(new URL('dist', root), { recursive: true, force: true });
  const tsc = spawnSync('tsc', ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (tsc.status !== 0) return tsc.status ?? 1;
  await bundleCli(root);
  await copyConsolePage(root);
  return 0;
}

/** The `sqs-jobs` CLI and the function thread → dist/bin/, the package's declared packages external. */
async function bundleCli(root: URL): Promise<void> {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
  };
  const external = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)].flatMap(
    (name) => [name, `${name}/*`],
  );
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
}

/** The console's page → dist/console/: copied as it is, except uPlot (145 KB as published), minified. */
async function copyConsolePage(root: URL): Promise<void> {
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
}
