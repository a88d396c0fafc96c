/**
 * Cold start, bundle size and heap of a minimal worker, side by side with Powertools (issues 10
 * and 21, part of `npm run bench`). Three subjects, the same job (bench/workers/order-job.ts):
 * - `lean`: the worker from the lean entry `sqs-jobs/worker` with no optional feature
 *   (bench/workers/ours-lean.ts): the minimal worker a user bundles, the subject of issue 21's
 *   bundle, cold-start and heap targets;
 * - `full`: the same worker from `sqs-jobs`, every feature (bench/workers/ours-minimal.ts): rows
 *   of their own, without target, so what the features cost at cold start stays in sight;
 * - `powertools`: bench/workers/powertools-minimal.ts.
 *
 * - Bundle: each worker bundled as a user's bundler would, with esbuild's defaults for a Lambda
 *   (one output file, no splitting, nothing marked external but the AWS SDK, which is in the
 *   Lambda runtime), minified ESM for Node 24, no schema library; bytes of the output. Whatever
 *   the runtime imports is in it: a tracer it imports is counted (issue 21).
 * - Cold start, in fresh Node processes (no flags, as Lambda starts them without
 *   `NODE_OPTIONS`), the three subjects in turn with Powertools always in the middle and the
 *   order flipped each round (so each of ours ran right before or right after Powertools):
 *   `import` of the bundle (ms from the start of the script to the module evaluated: Lambda's
 *   init phase), and init to first response (to the handler's answer to a first batch of 10 new
 *   records, the idempotency store's first DynamoDB calls on dynalite included); the same as CPU
 *   time of the process (user + system), less sensitive to other load on the machine. Median
 *   over rounds, ratio = median of per-round ratios. Both sides load `@aws-sdk/client-dynamodb`,
 *   about nine tenths of the import's CPU time, so the ratios sit near 1 and a round's noise is
 *   large against the gap: hence many rounds (bench/README.md, "Cold start"). A row beside them,
 *   without target, imports each bundle with those SDK packages loaded first: the cost of the
 *   worker's own code.
 * - Heap: in a fresh process per subject and round (`--expose-gc`), 2,000 warm invocations of a
 *   batch of 10 without a store (`BENCH_NO_STORE=1`: thousands of records need no table), then a
 *   full GC: `heapUsed` after 2,000, and growth per invocation from 1,000 to 2,000.
 * - Deployed workers: functions/*.ts bundled with JobQueue's settings (minified ESM, names kept,
 *   AWS SDK bundled, the tracer in its own file, source map), bundle and map bytes (ours only:
 *   there is no Powertools build of the sample), and the bytes of that tracer file.
 * Figures, not assertions.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { build, type Metafile, type Plugin } from 'esbuild';
import { TRACER_PACKAGE, tracerEntryPath } from '../lib/constructs/job-queue/tracer-bundle.ts';
import { jobBody, queueUrl, sqsEvent, sqsRecord } from '../test/factories/sqs.ts';
import { createClient, createTable, startDynalite } from '../test/support/dynalite.ts';
import { median, roundRatios, spread } from './stats.ts';
import type { ComparisonRow } from './vs-powertools.ts';

const root = new URL('../', import.meta.url).pathname;

export interface ColdStartOptions {
  /** Fresh processes per side for the cold-start rows. */
  readonly coldRounds: number;
  /** Fresh processes per side for the heap row. */
  readonly heapRounds: number;
  /** Fresh processes per side for the import of the worker's own code (the SDK loaded first). */
  readonly ownRounds: number;
}

/** A figure of ours alone (no Powertools counterpart): the deployed sample workers. */
export interface Figure {
  readonly measure: string;
  readonly unit: string;
  readonly ours: number;
}

/** What a cold-start or heap process runs: ours from either entry, or Powertools. */
export type Subject = 'lean' | 'full' | 'powertools';
/** Ours: the subjects compared with Powertools. */
export type OurSubject = Exclude<Subject, 'powertools'>;
export const ENTRY: Record<Subject, string> = {
  lean: 'bench/workers/ours-lean.ts',
  full: 'bench/workers/ours-minimal.ts',
  powertools: 'bench/workers/powertools-minimal.ts',
};
const OURS: readonly OurSubject[] = ['lean', 'full'];
const SUBJECTS: readonly Subject[] = [...OURS, 'powertools'];
const perSubject = <T>(make: () => T): Record<Subject, T> =>
  Object.fromEntries(SUBJECTS.map((s) => [s, make()])) as Record<Subject, T>;

