/**
 * `npm start -- --keep-running`, `--console` and `--no-workload` as a user runs them: a child
 * process on bin/start.ts with a small workload. After the report the stack stays up; what it
 * prints is enough to reach it from another terminal: the run's dead letters are in the DLQs
 * (`sqs-jobs dlq list` with the printed variables and DLQ URLs), a job sent with the printed
 * `send` command completes, the console answers with the printed token and refuses without it;
 * Ctrl-C stops everything (the process ends, its ports close) with the report's exit code. Every
 * wait is on printed output or on a condition, never a fixed sleep.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalRuntimeDescription } from '../../lib/local/serve.ts';
import { defaultJobKey, jobRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { DEMO } from '../../lib/sample/workload.ts';
import { runCli } from '../factories/cli.ts';
import { listening, type StartProcess, shellWords, spawnStart } from '../factories/start-process.ts';

/** A small run: 2 users × 1 booking, the deliberate dead letters (out of stock, malformed), no API faults. */
const SMALL = ['--users', '2', '--bookings-per-user', '1', '--fault-rate', '0', '--lost-response-rate', '0'];

let running: StartProcess | undefined;

afterEach(async () => {
  // A failed test must not leave the stack running.
  if (running && running.child.exitCode === null && running.child.signalCode === null) {
    running.kill();
    await running.exited;
  }
  running = undefined;
});

