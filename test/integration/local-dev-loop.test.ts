/**
 * The dev loop of `sqs-jobs local` on a real worker (test/fixtures/dev-loop-worker.ts, bundled by
 * a JobQueue synthesized here): one line per job as it runs (text, `--json`, none with
 * `--quiet`); the stack of a dead-lettered job, in its DLQ evidence, names the source file and
 * line, not the bundle; fixed ports keep the endpoints and queue URLs across restarts, and a port
 * in use is refused with a message naming it; a change to a worker's code rebuilds and reloads its
 * function while a job waits in the queue, which then runs on the new code. Every wait is on a
 * printed line or a reported event, never a sleep.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { App, AssetStaging, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSqsJobsCli } from '../../lib/cli/index.ts';
import { JobClient } from '../../lib/client/index.ts';
import { JobQueue } from '../../lib/constructs/job-queue.ts';
import type { JobEvent } from '../../lib/local/job-lines.ts';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';
import type { LocalRuntimeDescription } from '../../lib/local/serve.ts';
import { ensureSynthesized } from '../../lib/local/synth.ts';
import { type CodeReload, watchFunctionCode } from '../../lib/local/watch.ts';
import { fail, greet } from '../fixtures/dev-loop-worker.ts';
import { removeDir, tempOutdir } from '../infra/helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORKER_SOURCE = path.join(PROJECT_ROOT, 'test', 'fixtures', 'dev-loop-worker.ts');
/** The line of the fixture's `throw` (1-based), where a mapped stack points. */
const THROW_LINE =
  readFileSync(WORKER_SOURCE, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes('throw new PermanentError')) + 1;
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

let outdir: string;

beforeAll(() => {
  outdir = tempOutdir('dev-loop');
  const app = new App({ outdir });
  const stack = new Stack(app, 'DevLoopStack');
  new JobQueue(stack, 'DevLoop', {
    name: 'devloop',
    entry: 'test/fixtures/dev-loop-worker.ts',
    projectRoot: PROJECT_ROOT,
    jobs: [greet, fail],
    idempotencyTable: false,
    alarmTopic: false,
  });
  app.synth();
});

afterAll(() => removeDir(outdir));

/** A port nothing listens on right now (the OS's pick). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `sqs-jobs local` run in-process on the synthesized assembly, its output watched line by line. */
class LocalCli {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<number>;
  readonly #stop = new AbortController();
  readonly #waiters: (() => void)[] = [];

