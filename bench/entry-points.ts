/**
 * Sizes and bundle times of what users install and deploy (part of `npm run bench`):
 * - each entry point bundled as a user's bundler would (esbuild, minified, ESM, Node target,
 *   the AWS SDK external as on the Lambda runtime), its bytes and its bundle time (median of runs);
 * - a sample worker (functions/payments.ts: the runtime, the sample jobs and zod) against the
 *   runtime entry alone, as a ratio measured in the same run (the machine's speed cancels out);
 * - the packed tarball (`npm pack --dry-run`): size, unpacked size and file count.
 * Figures, not assertions.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';

const root = new URL('../', import.meta.url);
const RUNS = 5;

const ENTRIES = [
  { label: 'sqs-jobs (runtime)', file: 'lib/index.ts' },
  { label: 'sqs-jobs/client', file: 'lib/client/index.ts' },
  { label: 'sqs-jobs/ops', file: 'lib/ops/index.ts' },
  {
    label: 'sqs-jobs/cdk (aws-cdk-lib external)',
    file: 'lib/constructs/index.ts',
    external: ['aws-cdk-lib', 'constructs', 'cdk-nag'],
  },
  { label: 'sample worker functions/payments.ts', file: 'functions/payments.ts' },
] as const;

interface BundleFigure {
  readonly label: string;
  readonly bytes: number;
  readonly medianMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function bundleOnce(file: string, external: readonly string[]): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  const result = await build({
    absWorkingDir: new URL('.', root).pathname,
    entryPoints: [file],
    bundle: true,
    minify: true,
    write: false,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    external: ['@aws-sdk/*', ...external.flatMap((name) => [name, `${name}/*`])],
    logLevel: 'silent',
  });
  const ms = performance.now() - started;
  return { bytes: result.outputFiles.reduce((sum, f) => sum + f.contents.byteLength, 0), ms };
}

/** Bundles every entry RUNS times, interleaved so a slow moment of the machine hits all alike. */
async function bundleFigures(): Promise<BundleFigure[]> {
  const times = ENTRIES.map(() => [] as number[]);
  const bytes = ENTRIES.map(() => 0);
  for (let run = 0; run < RUNS; run++) {
    for (const [i, entry] of ENTRIES.entries()) {
      const figure = await bundleOnce(entry.file, 'external' in entry ? entry.external : []);
      times[i]?.push(figure.ms);
      bytes[i] = figure.bytes;
    }
  }
  return ENTRIES.map((entry, i) => ({
    label: entry.label,
    bytes: bytes[i] as number,
    medianMs: median(times[i] as number[]),
  }));
}

interface PackFigure {
  readonly size: number;
  readonly unpackedSize: number;
  readonly entryCount: number;
}

/** `npm pack --dry-run --json` of the package (runs the build through prepack). */
function packFigure(): PackFigure {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [pack] = JSON.parse(out.slice(out.indexOf('['))) as PackFigure[];
  if (pack === undefined) throw new Error('npm pack --dry-run printed no result');
  return pack;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Prints the entry-point and tarball figures. */
export async function printEntryPointFigures(): Promise<void> {
  const figures = await bundleFigures();
  console.log('\nentry points, bundled minified with the AWS SDK external (esbuild):');
  console.table(
    figures.map((f) => ({ entry: f.label, size: kb(f.bytes), 'median bundle ms': f.medianMs.toFixed(0) })),
  );
  const runtime = figures[0] as BundleFigure;
  const worker = figures[figures.length - 1] as BundleFigure;
  console.log(
    `sample worker vs runtime alone: bundle time ${(worker.medianMs / runtime.medianMs).toFixed(2)}×, size ${(worker.bytes / runtime.bytes).toFixed(2)}× (zod and the sample jobs on top)`,
  );
  const pack = packFigure();
  console.log(
    `tarball: ${kb(pack.size)} packed, ${kb(pack.unpackedSize)} unpacked, ${pack.entryCount} files`,
  );
}