/** The variables of the printed `export` line. */
function exportedEnv(text: string): Record<string, string> {
  const line = /^ {2}export (.+)$/m.exec(text)?.[1] ?? '';
  return Object.fromEntries(
    shellWords(line).map((word) => word.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
}

/** The status of a job's idempotency record, read as the console reads it. */
async function jobStatus(
  env: Record<string, string>,
  table: string,
  type: string,
  source: string,
  id: string,
): Promise<string | undefined> {
  const dynamodb = new DynamoDBClient({
    endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
    region: env.AWS_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const out = await dynamodb.send(
      new GetItemCommand({
        TableName: table,
        Key: { pk: { S: jobRecordKey(type, defaultJobKey(source, id)) } },
        ConsistentRead: true,
      }),
    );
    return out.Item?.status?.S;
  } finally {
    dynamodb.destroy();
  }
}

/** Waits until `check` holds (every 250 ms), or fails after `timeoutMs`. */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('npm start -- --keep-running', () => {
  it('keeps the stack up after the report: the dead letters are in the DLQs, a sent job completes, Ctrl-C stops everything with the report exit code', async () => {
    running = spawnStart([...SMALL, '--keep-running']);
    await running.waitFor(/^Ctrl-C stops everything; the exit code is then the report's \(0\)\.$/m);
    const text = running.stdout();
    expect(text).toContain('RESULT: all invariants hold');
    // The report said how the FIFO DLQ was read.
    expect(text).toMatch(/note: booking DLQ \(FIFO\): read through by rotation/);

    const env = exportedEnv(text);
    expect(env.AWS_ENDPOINT_URL_SQS).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const sqsEndpoint = env.AWS_ENDPOINT_URL_SQS as string;
    const dlqUrls = [...text.matchAll(/^ {2}npm run sqs-jobs -- dlq list --dlq-url (\S+)$/gm)].map(
      (m) => m[1] as string,
    );
    expect(dlqUrls).toHaveLength(3);
    for (const queue of ['booking', 'payments', 'notifications']) {
      expect(text).toMatch(new RegExp(`^queue ${queue}`, 'm'));
    }
    const fakeApi = /^Fake external API {2}(http:\/\/\S+)/m.exec(text)?.[1] ?? '';
    expect(await listening(fakeApi)).toBe(true);
    const appTable = /^table AppTable\S* {2}(\S+)$/m.exec(text)?.[1] ?? '';
    const idempotencyTable = /^table IdempotencyTable\S* {2}(\S+)$/m.exec(text)?.[1] ?? '';

    // The run's dead letters, with the printed variables and URLs: the sold-out bookings in the
    // FIFO booking DLQ (one group each, all read), a malformed message in each standard DLQ.
    const list = async (url: string) => {
      const run = await runCli(['dlq', 'list', '--dlq-url', url, '--json'], sqsEndpoint, { env });
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as {
        read: number;
        notRead: number;
        groups: { key: string[]; count: number }[];
      };
    };
    const [bookingDlq, paymentsDlq, notificationsDlq] = dlqUrls as [string, string, string];
    expect(bookingDlq).toMatch(/\.fifo$/);
    const booking = await list(bookingDlq);
    expect(booking.read + booking.notRead).toBe(3);
    expect(JSON.stringify(booking.groups)).toContain('OutOfStockError');
    expect(JSON.stringify(booking.groups)).toContain('UnknownJobTypeError');
    const payments = await list(paymentsDlq);
    expect(payments).toMatchObject({ read: 1, notRead: 0 });
    expect(JSON.stringify(payments.groups)).toContain('EnvelopeError');
    const notifications = await list(notificationsDlq);
    expect(notifications).toMatchObject({ read: 1, notRead: 0 });
    expect(JSON.stringify(notifications.groups)).toContain('JobDataInvalidError');

    // The printed `send` of the demo booking, pasted (with an id to find it by): it completes.
    const sendLine =
      /^ {2}npm run sqs-jobs -- (send .*--type booking\.reserve-inventory.*)$/m.exec(text)?.[1] ?? '';
    const sent = await runCli([...shellWords(sendLine), '--id', 'pasted-1', '--json'], sqsEndpoint, { env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ type: 'booking.reserve-inventory', id: 'pasted-1' });
    const status = await eventually(async () => {
      const s = await jobStatus(
        env,
        idempotencyTable,
        'booking.reserve-inventory',
        '/sqs-jobs/cli',
        'pasted-1',
      );
      return s === 'COMPLETED' ? s : undefined;
    }, 60_000);
    expect(status).toBe('COMPLETED');
    expect(appTable).not.toBe('');

    // Ctrl-C: everything stops, the exit code is the report's.
    running.child.kill('SIGINT');
    const { code } = await running.exited;
    expect(code).toBe(0);
    expect(running.stderr()).toMatch(/stopping: .*\n(.|\n)*stopped\n$/);
    expect(await listening(sqsEndpoint)).toBe(false);
    expect(await listening(env.AWS_ENDPOINT_URL_DYNAMODB as string)).toBe(false);
    expect(await listening(fakeApi)).toBe(false);
  }, 240_000);

  it('--console --json: the console answers on the printed URL with its token (403 without), stdout is JSON Lines', async () => {
    running = spawnStart([...SMALL, '--console', '--json']);
    // Printed (on stderr with --json) as soon as the stack is up, before the workload.
    const [, early] = await running.waitFor(/^Console: (http\S+)$/m, 'stderr');
    const [line] = await running.waitFor(/^\{"stackName".*\}$/m);
    const lines = running.stdout().trim().split('\n');
    expect(lines).toHaveLength(2);
    const report = JSON.parse(lines[0] as string) as { report: { ok: boolean } };
    expect(report.report.ok).toBe(true);
    const description = JSON.parse(line) as LocalRuntimeDescription & {
      console: { url: string; readOnly: boolean };
      externalApi: { url: string };
    };
    expect(description.console.url).toBe(early);
    expect(description.console.readOnly).toBe(false);
    expect(description.queues.map((q) => q.jobQueueName).sort()).toEqual([
      'booking',
      'notifications',
      'payments',
    ]);

    const consoleUrl = new URL(description.console.url);
    const token = consoleUrl.searchParams.get('token') ?? '';
    expect(token.length).toBeGreaterThan(20);
    expect((await fetch(description.console.url)).status).toBe(200);
    expect((await fetch(`${consoleUrl.origin}/`)).status).toBe(403);
    expect((await fetch(`${consoleUrl.origin}/api/queues`)).status).toBe(403);
    const queues = await fetch(`${consoleUrl.origin}/api/queues`, { headers: { 'x-sqs-jobs-token': token } });
    expect(queues.status).toBe(200);
    const body = JSON.stringify(await queues.json());
    expect(body).toContain('payments');

    running.child.kill('SIGINT');
    expect((await running.exited).code).toBe(0);
    expect(await listening(consoleUrl.origin)).toBe(false);
    expect(await listening(description.endpoints.sqs)).toBe(false);
  }, 240_000);

  it('--no-workload: the sample stack alone, until Ctrl-C (exit 0); the demo booking completes', async () => {
    running = spawnStart(['--no-workload', '--json', '--fault-rate', '0']);
    const [line] = await running.waitFor(/^\{"stackName".*\}$/m);
    expect(running.stdout().trim().split('\n')).toHaveLength(1);
    const description = JSON.parse(line) as LocalRuntimeDescription & { externalApi: { url: string } };
    expect(description).not.toHaveProperty('console');
    const idempotencyTable =
      description.tables.find((t) => t.logicalId.startsWith('IdempotencyTable'))?.name ?? '';
    const payments = description.queues.find((q) => q.jobQueueName === 'payments')?.url ?? '';
    const env = {
      AWS_ENDPOINT_URL_DYNAMODB: description.endpoints.dynamodb,
      AWS_REGION: description.region,
    };
    const sent = await runCli(
      [
        'send',
        '--queue-url',
        payments,
        '--type',
        'payments.capture',
        '--data',
        JSON.stringify({ userId: DEMO.userId, bookingId: DEMO.bookingId }),
        '--id',
        'by-hand-1',
      ],
      description.endpoints.sqs,
    );
    expect(sent.code, sent.stderr).toBe(0);
    await eventually(async () => {
      const s = await jobStatus(env, idempotencyTable, 'payments.capture', '/sqs-jobs/cli', 'by-hand-1');
      return s === 'COMPLETED' ? s : undefined;
    }, 60_000);

    running.child.kill('SIGINT');
    expect((await running.exited).code).toBe(0);
    expect(await listening(description.externalApi.url)).toBe(false);
  }, 180_000);

  it('through npm (`npm start`), Ctrl-C at the terminal stops the stack and exits with its exit code, not 130', async () => {
    // The terminal signals the whole process group: npm, the shell npm runs the script in, node.
    // A shell that does not exec the script (dash) died of that SIGINT at once, npm saw its child
    // killed by SIGINT and exited 130 while node was still stopping (and printing) behind it.
    running = spawnStart(['--no-workload', '--fault-rate', '0'], {}, { npm: true });
    await running.waitFor(/^Ctrl-C stops everything\.$/m);
    running.ctrlC();
    expect((await running.exited).code).toBe(0);
    expect(running.stderr()).toMatch(/stopping: .*\nstopped\n$/);
  }, 180_000);
});