/**
 * The subjects of `round` in the order they run: Powertools always in the middle, so each of ours
 * ran right next to it, and the order flipped every other round (neither of ours always first).
 */
export function subjectOrder(round: number): Subject[] {
  return round % 2 === 0 ? ['lean', 'powertools', 'full'] : ['full', 'powertools', 'lean'];
}

/** How the rows name each of ours. */
const LABEL: Record<OurSubject, string> = {
  lean: 'sqs-jobs/worker (no optional feature)',
  full: 'sqs-jobs (every feature)',
};

/** The measures of the cold-start and heap rows, per subject of ours (bench/targets.ts reads them). */
export const coldStartMeasure = {
  importMs: (s: OurSubject) => `cold start, ${LABEL[s]}: import of the bundle (fresh process)`,
  firstResponseMs: (s: OurSubject) =>
    `cold start, ${LABEL[s]}: init to first response, batch of 10 new records, store on dynalite`,
  importCpuMs: (s: OurSubject) => `cold start, ${LABEL[s]}: import of the bundle, CPU time`,
  ownImportCpuMs: (s: OurSubject) =>
    `cold start, ${LABEL[s]}: import of the bundle with the AWS SDK already loaded (the worker's own code), CPU time`,
  firstResponseCpuMs: (s: OurSubject) => `cold start, ${LABEL[s]}: init to first response, CPU time`,
  heapAfter: (s: OurSubject) =>
    `heap, ${LABEL[s]}: after 2,000 warm invocations (batches of 10, no store), after full GC`,
  heapGrowth: (s: OurSubject) => `heap growth, ${LABEL[s]}: per invocation, invocations 1,000 to 2,000`,
  bundle: (s: OurSubject) =>
    `bundle of ${s === 'lean' ? 'a minimal worker' : 'the same worker'} from ${LABEL[s]}, minified, AWS SDK external, no schema library`,
} as const;

/**
 * esbuild options of the minimal workers (what a user's bundler does), and of JobQueue's deployed
 * ones; `plugins` for bench/bundle-parts.ts, which weighs the bundle with modules left out.
 */
export async function bundle(
  entry: string,
  outfile: string | undefined,
  deployed: boolean,
  plugins: Plugin[] = [],
): Promise<{ bytes: number; mapBytes: number; metafile: Metafile }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    metafile: true,
    write: outfile !== undefined,
    ...(outfile !== undefined ? { outfile } : { outdir: join(tmpdir(), 'sqs-jobs-bench-unused') }),
    ...(deployed
      ? {
          external: [TRACER_PACKAGE],
          keepNames: true,
          sourcemap: true,
          mainFields: ['module', 'main'],
          banner: {
            js: "import { createRequire as __sqsJobsCreateRequire } from 'node:module'; const require = __sqsJobsCreateRequire(import.meta.url);",
          },
        }
      : {
          external: ['@aws-sdk/*'],
          banner: {
            js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);",
          },
        }),
    logLevel: 'silent',
    plugins,
  });
  let bytes = 0;
  let mapBytes = 0;
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (file.endsWith('.map')) mapBytes += output.bytes;
    else bytes += output.bytes;
  }
  return { bytes, mapBytes, metafile: result.metafile };
}

