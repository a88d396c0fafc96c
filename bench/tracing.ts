/**
 * What X-Ray tracing costs the worker (part of `npm run bench`; `node --import tsx bench/tracing.ts`
 * alone). Figures, not assertions.
 *
 * - CPU per record (`process.cpuUsage`, user + system), standard batch of 10, no store, a no-op
 *   job, the default Logger at ERROR: tracing off (no `_X_AMZN_TRACE_ID`, as outside Lambda or
 *   without a trace header), an unsampled invocation (`Sampled=0`: most invocations of a traced
 *   function), and a sampled one (`Sampled=1`: one subsegment per record, sent by UDP to a
 *   local sink standing in for the X-Ray daemon). The sides alternate batch by batch, the order
 *   flipped every round; the figure is the median over rounds, with the spread.
 * - The first sampled invocation: the Powertools Tracer (and the X-Ray SDK) imported then, once.
 * - Bytes: a minimal worker bundle with the tracer (as deployed: imported on first use, so in the
 *   bundle but not evaluated at init) and with the tracer left out.
 *
 * The measurement runs in a child process whose environment looks like Lambda's
 * (`AWS_EXECUTION_ENV`, `LAMBDA_TASK_ROOT`, `AWS_XRAY_DAEMON_ADDRESS`): the X-Ray SDK decides
 * its Lambda mode when it is loaded.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const BATCH_SIZE = 10;
const ROUNDS = 7;
const BATCHES_PER_ROUND = 400;
const WARMUP_BATCHES = 1000;

/** One row of the tracing figures. */
export interface TracingRow {
  readonly measure: string;
  readonly unit: string;
  readonly value: number;
  readonly spread?: readonly [number, number];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** The child: builds the worker, measures, prints one JSON line of rows. */
async function child(): Promise<void> {
  const { Logger } = await import('@aws-lambda-powertools/logger');
  const { z } = await import('zod');
  const { defineJob } = await import('../lib/runtime/job.ts');
  const { createWorker } = await import('../lib/runtime/worker.ts');
  const { FakeSqs } = await import('../test/factories/fake-sqs.ts');
  const { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } = await import('../test/factories/sqs.ts');

  const noop = defineJob({
    type: 'bench.noop',
    queue: 'bench',
    schema: z.object({ orderId: z.string() }),
    run: async () => ({ ok: true }),
  });
  const handler = createWorker({
    jobs: [noop],
    queueName: 'bench',
    queueUrl: queueUrl('bench'),
    dlqUrl: queueUrl('bench-dlq'),
    idempotency: false,
    sqs: new FakeSqs(),
    logger: new Logger({ serviceName: 'bench', logLevel: 'ERROR' }),
  });
  let sequence = 0;
  const event = () =>
    sqsEvent(
      Array.from({ length: BATCH_SIZE }, () =>
        sqsRecord({ queue: 'bench', body: jobBody(noop.type, { orderId: `o-${++sequence}` }) }),
      ),
    );
  const root = '1-5759e988-bd862e3fe1be46a994272793';
  const modes = {
    off: undefined,
    unsampled: `Root=${root};Parent=53995c3f42cd8ad8;Sampled=0;Lineage=1a2b3c4d:1`,
    sampled: `Root=${root};Parent=53995c3f42cd8ad8;Sampled=1;Lineage=1a2b3c4d:1`,
  } as const;
  type Mode = keyof typeof modes;
  const setMode = (mode: Mode) => {
    const header = modes[mode];
    if (header === undefined) delete process.env._X_AMZN_TRACE_ID;
    else process.env._X_AMZN_TRACE_ID = header;
  };
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write; // EMF blobs
  try {
    setMode('sampled');
    const firstStarted = performance.now();
    await handler(event(), lambdaContext());
    const firstSampledMs = performance.now() - firstStarted;
    setMode('sampled');
    const secondStarted = performance.now();
    await handler(event(), lambdaContext());
    const secondSampledMs = performance.now() - secondStarted;
    const order: Mode[] = ['off', 'unsampled', 'sampled'];
    for (let i = 0; i < WARMUP_BATCHES; i++) {
      for (const mode of order) {
        setMode(mode);
        await handler(event(), lambdaContext());
      }
    }
    const perRecord: Record<Mode, number[]> = { off: [], unsampled: [], sampled: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const cpu: Record<Mode, number> = { off: 0, unsampled: 0, sampled: 0 };
      for (let b = 0; b < BATCHES_PER_ROUND; b++) {
        const sequenceOrder = (round + b) % 2 === 0 ? order : [...order].reverse();
        for (const mode of sequenceOrder) {
          const batch = event();
          setMode(mode);
          const before = process.cpuUsage();
          await handler(batch, lambdaContext());
          const used = process.cpuUsage(before);
          cpu[mode] += used.user + used.system;
        }
      }
      for (const mode of order) perRecord[mode].push(cpu[mode] / (BATCHES_PER_ROUND * BATCH_SIZE));
    }
    const rows: TracingRow[] = [];
    for (const mode of order) {
      rows.push({
        measure: `CPU per record, standard batch of 10, tracing ${mode === 'off' ? 'off (no trace header)' : mode === 'unsampled' ? 'on, invocation not sampled (Sampled=0)' : 'on, sampled (Sampled=1): a subsegment per record'}`,
        unit: 'µs',
        value: median(perRecord[mode]),
        spread: [Math.min(...perRecord[mode]), Math.max(...perRecord[mode])],
      });
    }
    const ratios = perRecord.sampled.map((v, i) => v / (perRecord.off[i] as number));
    rows.push({
      measure: 'sampled / off, per round',
      unit: '×',
      value: median(ratios),
      spread: [Math.min(...ratios), Math.max(...ratios)],
    });
    rows.push({
      measure: 'first sampled invocation (imports the tracer), batch of 10',
      unit: 'ms',
      value: firstSampledMs,
    });
    rows.push({ measure: 'second sampled invocation, batch of 10', unit: 'ms', value: secondSampledMs });
    write(`${JSON.stringify(rows)}\n`);
  } finally {
    process.stdout.write = write;
  }
}

/** A minimal worker bundle (esbuild, minified, ESM, SDK external), with or without the tracer. */
async function bundle(withTracer: boolean): Promise<Uint8Array> {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const result = await build({
    absWorkingDir: root,
    stdin: {
      contents:
        "import { createWorker, defineJob } from './lib/index.ts';\nexport const handler = createWorker({ jobs: [defineJob({ type: 'a.b', queue: 'a', schema: { '~standard': { version: 1, vendor: 'x', validate: (v) => ({ value: v }) } }, run: async () => {} })] });\n",
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    minify: true,
    write: false,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    // As JobQueue bundles: bundled CommonJS (the X-Ray SDK) calls require().
    banner: {
      js: "import { createRequire as __sqsJobsCreateRequire } from 'node:module'; const require = __sqsJobsCreateRequire(import.meta.url);",
    },
    external: ['@aws-sdk/*', ...(withTracer ? [] : ['@aws-lambda-powertools/tracer'])],
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.contents ?? new Uint8Array();
}

/** Median milliseconds to import `file` in a fresh Node process (the init phase's module load). */
function importMs(file: string, runs: number): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    times.push(
      Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })),
    );
  }
  return median(times);
}

