/**
 * What the minimal worker's bundle is made of (issue 21: bundle bytes), for deciding what to cut:
 * `node --import tsx bench/bundle-parts.ts [count]`. Bundles bench/workers/ours-lean.ts (the worker
 * from `sqs-jobs/worker`, no optional feature), bench/workers/ours-minimal.ts (the same from
 * `sqs-jobs`, every feature) and bench/workers/powertools-minimal.ts as bench/cold-start.ts does
 * (a user's esbuild: one minified ESM file, only the AWS SDK external) and prints, as JSON:
 * - `sizes`: the bundles' bytes and their ratios to Powertools' (`lean` is the target's row);
 * - `features`: what each feature of `sqs-jobs/worker` adds to the lean worker, alone (bytes; the
 *   table of docs/own-app.md, "Smaller bundles");
 * - `largest`: the largest inputs of the lean worker, bytes in the output, and what imports each
 *   (`(dynamic)` marks a dynamic import: esbuild without splitting inlines it, so it saves no bytes);
 * - `without`: what the full worker would weigh with groups of modules left out, cumulatively (each module
 *   of a group replaced by an empty one, so the bundle builds but would not run): the bytes a
 *   feature costs a worker that does not use it, were it opt-in. Figures, not assertions.
 */
import type { Plugin } from 'esbuild';
import { bundle, ENTRY } from './cold-start.ts';

const root = new URL('../', import.meta.url).pathname;

/** Feature groups, cumulative: each step leaves out its modules and those of the steps before. */
const GROUPS: readonly { readonly name: string; readonly modules: RegExp }[] = [
  {
    name: 'children and batch starts sent through lib/client (ctx.enqueue, ctx.startBatch)',
    modules: /^lib\/client\//,
  },
  {
    name: 'batches (counting, ledger, watchdog)',
    modules: /^lib\/runtime\/batches\/|^lib\/core\/batch\.ts$/,
  },
  {
    name: 'limits (concurrency, rate limits), raw producers, jobs sent for later',
    modules:
      /^lib\/runtime\/limits\/(store|buckets|slots|table|take)\.ts$|^lib\/runtime\/record\/(limit-wait|concurrency-slot|scheduled)\.ts$|raw-messages\.ts$|scheduled-job/,
  },
  {
    name: 'FIFO group parking, lineage, the children collector',
    modules: /group-park|group-store|group-record|parked-group|lineage\.ts$|children\.ts$/,
  },
];

function leaveOut(modules: readonly RegExp[]): Plugin {
  return {
    name: 'leave-out',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) =>
        modules.some((m) => m.test(args.path.slice(root.length)))
          ? { contents: 'module.exports = {}', loader: 'js' }
          : undefined,
      );
    },
  };
}

/** The features of `sqs-jobs/worker`, as it exports them. */
const FEATURES = ['children', 'batches', 'limits', 'groupParking', 'scheduledJobs', 'rawMessages'] as const;

/** A plugin serving `virtual:lean` (ours-lean.ts's shape, a trivial job) with `features` given. */
function leanWith(features: readonly string[]): Plugin {
  return {
    name: 'lean-with',
    setup(build) {
      build.onResolve({ filter: /^virtual:lean$/ }, () => ({ path: 'lean', namespace: 'virtual' }));
      build.onLoad({ filter: /.*/, namespace: 'virtual' }, () => ({
        contents: `import { createWorker, defineJob${features.map((f) => `, ${f}`).join('')} } from './lib/worker.ts';
const job = defineJob({ type: 'bench.compute', queue: 'bench', schema: { '~standard': { version: 1, vendor: 'bench', validate: (value) => ({ value }) } }, run: async () => ({}) });
export const handler = createWorker({ jobs: [job], features: [${features.join(', ')}] });`,
        loader: 'js',
        resolveDir: root,
      }));
    },
  };
}

const count = Number(process.argv[2] ?? 30);
const full = await bundle(ENTRY.full, undefined, false);
const ours = await bundle(ENTRY.lean, undefined, false);
const powertools = await bundle(ENTRY.powertools, undefined, false);
const bare = (await bundle('virtual:lean', undefined, false, [leanWith([])])).bytes;
const features: { feature: string; bytes: number }[] = [];
for (const feature of FEATURES) {
  const { bytes } = await bundle('virtual:lean', undefined, false, [leanWith([feature])]);
  features.push({ feature, bytes: bytes - bare });
}
const importers = new Map<string, string[]>();
for (const [file, input] of Object.entries(ours.metafile.inputs)) {
  for (const { path, kind } of input.imports) {
    importers.set(path, [
      ...(importers.get(path) ?? []),
      kind === 'dynamic-import' ? `${file} (dynamic)` : file,
    ]);
  }
}
const inputs = Object.values(ours.metafile.outputs).flatMap((output) => Object.entries(output.inputs));
const largest = inputs
  .map(([input, { bytesInOutput }]) => ({
    input,
    bytes: bytesInOutput,
    importedBy: importers.get(input) ?? [],
  }))
  .sort((a, b) => b.bytes - a.bytes)
  .slice(0, count);
const without: { leftOut: string; bytes: number; ratio: number }[] = [];
for (let i = 0; i < GROUPS.length; i++) {
  const { bytes } = await bundle(ENTRY.full, undefined, false, [
    leaveOut(GROUPS.slice(0, i + 1).map((g) => g.modules)),
  ]);
  without.push({ leftOut: GROUPS[i]!.name, bytes, ratio: bytes / powertools.bytes });
}
process.stdout.write(
  `${JSON.stringify(
    {
      sizes: {
        lean: ours.bytes,
        full: full.bytes,
        powertools: powertools.bytes,
        ratio: ours.bytes / powertools.bytes,
        ratioFull: full.bytes / powertools.bytes,
        target: 1.3,
      },
      features,
      largest,
      without,
    },
    null,
    2,
  )}\n`,
);