/** The largest inputs of a bundle by bytes in the output (for finding what to cut). */
export function topInputs(metafile: Metafile, count: number): { input: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const pkg = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? input;
      totals.set(pkg, (totals.get(pkg) ?? 0) + bytesInOutput);
    }
  }
  return [...totals.entries()]
    .map(([input, bytes]) => ({ input, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, count);
}

/** The child of a cold-start or heap measurement: plain ESM, run by a fresh `node`. */
const CHILD = `
const started = performance.now();
const [bundle, eventsFile, mode] = process.argv.slice(2);
const { readFileSync } = await import('node:fs');
const report = (value) => process.stderr.write('BENCH_RESULT ' + JSON.stringify(value) + '\\n');
const context = {
  functionName: 'bench', functionVersion: '$LATEST', memoryLimitInMB: '512',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:bench',
  awsRequestId: 'r-0', logGroupName: '/aws/lambda/bench', logStreamName: 's',
  callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 60000,
  done() {}, fail() {}, succeed() {},
};
const events = JSON.parse(readFileSync(eventsFile, 'utf8'));
const cpuMs = (usage) => (usage.user + usage.system) / 1000;
if (mode === 'own') {
  // The AWS SDK packages the bundles import (both sides'), loaded before the clock starts: what is
  // left is the cost of the worker's own code.
  await import('@aws-sdk/client-dynamodb');
  await import('@aws-sdk/util-dynamodb');
}
const beforeImport = performance.now();
const cpuBeforeImport = process.cpuUsage();
const { handler } = await import(bundle);
const imported = performance.now();
const importCpuMs = cpuMs(process.cpuUsage(cpuBeforeImport));
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = () => true;
if (mode === 'own') {
  report({ importCpuMs });
} else if (mode === 'error') {
  // A first error stack from inside the bundle: the worker's configuration error (no idempotency
  // table), logged at ERROR with its stack, every record reported failed.
  const before = performance.now();
  const response = await handler(events[0], context);
  const after = performance.now();
  process.stdout.write = write;
  if (response.batchItemFailures.length !== events[0].Records.length) throw new Error('error: expected every record failed');
  report({ importMs: imported - beforeImport, errorMs: after - before });
} else if (mode === 'cold') {
  const response = await handler(events[0], context);
  const responded = performance.now();
  process.stdout.write = write;
  if (response.batchItemFailures.length > 0) throw new Error('cold: records failed ' + JSON.stringify(response));
  report({
    importMs: imported - beforeImport,
    firstResponseMs: responded - beforeImport,
    importCpuMs,
    firstResponseCpuMs: cpuMs(process.cpuUsage(cpuBeforeImport)),
  });
} else {
  const heapAt = async (n) => {
    for (let i = 0; i < n; i++) {
      const response = await handler(events[i % events.length], context);
      if (response.batchItemFailures.length > 0) throw new Error('heap: records failed');
    }
    globalThis.gc(); globalThis.gc();
    return process.memoryUsage().heapUsed;
  };
  const after1000 = await heapAt(1000);
  const after2000 = await heapAt(1000);
  process.stdout.write = write;
  report({ heapAfter2000: after2000, growthPerInvocation: (after2000 - after1000) / 1000 });
}
`;

/** What a cold child reports (ms from the start of the import; CPU of the process over the same span). */
const COLD_FIGURES = ['importMs', 'firstResponseMs', 'importCpuMs', 'firstResponseCpuMs'] as const;
type ColdFigure = (typeof COLD_FIGURES)[number];

interface ChildResult {
  readonly importMs?: number;
  readonly importCpuMs?: number;
  readonly firstResponseCpuMs?: number;
  readonly errorMs?: number;
  readonly firstResponseMs?: number;
  readonly heapAfter2000?: number;
  readonly growthPerInvocation?: number;
}

function runChild(args: readonly string[], env: NodeJS.ProcessEnv): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stderr.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`bench child exited ${code}: ${stderr.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(line.slice('BENCH_RESULT '.length)) as ChildResult);
    });
  });
}

function pairedRow(measure: string, unit: string, ours: number[], theirs: number[]): ComparisonRow {
  const ratios = roundRatios(ours, theirs);
  return {
    measure,
    unit,
    ours: median(ours),
    powertools: median(theirs),
    ratio: median(ratios),
    oursSpread: spread(ours),
    powertoolsSpread: spread(theirs),
    ratioSpread: spread(ratios),
  };
}

/** Batches of 10 new records with CloudEvents bodies, as JSON for the children. */
function eventsJson(count: number): string {
  const events: SQSEvent[] = Array.from({ length: count }, (_, b) =>
    sqsEvent(
      Array.from({ length: 10 }, (_, i) => {
        const userId = `user-${i}`;
        return sqsRecord({
          queue: 'bench',
          body: jobBody(
            'bench.compute',
            { orderId: `order-${b}-${i}-${process.pid}`, userId, amountCents: 1000 + i },
            {
              partitionKey: userId,
            },
          ),
        });
      }),
    ),
  );
  return JSON.stringify(events);
}

/**
 * Heap growth per invocation: a per-round ratio of two figures near zero (a few bytes either way,
 * after a full GC) says nothing, so when both medians are under 100 bytes the row's ratio is 1
 * and it carries no per-round ratio spread; each side's figures and spread stay.
 */
function heapGrowthRow(s: OurSubject, ours: number[], theirs: number[]): ComparisonRow {
  const row = pairedRow(coldStartMeasure.heapGrowth(s), 'bytes/invocation', ours, theirs);
  if (Math.abs(row.ours) >= 100 || Math.abs(row.powertools) >= 100) {
    return { ...row, ratio: row.ours / row.powertools };
  }
  const { ratioSpread: _noSpread, ...rest } = row;
  return { ...rest, ratio: 1 };
}

/**
 * Bundle, cold-start and heap rows of the minimal workers. Bundles are written to a temporary
 * directory that links the project's node_modules (the AWS SDK stays external).
 */
export async function coldStartRows(options: ColdStartOptions): Promise<ComparisonRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sqs-jobs-bench-'));
  const dynamo = await startDynalite();
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    mkdirSync(join(dir, 'out'));
    const bundles = {} as Record<Subject, { file: string; bytes: number }>;
    for (const subject of SUBJECTS) {
      const file = join(dir, 'out', `${subject}.mjs`);
      const { bytes } = await bundle(ENTRY[subject], file, false);
      bundles[subject] = { file, bytes };
    }
    const childFile = join(dir, 'child.mjs');
    writeFileSync(childFile, CHILD);
    const oursTable = await createTable(dynamo.client);
    const theirsTable = await createTable(createClient(dynamo.endpoint), { partitionKey: 'id' });
    const baseEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL: dynamo.endpoint,
      AWS_LAMBDA_FUNCTION_NAME: 'bench',
      POWERTOOLS_SERVICE_NAME: 'bench',
      POWERTOOLS_METRICS_NAMESPACE: 'SqsJobsBench',
      JOBS_QUEUE_NAME: 'bench',
      JOBS_QUEUE_URL: queueUrl('bench'),
      JOBS_DLQ_URL: queueUrl('bench-dlq'),
      JOBS_IDEMPOTENCY_TABLE: oursTable,
      IDEMPOTENCY_TABLE: theirsTable,
    };

    const cold = perSubject(
      (): Record<ColdFigure, number[]> => ({
        importMs: [],
        firstResponseMs: [],
        importCpuMs: [],
        firstResponseCpuMs: [],
      }),
    );
    for (let round = 0; round < options.coldRounds; round++) {
      for (const subject of subjectOrder(round)) {
        // New records each process: a first delivery, not a duplicate.
        const eventsFile = join(dir, `events-${subject}-${round}.json`);
        writeFileSync(eventsFile, eventsJson(1));
        const result = await runChild([childFile, bundles[subject].file, eventsFile, 'cold'], baseEnv);
        for (const figure of COLD_FIGURES) cold[subject][figure].push(result[figure] as number);
      }
    }

    // The same import with the SDK loaded first, fewer rounds: a figure beside the target's, not one.
    const own = perSubject(() => [] as number[]);
    const ownEvents = join(dir, 'events-own.json');
    writeFileSync(ownEvents, eventsJson(1));
    for (let round = 0; round < options.ownRounds; round++) {
      for (const subject of subjectOrder(round)) {
        const result = await runChild([childFile, bundles[subject].file, ownEvents, 'own'], baseEnv);
        own[subject].push(result.importCpuMs as number);
      }
    }

    const heap = perSubject(() => ({ after: [] as number[], growth: [] as number[] }));
    const heapEvents = join(dir, 'events-heap.json');
    writeFileSync(heapEvents, eventsJson(100));
    for (let round = 0; round < options.heapRounds; round++) {
      for (const subject of subjectOrder(round)) {
        const result = await runChild(['--expose-gc', childFile, bundles[subject].file, heapEvents, 'heap'], {
          ...baseEnv,
          BENCH_NO_STORE: '1',
        });
        heap[subject].after.push((result.heapAfter2000 as number) / 2 ** 20);
        heap[subject].growth.push(result.growthPerInvocation as number);
      }
    }

    const theirs = bundles.powertools.bytes;
    const rowsOf = (s: OurSubject): ComparisonRow[] => [
      {
        measure: coldStartMeasure.bundle(s),
        unit: 'KiB',
        ours: bundles[s].bytes / 1024,
        powertools: theirs / 1024,
        ratio: bundles[s].bytes / theirs,
      },
      ...COLD_FIGURES.map((figure) =>
        pairedRow(
          coldStartMeasure[figure](s),
          figure.endsWith('CpuMs') ? 'ms CPU' : 'ms',
          cold[s][figure],
          cold.powertools[figure],
        ),
      ),
      pairedRow(coldStartMeasure.ownImportCpuMs(s), 'ms CPU', own[s], own.powertools),
      pairedRow(coldStartMeasure.heapAfter(s), 'MiB', heap[s].after, heap.powertools.after),
      heapGrowthRow(s, heap[s].growth, heap.powertools.growth),
    ];
    return OURS.flatMap(rowsOf);
  } finally {
    await dynamo.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bundle and source-map bytes of each deployed sample worker (functions/*.ts) with JobQueue's settings. */
export async function deployedWorkerFigures(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const name of ['booking', 'notifications', 'payments']) {
    const { bytes, mapBytes } = await bundle(`functions/${name}.ts`, undefined, true);
    figures.push({
      measure: `deployed worker functions/${name}.ts, bundle`,
      unit: 'KiB',
      ours: bytes / 1024,
    });
    figures.push({
      measure: `deployed worker functions/${name}.ts, source map`,
      unit: 'KiB',
      ours: mapBytes / 1024,
    });
  }
  // Built as JobQueue's afterBundling hook builds it (lib/constructs/job-queue/tracer-bundle.ts).
  const tracer = await build({
    entryPoints: [tracerEntryPath()],
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
  });
  figures.push({
    measure: 'deployed worker, xray-tracer.mjs beside the bundle (read on the first sampled invocation)',
    unit: 'KiB',
    ours: (tracer.outputFiles[0]?.contents.byteLength ?? 0) / 1024,
  });
  return figures;
}

/**
 * The cost of source maps in a deployed worker (functions/payments.ts bundled with JobQueue's
 * settings, its map next to it): fresh processes with and without `--enable-source-maps`,
 * alternating; import time, and the first invocation whose error is logged with its stack (the
 * worker's configuration error: no idempotency table). Medians over `rounds`.
 */
export async function sourceMapFigures(rounds: number): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sqs-jobs-bench-maps-'));
  try {
    const file = join(dir, 'index.mjs');
    await bundle('functions/payments.ts', file, true);
    const childFile = join(dir, 'child.mjs');
    writeFileSync(childFile, CHILD);
    const eventsFile = join(dir, 'events.json');
    writeFileSync(eventsFile, eventsJson(1));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_LAMBDA_FUNCTION_NAME: 'bench',
      JOBS_QUEUE_NAME: 'payments',
      JOBS_QUEUE_URL: queueUrl('payments'),
      JOBS_DLQ_URL: queueUrl('payments-dlq'),
    };
    const runs = {
      on: { importMs: [] as number[], errorMs: [] as number[] },
      off: { importMs: [] as number[], errorMs: [] as number[] },
    };
    for (let round = 0; round < rounds; round++) {
      const order: ('on' | 'off')[] = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      for (const maps of order) {
        const args = [
          ...(maps === 'on' ? ['--enable-source-maps'] : []),
          childFile,
          file,
          eventsFile,
          'error',
        ];
        const result = await runChild(args, env);
        runs[maps].importMs.push(result.importMs as number);
        runs[maps].errorMs.push(result.errorMs as number);
      }
    }
    return [
      {
        measure: 'deployed worker, import, with --enable-source-maps',
        unit: 'ms',
        ours: median(runs.on.importMs),
      },
      {
        measure: 'deployed worker, import, without source maps',
        unit: 'ms',
        ours: median(runs.off.importMs),
      },
      {
        measure: 'deployed worker, first invocation logging an error stack, with --enable-source-maps',
        unit: 'ms',
        ours: median(runs.on.errorMs),
      },
      {
        measure: 'deployed worker, first invocation logging an error stack, without source maps',
        unit: 'ms',
        ours: median(runs.off.errorMs),
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