  constructor(args: readonly string[]) {
    const collect = (into: string[]) => ({
      write: (text: string) => {
        into.push(...text.split('\n').filter((l) => l !== ''));
        for (const wake of this.#waiters.splice(0)) wake();
      },
    });
    this.exited = runSqsJobsCli(['local', '--assembly', outdir, '--synth', 'never', ...args], {
      stdout: collect(this.stdout),
      stderr: collect(this.stderr),
      stdinIsTTY: false,
      env: {},
      signal: this.#stop.signal,
    }).finally(() => {
      for (const wake of this.#waiters.splice(0)) wake();
    });
    void this.exited.then(() => (this.#done = true));
  }

  #done = false;

  /** The first line of `stream` that `match` accepts, as soon as it is printed. */
  async line(match: (line: string) => boolean, stream: 'stdout' | 'stderr' = 'stdout'): Promise<string> {
    for (;;) {
      const found = this[stream].find(match);
      if (found !== undefined) return found;
      if (this.#done) {
        throw new Error(
          `sqs-jobs local ended without that line\nstdout:\n${this.stdout.join('\n')}\nstderr:\n${this.stderr.join('\n')}`,
        );
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** The `--json` description (its first stdout line). */
  async description(): Promise<LocalRuntimeDescription> {
    const first = await this.line(() => true);
    return JSON.parse(first) as LocalRuntimeDescription;
  }

  /** Ctrl-C; resolves with the exit code. */
  stop(): Promise<number> {
    this.#stop.abort();
    return this.exited;
  }
}

/** A JobClient on the printed SQS endpoint. */
function clientFor(d: LocalRuntimeDescription): { client: JobClient; sqs: SQSClient } {
  const sqs = new SQSClient({ endpoint: d.endpoints.sqs, region: d.region, credentials: CREDENTIALS });
  const url = d.queues.find((q) => q.jobQueueName === 'devloop')?.url;
  if (url === undefined) throw new Error(`no devloop queue in ${JSON.stringify(d)}`);
  return { client: new JobClient({ source: '/tests/dev-loop', queueUrls: { devloop: url }, sqs }), sqs };
}

const ANY_PORTS = ['--sqs-port', '0', '--dynamodb-port', '0', '--scheduler-port', '0'];

describe('sqs-jobs local: one line per job', () => {
  it('--json: the description first, then a JSON line per job with its type, id, outcome, attempt and duration; a dead letter says why', async () => {
    const cli = new LocalCli(['--json', ...ANY_PORTS]);
    try {
      const description = await cli.description();
      const { client, sqs } = clientFor(description);
      try {
        await client.send(greet, { name: 'ada' }, { id: 'greet-1' });
        await client.send(fail, { name: 'bob' }, { id: 'fail-1' });
        const event = (id: string) => async () =>
          JSON.parse(await cli.line((l) => l.includes(`"jobId":"${id}"`))) as JobEvent;
        const completed = await event('greet-1')();
        expect(completed).toMatchObject({
          kind: 'job',
          type: 'devloop.greet',
          jobId: 'greet-1',
          outcome: 'completed',
          attempt: 1,
        });
        expect(completed.durationMs).toBeGreaterThanOrEqual(0);
        const deadLettered = await event('fail-1')();
        expect(deadLettered).toMatchObject({
          type: 'devloop.fail',
          outcome: 'dead-lettered',
          attempt: 1,
          error: 'PermanentError: cannot greet bob',
        });
        expect(deadLettered.reason).toBe('PermanentError');

        // The evidence's stack names the worker's source file and line, not the bundle.
        const dlqUrl = description.queues.find((q) => q.jobQueueName === 'devloop')?.deadLetterQueueUrl;
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: dlqUrl,
            MessageAttributeNames: ['All'],
            WaitTimeSeconds: 5,
          }),
        );
        const stack = received.Messages?.[0]?.MessageAttributes?.ErrorStack?.StringValue ?? '';
        expect(stack).toMatch(/^PermanentError: cannot greet bob\n/);
        expect(stack).toContain(`at failHere (${WORKER_SOURCE}:${THROW_LINE}:`);
        expect(stack).not.toMatch(/index\.mjs:\d+/);
      } finally {
        sqs.destroy();
      }
    } finally {
      expect(await cli.stop()).toBe(0);
    }
  });

  it('prints a readable line by default: time, outcome, type, id, attempt, duration', async () => {
    const cli = new LocalCli(ANY_PORTS);
    try {
      const endpoint = /SQS endpoint\s+(\S+)/.exec(await cli.line((l) => l.startsWith('SQS endpoint')))?.[1];
      const url = /url {2}(\S+)/.exec(await cli.line((l) => /^ {2}url {2}/.test(l)))?.[1];
      const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: CREDENTIALS });
      try {
        const client = new JobClient({ source: '/tests/dev-loop', queueUrls: { devloop: url ?? '' }, sqs });
        await client.send(greet, { name: 'ada' }, { id: 'greet-text' });
        const line = await cli.line((l) => l.includes('greet-text'));
        expect(line).toMatch(
          /^\d\d:\d\d:\d\d\.\d{3} {2}completed {6}devloop\.greet {2}greet-text {2}attempt 1 {2}\d+ ms$/,
        );
      } finally {
        sqs.destroy();
      }
    } finally {
      expect(await cli.stop()).toBe(0);
    }
  });

  it('--quiet: no job line (the batch ran: its summary is in the function logs)', async () => {
    const cli = new LocalCli(['--json', '--quiet', '--function-logs', ...ANY_PORTS]);
    try {
      const { client, sqs } = clientFor(await cli.description());
      try {
        await client.send(greet, { name: 'ada' }, { id: 'greet-quiet' });
        await cli.line((l) => l.includes('"batch processed"'), 'stderr');
        expect(cli.stdout).toHaveLength(1);
      } finally {
        sqs.destroy();
      }
    } finally {
      expect(await cli.stop()).toBe(0);
    }
  });
});

describe('sqs-jobs local: fixed ports', () => {
  it('keeps its endpoints and queue URLs across restarts; a port in use is refused, naming it', async () => {
    const sqsPort = String(await freePort());
    const dynamodbPort = String(await freePort());
    const schedulerPort = String(await freePort());
    const ports = ['--sqs-port', sqsPort, '--dynamodb-port', dynamodbPort, '--scheduler-port', schedulerPort];
    const first = new LocalCli(['--json', ...ports]);
    const before = await first.description();
    expect(before.endpoints.sqs).toBe(`http://127.0.0.1:${sqsPort}`);
    expect(before.endpoints.dynamodb).toBe(`http://127.0.0.1:${dynamodbPort}`);
    expect(before.endpoints.scheduler).toBe(`http://127.0.0.1:${schedulerPort}`);

    // Second starts on one of the same ports, while the first runs.
    const anyPorts = (taken: string) =>
      ['--sqs-port', '--dynamodb-port', '--scheduler-port']
        .filter((o) => o !== taken)
        .flatMap((o) => [o, '0']);
    for (const [service, option, taken] of [
      ['SQS', '--sqs-port', sqsPort],
      ['DynamoDB', '--dynamodb-port', dynamodbPort],
      ['Scheduler', '--scheduler-port', schedulerPort],
    ] as const) {
      const second = new LocalCli(['--json', option, taken, ...anyPorts(option)]);
      expect(await second.exited).toBe(2);
      expect(second.stdout).toEqual([]);
      expect(second.stderr.join('\n')).toBe(
        `error: port ${taken} of the local ${service} endpoint is already in use (another \`sqs-jobs local\`, or another emulator?): stop what listens there, or choose another port with ${option} <n> (0 takes any free port)`,
      );
    }
    expect(await first.stop()).toBe(0);

    const third = new LocalCli(['--json', ...ports]);
    try {
      const after = await third.description();
      expect(after.endpoints).toEqual(before.endpoints);
      expect(after.queues.map((q) => [q.url, q.deadLetterQueueUrl])).toEqual(
        before.queues.map((q) => [q.url, q.deadLetterQueueUrl]),
      );
    } finally {
      expect(await third.stop()).toBe(0);
    }
  });
});

describe('sqs-jobs local --watch: a code change rebuilds the function, queued jobs stay', () => {
  let project: string;
  let rt: LocalRuntime | undefined;
  const logs: string[] = [];
  const reloads: CodeReload[] = [];
  const errors: unknown[] = [];
  const wakers: (() => void)[] = [];
  const wake = () => {
    for (const w of wakers.splice(0)) w();
  };
  /** Resolves once `probe` holds, checked after each log line or reload. */
  async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      if (errors.length > 0)
        throw new Error(`rebuild failed while waiting for ${what}: ${String(errors[0])}`);
      await new Promise<void>((resolve) => wakers.push(resolve));
    }
  }

  /** The worker of the temporary project: `version` greets; v1 keeps the job `queued` retrying. */
  function writeWorker(version: string): void {
    writeFileSync(
      path.join(project, 'src', 'worker.ts'),
      `import { z } from 'zod';
import { createWorker, defineJob, TransientError } from '${path.join(PROJECT_ROOT, 'lib', 'index.ts')}';

const greet = defineJob({
  type: 'watch.greet',
  queue: 'watch',
  schema: z.object({ name: z.string() }),
  retry: { maxAttempts: 100, baseDelaySeconds: 1, maxDelaySeconds: 1 },
  timeoutSeconds: 5,
  run: async ({ name }, ctx) => {
    ${version === 'v1' ? "if (name === 'queued') throw new TransientError('not before the next version');" : ''}
    ctx.logger.info('greeting', { greeting: '${version} ' + name });
    return {};
  },
});

export const handler = createWorker({ jobs: [greet], idempotency: false });
`,
    );
  }

  /** The project's synth, run by ensureSynthesized as `sqs-jobs local` runs `cdk synth`. */
  async function synthesize(out: string): Promise<void> {
    // In-process synth: aws-cdk-lib keeps staged bundles by path, not content (synth.ts forgetStagedAssets).
    AssetStaging.clearAssetHashCache();
    const app = new App({ outdir: out });
    const stack = new Stack(app, 'WatchStack');
    new JobQueue(stack, 'Watch', {
      name: 'watch',
      entry: 'src/worker.ts',
      projectRoot: project,
      maxAttempts: 100,
      jobTimeoutSeconds: 5,
      idempotencyTable: false,
      alarmTopic: false,
    });
    app.synth();
  }

  beforeAll(async () => {
    project = tempOutdir('watch-project');
    mkdirSync(path.join(project, 'src'));
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(project, 'node_modules'));
    writeFileSync(path.join(project, 'package-lock.json'), '{"lockfileVersion": 3, "packages": {}}\n');
    writeFileSync(path.join(project, 'cdk.json'), JSON.stringify({ watch: { include: ['src/**'] } }));
    writeWorker('v1');
    await ensureSynthesized({ projectRoot: project, synthesize });
    rt = await startLocalRuntime({
      projectRoot: project,
      synthesize: 'never',
      env: {},
      receiveWaitTimeSeconds: 1,
      functionLogs: (l) => {
        logs.push(l.line);
        wake();
      },
    });
  });