/** Runs the child with a Lambda-like environment and a UDP sink; returns its rows plus the bundle sizes. */
export async function measureTracing(): Promise<TracingRow[]> {
  const sink = createSocket('udp4');
  let datagrams = 0;
  sink.on('message', () => {
    datagrams++;
  });
  await new Promise<void>((resolve) => sink.bind(0, '127.0.0.1', resolve));
  const { port } = sink.address() as AddressInfo;
  const taskRoot = mkdtempSync(join(tmpdir(), 'sqs-jobs-bench-tracing-'));
  const cleanups = [taskRoot];
  try {
    const { stdout: out } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
          AWS_LAMBDA_FUNCTION_NAME: 'bench',
          LAMBDA_TASK_ROOT: taskRoot,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'bench',
          AWS_SECRET_ACCESS_KEY: 'bench',
          AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${port}`,
          AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
          POWERTOOLS_SERVICE_NAME: 'bench',
        },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const rows = JSON.parse(out.trim().split('\n').at(-1) ?? '[]') as TracingRow[];
    await new Promise((r) => setTimeout(r, 200));
    rows.push({ measure: 'subsegments received by the UDP sink', unit: 'documents', value: datagrams });
    const [withTracer, without] = [await bundle(true), await bundle(false)];
    // Inside the project, so the AWS SDK (external, as on Lambda) resolves from its node_modules.
    const bundles = mkdtempSync(fileURLToPath(new URL('../.bench-tracing-', import.meta.url)));
    cleanups.push(bundles);
    const withFile = join(bundles, 'with-tracer.mjs');
    const withoutFile = join(bundles, 'without-tracer.mjs');
    writeFileSync(withFile, withTracer);
    writeFileSync(withoutFile, without);
    rows.push({
      measure: 'minimal worker bundle, tracer included (imported on first use)',
      unit: 'KB',
      value: withTracer.byteLength / 1000,
    });
    rows.push({
      measure: 'minimal worker bundle, tracer left out',
      unit: 'KB',
      value: without.byteLength / 1000,
    });
    // Interleaved, so a slow moment of the machine hits both alike.
    const withMs: number[] = [];
    const withoutMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      withMs.push(importMs(withFile, 3));
      withoutMs.push(importMs(withoutFile, 3));
    }
    rows.push({
      measure: 'cold: import of that bundle, tracer included',
      unit: 'ms',
      value: median(withMs),
      spread: [Math.min(...withMs), Math.max(...withMs)],
    });
    rows.push({
      measure: 'cold: import of that bundle, tracer left out',
      unit: 'ms',
      value: median(withoutMs),
      spread: [Math.min(...withoutMs), Math.max(...withoutMs)],
    });
    return rows;
  } finally {
    sink.close();
    for (const dir of cleanups) rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints the rows as a table. */
export function printTracing(rows: readonly TracingRow[]): void {
  console.log('X-Ray tracing in the worker (bench/tracing.ts)');
  console.table(
    rows.map((r) => ({
      measure: r.measure,
      value: Number(r.value.toFixed(r.unit === 'ms' || r.unit === '×' ? 2 : 1)),
      unit: r.unit,
      spread: r.spread ? `${r.spread[0].toFixed(1)}–${r.spread[1].toFixed(1)}` : '',
    })),
  );
}

if (process.argv.includes('--child')) await child();
else if (process.argv[1] === fileURLToPath(import.meta.url)) printTracing(await measureTracing());
