/**
 * examples/cdk-app installed from the packed tarball, as a user's project: it typechecks
 * against the tarball's declarations, synthesizes clean under cdk-nag and the template
 * validator, and bundles each worker without CDK code. Then its synthesized stack runs on the
 * local runtime (this repo's lib/local) and the two producers send jobs to its queues:
 * examples/producer-js on the machine's Node 20 with `sqs-jobs/client`, and
 * examples/producer-python with boto3 and only the documented envelope. Every job completes.
 * Last, the CLI installed with the tarball runs the same app as a user would: `sqs-jobs local`
 * (its bundled local runtime and function threads, with the app's own fauxqs and dynalite),
 * `sqs-jobs send` and `sqs-jobs stats`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type AttributeValue, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deduplicationIdOf } from '../../lib/core/envelope.ts';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';
import type { LocalRuntimeDescription } from '../../lib/local/serve.ts';
import { parseJobRecord } from '../../lib/runtime/idempotency/record.ts';
import {
  CDK_SOURCE,
  cdkMarkersIn,
  consumerEnv,
  expectSuccess,
  kib,
  REPO_ROOT,
  report,
  run,
  seconds,
  sourceMapSources,
  tail,
  until,
  WORKER_BUNDLING,
  workerAssets,
} from './support.ts';

const { cdkApp, producerJs, producerPython, unpacked } = inject('consumers');
const STACK_NAME = 'SqsJobsExample';
const ASSEMBLY = join(cdkApp, 'cdk.out');
/** The machine's Node 20: what a producer service without the repo's bundled Node 24 runs on. */
const SYSTEM_NODE = '/usr/bin/node';
/** The Python of .ci/run's virtual environment (.ci/requirements.txt). */
const VENV_PYTHON = join(REPO_ROOT, '.ci', '.venv', 'bin', 'python');
const VENV_HINT =
  'create it as .ci/run does: python3 -m venv .ci/.venv && .ci/.venv/bin/pip install -r .ci/requirements.txt';