  afterAll(async () => {
    await rt?.stop();
    removeDir(project);
  });

  it('reloads the worker on a change to its source; the job waiting in the queue runs on the new code', async () => {
    if (rt === undefined) throw new Error('the runtime did not start');
    const runtime = rt;
    const watcher = watchFunctionCode(runtime, {
      projectRoot: project,
      assemblyDir: path.join(project, 'cdk.out'),
      synthesize,
      onReload: (r) => {
        reloads.push(r);
        wake();
      },
      onError: (e) => {
        errors.push(e);
        wake();
      },
    });
    try {
      const client = new JobClient({
        source: '/tests/watch',
        queueUrls: { watch: runtime.queue('watch').url },
        sqs: runtime.sqs,
      });
      const greeted = (text: string) => () => logs.find((l) => l.includes(`"greeting":"${text}"`));
      await client.send({ type: 'watch.greet', queue: 'watch', schema: greet.schema }, { name: 'first' });
      await until(greeted('v1 first'), 'v1 to greet the first job');

      // On v1 this job is retried every second: it stays in the queue until the code changes.
      await client.send({ type: 'watch.greet', queue: 'watch', schema: greet.schema }, { name: 'queued' });
      await until(
        () => logs.find((l) => l.includes('"outcome":"retry"') && l.includes('not before the next version')),
        'the queued job to be retried on v1',
      );

      writeWorker('v2');
      const worker = runtime.worker('watch').functionLogicalId;
      const reload = await until(() => reloads.find((r) => r.functions.length > 0), 'the rebuild');
      expect(reload).toMatchObject({ synthesized: true, functions: [worker] });
      await until(greeted('v2 queued'), 'the queued job to run on v2');
      expect(logs.some((l) => l.includes('"greeting":"v1 queued"'))).toBe(false);
      const dlq = runtime.queue('watch').deadLetterQueue;
      if (dlq === undefined) throw new Error('the watch queue has no DLQ');
      const depth = await runtime.queueDepth(dlq.url);
      expect(depth.visible + depth.notVisible + depth.delayed).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      watcher.close();
    }
  });
});
