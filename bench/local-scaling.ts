/**
 * Local end-to-end scaling (issue 10; `npm run bench -- --local-scaling`, not in the short mode):
 * `npm start` (bin/start.ts) at 100, 1,000 and 5,000 users without any injected fault, each in a
 * fresh process, and its `--json` report: jobs, wall time, workload time, jobs/s. And the ceiling
 * of the emulators it runs on: a no-op consumer (receive 10, delete in one batch, nothing else)
 * draining the same number of messages from an embedded fauxqs queue, standard and FIFO (one
 * group per user), with as many pollers as the sample has queues' worth of concurrency. These runs
 * are heavy (minutes at 5,000 users): run them alone, and read the load average printed with them.
 * Figures, not assertions.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startEmulators } from '../lib/local/emulators.ts';

const root = new URL('../', import.meta.url).pathname;

/** Every fault rate of bin/start.ts at 0: throughput, not resilience. */
const NO_FAULTS = [
  '--fault-rate',
  '0',
  '--slow-rate',
  '0',
  '--overrun-rate',
  '0',
  '--kill-rate',
  '0',
  '--lost-response-rate',
  '0',
  '--dynamodb-fault-rate',
  '0',
  '--sqs-fault-rate',
  '0',
];

export interface ScalingRun {
  readonly users: number;
  /** The run's deadline; a run that hits it reports what completed by then (`complete` false). */
  readonly timeoutSeconds: number;
  readonly complete: boolean;
  readonly jobs: number;
  readonly completed: number;
  readonly wallTimeMs: number;
  readonly workloadMs: number;
  readonly jobsPerSecond: number;
  readonly ok: boolean;
  readonly loadavgBefore: readonly number[];
  readonly loadavgAfter: readonly number[];
  readonly command: string;
}

interface StartReport {
  readonly ok: boolean;
  readonly complete: boolean;
  readonly jobs: { readonly total: number; readonly completed: number };
  readonly throughputPerSecond: number;
  readonly workloadMs: number;
  readonly wallTimeMs: number;
}

/** One `npm start` run in a fresh process, its JSON report read from stdout. */
function startRun(users: number, timeoutSeconds: number): Promise<ScalingRun> {
  const args = [
    '--import',
    'tsx',
    'bin/start.ts',
    '--users',
    String(users),
    ...NO_FAULTS,
    '--timeout-seconds',
    String(timeoutSeconds),
    '--json',
  ];
  const loadavgBefore = loadavg();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      // The report is the last JSON object printed from column 0 (pretty-printed).
      const start = stdout.startsWith('{') ? 0 : stdout.lastIndexOf('\n{') + 1;
      if (start < 0 || stdout[start] !== '{') {
        reject(new Error(`npm start --users ${users} exited ${code} without a report: ${stderr}`));
        return;
      }
      const { report } = JSON.parse(stdout.slice(start)) as { report: StartReport };
      resolve({
        users,
        timeoutSeconds,
        complete: report.complete,
        jobs: report.jobs.total,
        completed: report.jobs.completed,
        wallTimeMs: report.wallTimeMs,
        workloadMs: report.workloadMs,
        jobsPerSecond: report.throughputPerSecond,
        ok: report.ok,
        loadavgBefore,
        loadavgAfter: loadavg(),
        command: `node --import tsx bin/start.ts ${args.slice(3).join(' ')}`,
      });
    });
  });
}

export interface CeilingRun {
  readonly queue: 'standard' | 'fifo';
  readonly messages: number;
  readonly pollers: number;
  readonly sendPerSecond: number;
  readonly drainPerSecond: number;
}

/**
 * The no-op consumer: `messages` sent in batches of 10 (FIFO: `groups` message groups), then
 * drained by `pollers` loops of ReceiveMessage (10, short poll) + DeleteMessageBatch.
 */
async function ceiling(
  sqs: SQSClient,
  kind: 'standard' | 'fifo',
  messages: number,
  groups: number,
  pollers: number,
): Promise<CeilingRun> {
  const name = `ceiling-${kind}-${Date.now()}${kind === 'fifo' ? '.fifo' : ''}`;
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: kind === 'fifo' ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {},
    }),
  );
  const url = QueueUrl as string;
  const sendStarted = performance.now();
  for (let i = 0; i < messages; i += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: Array.from({ length: Math.min(10, messages - i) }, (_, j) => ({
          Id: String(j),
          MessageBody: JSON.stringify({ n: i + j }),
          ...(kind === 'fifo' ? { MessageGroupId: `user-${(i + j) % groups}` } : {}),
        })),
      }),
    );
  }
  const sendMs = performance.now() - sendStarted;
  let drained = 0;
  const drainStarted = performance.now();
  const poller = async () => {
    let empty = 0;
    while (drained < messages && empty < 20) {
      const out = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      const received = out.Messages ?? [];
      if (received.length === 0) {
        empty += 1;
        continue;
      }
      empty = 0;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: received.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle as string })),
        }),
      );
      drained += received.length;
    }
  };
  await Promise.all(Array.from({ length: pollers }, poller));
  const drainMs = performance.now() - drainStarted;
  return {
    queue: kind,
    messages,
    pollers,
    sendPerSecond: messages / (sendMs / 1000),
    drainPerSecond: drained / (drainMs / 1000),
  };
}

/** The emulators' ceiling: embedded fauxqs, as `npm start` runs it. */
async function ceilingRuns(messages: number, groups: number): Promise<CeilingRun[]> {
  const emulators = await startEmulators({}, {});
  const sqs = new SQSClient({
    endpoint: emulators.endpoints.sqs,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    return [
      await ceiling(sqs, 'standard', messages, groups, 10),
      await ceiling(sqs, 'fifo', messages, groups, 10),
    ];
  } finally {
    sqs.destroy();
    await emulators.stop();
  }
}

/** Runs and prints the scaling section. */
export async function printLocalScaling(
  users: readonly number[] = [100, 1000, 5000],
  timeoutSeconds: (users: number) => number = (n) => Math.min(900, 300 + n / 10),
): Promise<void> {
  const runs: ScalingRun[] = [];
  for (const n of users) {
    process.stderr.write(`local scaling: npm start --users ${n} ...\n`);
    runs.push(await startRun(n, timeoutSeconds(n)));
  }
  const largest = runs.at(-1) as ScalingRun;
  const reference = await ceilingRuns(largest.jobs, largest.users);
  console.log('\nlocal end-to-end scaling: npm start without faults (fresh process each)');
  console.table(
    runs.map((r) => ({
      users: r.users,
      jobs: r.jobs,
      completed: r.completed,
      'wall s': (r.wallTimeMs / 1000).toFixed(1),
      'workload s': (r.workloadMs / 1000).toFixed(1),
      'jobs/s': r.jobsPerSecond.toFixed(1),
      complete: r.complete,
      ok: r.ok,
      'load before → after': `${r.loadavgBefore[0]?.toFixed(2)} → ${r.loadavgAfter[0]?.toFixed(2)}`,
    })),
  );
  console.log(`command: ${runs[0]?.command.replace(/--users \d+/, '--users N')}`);
  console.log('\nceiling of the emulators: a no-op consumer on embedded fauxqs (receive 10 + delete batch)');
  console.table(
    reference.map((c) => ({
      queue: c.queue,
      messages: c.messages,
      pollers: c.pollers,
      'send msg/s': c.sendPerSecond.toFixed(0),
      'drain msg/s': c.drainPerSecond.toFixed(0),
    })),
  );
  process.stdout.write(`${JSON.stringify({ localScaling: runs, ceiling: reference })}\n`);
}