describe('examples/cdk-app installed from the tarball', () => {
  it('has sqs-jobs from the tarball: a copied package, not a link to the source tree', () => {
    const installed = join(cdkApp, 'node_modules', 'sqs-jobs');
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string };
    const shipped = JSON.parse(readFileSync(join(unpacked, 'package', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(pkg.version).toBe(shipped.version);
    expect(existsSync(join(installed, 'dist', 'index.js'))).toBe(true);
    // What npm recorded: the tarball, by file path.
    const lock = readFileSync(join(cdkApp, 'package-lock.json'), 'utf8');
    expect(lock).toMatch(/"resolved": "file:[^"]*sqs-jobs-[^"]*\.tgz"/);
  });

  it('typechecks: tsc --noEmit, types resolved from the tarball', async () => {
    const result = expectSuccess('tsc --noEmit', await run('npx', ['tsc', '--noEmit'], { cwd: cdkApp }));
    report(`cdk-app tsc --noEmit: ${seconds(result.ms)}`);
  });

  it("the tarball's declarations resolve completely, so the handler and job data are typed (not any)", async () => {
    // Checked with skipLibCheck off: an import in sqs-jobs's .d.ts that a consumer cannot
    // resolve would otherwise silently turn the types that use it into `any`.
    mkdirSync(join(cdkApp, 'type-checks'), { recursive: true });
    writeFileSync(
      join(cdkApp, 'type-checks', 'api.ts'),
      `import { JobClient } from 'sqs-jobs/client';
import { recordOrderStep } from '../jobs/orders.ts';
import { handler } from '../workers/orders.ts';

// @ts-expect-error a string is not an SQS event: the handler is typed, not any
void handler('not an SQS event', {} as never);
const response: Promise<{ batchItemFailures: { itemIdentifier: string }[] }> = handler({ Records: [] } as never, {} as never);
void response;
const client = new JobClient({ source: '/type-checks', queueUrls: {} });
// @ts-expect-error 'lost' is not an order step: send checks data against the job's schema type
void client.send(recordOrderStep, { orderId: 'o-1', step: 'lost' }, { partitionKey: 'c-1' });
`,
    );
    writeFileSync(
      join(cdkApp, 'type-checks', 'tsconfig.json'),
      JSON.stringify({
        extends: '../tsconfig.json',
        compilerOptions: { skipLibCheck: false },
        include: ['../bin', '../lib', '../workers', '../jobs', './api.ts'],
      }),
    );
    const result = await run('npx', ['tsc', '--noEmit', '-p', 'type-checks/tsconfig.json'], { cwd: cdkApp });
    report(`cdk-app tsc with skipLibCheck off: ${seconds(result.ms)}, exit ${result.code}`);
    expect(
      result.code,
      `tsc reported (an unresolvable import in sqs-jobs's declarations means a type its users need is missing from its dependencies):\n${tail(result.stdout, 30)}`,
    ).toBe(0);
  });

  it('synthesizes with cdk-nag and the template validator: no finding, no warning', async () => {
    const result = expectSuccess(
      'cdk synth',
      await run('npx', ['cdk', 'synth', '--quiet', '--no-notices'], { cwd: cdkApp }),
    );
    report(`cdk-app synth (cdk CLI, bundling included): ${seconds(result.ms)}`);
    const validation = JSON.parse(readFileSync(join(ASSEMBLY, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations?: { ruleName: string }[] }[];
    };
    expect(
      validation.pluginReports.flatMap((r) =>
        (r.violations ?? []).map((v) => `${r.pluginName} ${v.ruleName}`),
      ),
    ).toEqual([]);
    const metadata = JSON.parse(
      readFileSync(join(ASSEMBLY, `${STACK_NAME}.metadata.json`), 'utf8'),
    ) as Record<string, { type: string; data: unknown }[]>;
    const annotations = Object.entries(metadata).flatMap(([path, entries]) =>
      entries
        .filter((e) => e.type === 'aws:cdk:warning' || e.type === 'aws:cdk:error')
        .map((e) => `${path}: ${e.type} ${JSON.stringify(e.data)}`),
    );
    expect(annotations).toEqual([]);
    const template = JSON.parse(readFileSync(join(ASSEMBLY, `${STACK_NAME}.template.json`), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
    };
    const queues = Object.values(template.Resources).filter((r) => r.Type === 'AWS::SQS::Queue');
    // orders + its DLQ are FIFO, emails + its DLQ standard.
    expect(queues.map((q) => q.Properties?.FifoQueue === true).sort()).toEqual([false, false, true, true]);
  });

  it('bundles each worker from the installed package, without any aws-cdk-lib or constructs code', () => {
    const workers = workerAssets(ASSEMBLY, STACK_NAME);
    expect(workers.map((w) => w.queue).sort()).toEqual(['emails', 'orders']);
    for (const w of workers) {
      const code = readFileSync(w.entryFile, 'utf8');
      const sources = sourceMapSources(`${w.entryFile}.map`);
      report(`worker bundle ${w.queue}: ${kib(statSync(w.entryFile).size)} (${sources.length} source files)`);
      expect(cdkMarkersIn(code), `${w.queue}: CDK code in ${w.entryFile}`).toEqual([]);
      expect(sources.filter((s) => CDK_SOURCE.test(s))).toEqual([]);
      // The runtime came from the installed tarball, the jobs from the consumer's own files.
      expect(sources.some((s) => s.includes('node_modules/sqs-jobs/'))).toBe(true);
      expect(sources.some((s) => s.endsWith(`workers/${w.queue}.ts`))).toBe(true);
    }
  });

  it('bundles a worker in about the time of the runtime entry alone (printed, not asserted)', async () => {
    const esbuild = createRequire(join(cdkApp, 'package.json'))('esbuild') as typeof import('esbuild');
    /** The fastest of `runs` builds (a busy machine only ever adds time), and the bundle's size. */
    const bundle = async (
      input: { entryPoints: string[] } | { stdin: { contents: string } },
      runs: number,
    ) => {
      let best = Number.POSITIVE_INFINITY;
      let code = '';
      for (let i = 0; i < runs; i++) {
        const started = performance.now();
        const out = await esbuild.build({
          ...WORKER_BUNDLING,
          mainFields: [...WORKER_BUNDLING.mainFields],
          ...('stdin' in input
            ? { stdin: { ...input.stdin, resolveDir: cdkApp, sourcefile: 'runtime.mjs' } }
            : input),
          absWorkingDir: cdkApp,
          outdir: join(cdkApp, '.bundle-timing'),
          write: false,
        });
        best = Math.min(best, performance.now() - started);
        code = out.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
      }
      expect(cdkMarkersIn(code)).toEqual([]);
      return { ms: best, bytes: code.length };
    };
    try {
      await bundle({ stdin: { contents: "export * from 'sqs-jobs';" } }, 1); // starts esbuild's service
      const runtime = await bundle({ stdin: { contents: "export * from 'sqs-jobs';" } }, 3);
      const worker = await bundle({ entryPoints: ['workers/orders.ts'] }, 3);
      report(
        `esbuild, best of 3: runtime entry alone (sqs-jobs) ${seconds(runtime.ms)}, ${kib(runtime.bytes)}`,
      );
      report(`esbuild, best of 3: worker workers/orders.ts ${seconds(worker.ms)}, ${kib(worker.bytes)}`);
      report(
        `worker / runtime-alone: time ${(worker.ms / runtime.ms).toFixed(2)}, size ${(worker.bytes / runtime.bytes).toFixed(2)}`,
      );
    } finally {
      await esbuild.stop();
    }
  });
});

/** A job record of the idempotency table, as far as the test reads it. */
interface JobRow {
  readonly pk: string;
  readonly status: string;
  readonly jobType: string;
  readonly attempt: number;
  readonly acquiredAtMs: number;
  readonly completedAtMs: number | undefined;
  readonly result:
    | { jobId?: string; source?: string; orderId?: string; step?: string; customerId?: string }
    | undefined;
}

/** One job a producer reported as sent. */
interface SentJob {
  readonly id: string;
  readonly type: string;
  readonly queue: string;
  readonly messageId: string;
  readonly data: { orderId: string; step?: string };
  readonly partitionKey?: string | null;
  readonly deduplicationId?: string | null;
}

interface ProducerReport {
  readonly source: string;
  readonly sent: SentJob[];
  readonly failed: unknown[];
  readonly node?: string;
  readonly python?: string;
}

const str = (v: AttributeValue | undefined) => v?.S;

describe('producers → the consumer stack on the local runtime', () => {
  let rt: LocalRuntime;
  const logs: string[] = [];
  const producers: ProducerReport[] = [];
  let producerEnv: NodeJS.ProcessEnv;
  let firstSendAt = 0;

  beforeAll(async () => {
    // Fail, never skip, when what the producers run on is missing.
    const node = spawnSync(SYSTEM_NODE, ['-v'], { encoding: 'utf8' });
    if (!node.stdout?.startsWith('v20.')) {
      throw new Error(
        `producer-js must run on the machine's Node 20 at ${SYSTEM_NODE}; found ${node.stdout || node.error}`,
      );
    }
    if (!existsSync(VENV_PYTHON)) throw new Error(`${VENV_PYTHON} is missing: ${VENV_HINT}`);
    const imports = spawnSync(VENV_PYTHON, ['-c', 'import boto3, jsonschema, rfc3339_validator'], {
      encoding: 'utf8',
    });
    if (imports.status !== 0)
      throw new Error(`${VENV_PYTHON} lacks boto3/jsonschema (${imports.stderr.trim()}): ${VENV_HINT}`);

    const started = performance.now();
    rt = await startLocalRuntime({
      projectRoot: cdkApp,
      synthesize: 'never',
      functionLogs: (l) => logs.push(`[${l.functionLogicalId}] ${l.line}`),
    });
    report(`local runtime on the consumer's cdk.out: started in ${seconds(performance.now() - started)}`);
    producerEnv = consumerEnv({
      AWS_REGION: rt.region,
      AWS_DEFAULT_REGION: rt.region, // boto3 reads this one
      AWS_ACCESS_KEY_ID: rt.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: rt.credentials.secretAccessKey,
      AWS_ENDPOINT_URL: rt.endpoints.sqs,
      JOBS_QUEUE_URL_ORDERS: rt.queue('orders').url,
      JOBS_QUEUE_URL_EMAILS: rt.queue('emails').url,
    });
  });
  afterAll(async () => {
    await rt?.stop();
  });

  it('runs the FIFO orders queue and the standard emails queue of the stack', () => {
    expect(rt.queue('orders').url).toMatch(/\.fifo$/);
    expect(rt.queue('emails').url).not.toMatch(/\.fifo$/);
    expect(rt.workers.map((w) => w.jobQueueName).sort()).toEqual(['emails', 'orders']);
  });

  it('producer-js sends with sqs-jobs/client on Node 20', async () => {
    firstSendAt = Date.now();
    const result = expectSuccess(
      'producer-js',
      await run(SYSTEM_NODE, ['send-jobs.js', '--customers', '3'], { cwd: producerJs, env: producerEnv }),
    );
    const out = JSON.parse(result.stdout) as ProducerReport;
    report(`producer-js (${out.node}): ${out.sent.length} jobs sent in ${seconds(result.ms)}`);
    expect(out.node).toMatch(/^v20\./);
    expect(out.failed).toEqual([]);
    expect(out.sent.filter((s) => s.queue === 'orders')).toHaveLength(9);
    expect(out.sent.filter((s) => s.queue === 'emails')).toHaveLength(3);
    producers.push(out);
  });

  it('producer-python sends with boto3, each envelope checked against the schema, FIFO dedup ids as JobClient makes them', async () => {
    const result = expectSuccess(
      'producer-python',
      // A non-ASCII source: the dedup id must still be JobClient's (JSON text of [source, id, type, data]).
      await run(
        VENV_PYTHON,
        ['send_jobs.py', '--customers', '3', '--source', '/services/shop-python/zürich'],
        {
          cwd: producerPython,
          env: producerEnv,
        },
      ),
    );
    const out = JSON.parse(result.stdout) as ProducerReport;
    report(`producer-python (${out.python}): ${out.sent.length} jobs sent in ${seconds(result.ms)}`);
    expect(out.failed).toEqual([]);
    const fifo = out.sent.filter((s) => s.queue === 'orders');
    expect(fifo).toHaveLength(9);
    expect(out.sent.filter((s) => s.queue === 'emails')).toHaveLength(3);
    for (const s of fifo) {
      expect(s.deduplicationId).toBe(
        deduplicationIdOf({ source: out.source, id: s.id, type: s.type, data: s.data }),
      );
    }
    producers.push(out);
  });

  it('producer-python refuses an envelope the schema rejects, and sends nothing', async () => {
    const result = await run(VENV_PYTHON, ['send_jobs.py', '--source', ''], {
      cwd: producerPython,
      env: producerEnv,
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/does not match the envelope schema/);
    expect(result.stderr).toMatch(/source: '' should be non-empty/);
  });

  it('completes every job: COMPLETED in the idempotency table, none dead-lettered, each customer in order, receipts chained', async () => {
    expect(producers).toHaveLength(2);
    const table = rt.outputs.IdempotencyTableName;
    if (!table) throw new Error(`no IdempotencyTableName output: ${JSON.stringify(rt.outputs)}`);
    const keyOf = (source: string | undefined, id: string | undefined) => `${source}\n${id}`;
    const expected = new Map<string, { type: string; producer: string }>();
    const shippedOrders = new Set<string>();
    for (const p of producers) {
      for (const s of p.sent) {
        expected.set(keyOf(p.source, s.id), { type: s.type, producer: p.source });
        if (s.data.step === 'shipped') shippedOrders.add(s.data.orderId);
      }
    }
    const dlqs = rt.queues.filter((q) => q.deadLetterQueue !== undefined).map((q) => q.deadLetterQueue!);
    expect(dlqs).toHaveLength(2);

    const scan = async (): Promise<JobRow[]> => {
      const rows: JobRow[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const out = await rt.dynamodb.send(
          new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }),
        );
        for (const item of out.Items ?? []) {
          if (str(item.recordType) !== 'job') continue;
          // Read as the runtime reads it: derived fields (jobType, completedAtMs) are not stored.
          const record = parseJobRecord(item);
          rows.push({
            pk: record.pk,
            status: record.status,
            jobType: record.jobType,
            attempt: record.attempt,
            acquiredAtMs: record.acquiredAtMs,
            completedAtMs: record.completedAtMs,
            result: record.result === undefined ? undefined : (JSON.parse(record.result) as JobRow['result']),
          });
        }
        start = out.LastEvaluatedKey;
      } while (start);
      return rows;
    };
    const deadLettered = async () => {
      const depths = await Promise.all(dlqs.map((d) => rt.queueDepth(d.url)));
      return depths.reduce((sum, d) => sum + d.visible + d.notVisible + d.delayed, 0);
    };

    let rows: JobRow[] = [];
    const missing = () => {
      const done = new Set(
        rows.filter((r) => r.status === 'COMPLETED').map((r) => keyOf(r.result?.source, r.result?.jobId)),
      );
      const receipts = new Set(
        rows
          .filter(
            (r) =>
              r.status === 'COMPLETED' &&
              r.jobType === 'emails.send-receipt' &&
              r.result?.source === '/sqs-jobs/orders',
          )
          .map((r) => r.result?.orderId),
      );
      return [
        ...[...expected]
          .filter(([key]) => !done.has(key))
          .map(([key, job]) => `${job.type} ${JSON.stringify(key)}`),
        ...[...shippedOrders].filter((o) => !receipts.has(o)).map((o) => `chained receipt of ${o}`),
      ];
    };
    await until(
      async () => {
        const dead = await deadLettered();
        if (dead > 0) throw new Error(`${dead} job(s) dead-lettered\n${tail(logs.join('\n'), 40)}`);
        rows = await scan();
        return missing().length === 0;
      },
      {
        timeoutMs: 180_000,
        describe: () =>
          `jobs not completed: ${missing().join(', ')}\nrecords: ${rows.map((r) => `${r.jobType} ${r.status}`).join(', ')}\n${tail(logs.join('\n'), 40)}`,
      },
    );
    report(
      `${expected.size} sent + ${shippedOrders.size} chained jobs completed ${seconds(Date.now() - firstSendAt)} after the first send; runs beyond the first: ${rows.reduce((n, r) => n + r.attempt - 1, 0)}`,
    );
    await rt.waitUntilDrained({ timeoutMs: 120_000 });
    expect(await deadLettered()).toBe(0);
    for (const q of ['orders', 'emails']) {
      const depth = await rt.queueDepth(q);
      expect(depth.visible + depth.notVisible + depth.delayed, q).toBe(0);
    }
    expect(rows.filter((r) => r.status !== 'COMPLETED')).toEqual([]);

    // FIFO: a customer's step starts only after the previous one completed.
    const steps = ['placed', 'paid', 'shipped'];
    const byCustomer = new Map<string, JobRow[]>();
    for (const r of rows.filter((x) => x.jobType === 'orders.record-step')) {
      const list = byCustomer.get(r.result?.customerId ?? '') ?? [];
      list.push(r);
      byCustomer.set(r.result?.customerId ?? '', list);
    }
    expect(byCustomer.size).toBe(6);
    for (const [customer, list] of byCustomer) {
      list.sort((a, b) => steps.indexOf(a.result?.step ?? '') - steps.indexOf(b.result?.step ?? ''));
      expect(
        list.map((r) => r.result?.step),
        customer,
      ).toEqual(steps);
      for (let i = 1; i < list.length; i++) {
        expect(
          list[i]!.acquiredAtMs,
          `${customer}: ${list[i]!.result?.step} started before ${list[i - 1]!.result?.step} completed`,
        ).toBeGreaterThanOrEqual(list[i - 1]!.completedAtMs ?? Number.POSITIVE_INFINITY);
      }
    }
  });
});

describe('the installed sqs-jobs CLI runs the app locally: local, send, stats', () => {
  /** The bundled Node 24: `sqs-jobs local` needs Node >= 22.15 (the functions' module hooks). */
  const NODE_24 = join(REPO_ROOT, 'node_modules', '.bin', 'node');
  const cli = () => join(cdkApp, 'node_modules', 'sqs-jobs', 'dist', 'bin', 'sqs-jobs.js');

  it('`sqs-jobs local --json` serves the stack until SIGINT; a job sent with `sqs-jobs send` completes; exit 0', async () => {
    const local = spawn(
      NODE_24,
      [
        cli(),
        'local',
        '--synth',
        'never',
        '--json',
        '--sqs-port',
        '0',
        '--dynamodb-port',
        '0',
        '--scheduler-port',
        '0',
      ],
      {
        cwd: cdkApp,
        env: consumerEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    local.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => local.on('close', (code) => resolve(code)));
    try {
      // The description is one JSON line, printed once everything is up (then one line per job).
      const description = await new Promise<LocalRuntimeDescription>((resolve, reject) => {
        local.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          // The first line; job lines ({"kind":"job",...}) follow it as the workers run.
          const end = stdout.indexOf('\n');
          if (end >= 0) resolve(JSON.parse(stdout.slice(0, end)) as LocalRuntimeDescription);
        });
        exited.then((code) => reject(new Error(`sqs-jobs local exited ${code}:\n${tail(stderr)}`)));
      });
      const emails = description.queues.find((q) => q.jobQueueName === 'emails');
      const table = description.tables.find((t) => t.logicalId.startsWith('Idempotency'));
      if (!emails || !table) throw new Error(`no emails queue or table in ${stdout}`);
      const connection = ['--endpoint', description.endpoints.sqs, '--region', description.region];
      const env = consumerEnv({ AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });

      const send = expectSuccess(
        'sqs-jobs send',
        await run(
          NODE_24,
          [
            cli(),
            'send',
            '--queue-url',
            emails.url,
            '--type',
            'emails.send-receipt',
            '--data',
            '{"orderId":"o-cli"}',
            '--source',
            '/cli/test',
            '--id',
            'cli-1',
            '--json',
            ...connection,
          ],
          { cwd: cdkApp, env },
        ),
      );
      expect(JSON.parse(send.stdout)).toMatchObject({ messageId: expect.any(String) });

      const dynamodb = new DynamoDBClient({
        endpoint: description.endpoints.dynamodb,
        region: description.region,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      });
      try {
        const completed = await until(
          async () => {
            const out = await dynamodb.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
            return out.Items?.find((i) => i.recordType?.S === 'job' && i.status?.S === 'COMPLETED');
          },
          {
            timeoutMs: 60_000,
            describe: () => `no COMPLETED job record; sqs-jobs local stderr:\n${tail(stderr)}`,
          },
        );
        // The job type is the first part of the record key (docs/contracts.md, "Job record").
        expect(completed.pk?.S?.split('#')[0]).toBe('emails.send-receipt');
      } finally {
        dynamodb.destroy();
      }

      const stats = expectSuccess(
        'sqs-jobs stats',
        await run(NODE_24, [cli(), 'stats', '--queue-url', emails.url, '--json', ...connection], {
          cwd: cdkApp,
          env,
        }),
      );
      expect(stats.stdout).toContain(emails.url);
    } finally {
      local.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});
