/**
 * Issue 12, done when: in a local run (the sample stack on the embedded emulators), for a
 * completed booking chain (reserve → confirm → invoice → email) and for dead-lettered jobs,
 * `sqs-jobs job` prints the chain from the workload's first send to its last descendant with the
 * right statuses; the DLQs it reads keep their messages; the functions' logs (what
 * `SQS_JOBS_FUNCTION_LOGS=1` prints) carry the lineage and the trace.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobClient } from '../../lib/client/job-client.ts';
import { childJobId } from '../../lib/core/envelope.ts';
import { describeLocalRuntime } from '../../lib/local/serve.ts';
import { readDeadLetters } from '../../lib/ops/dlq-reader.ts';
import type { JobChain } from '../../lib/ops/job-chain.ts';
import type { Booking } from '../../lib/sample/domain.ts';
import { sampleJobs } from '../../lib/sample/jobs.ts';
import {
  type SampleStack,
  SOLD_OUT_SKU,
  startSampleStack,
  WORKLOAD_SOURCE,
} from '../../lib/sample/workload.ts';
import { runCli } from '../factories/cli.ts';
import { shellWords } from '../factories/start-process.ts';

let stack: SampleStack;
let dir: string;
let localFile: string;
const logLines: string[] = [];
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** The ids the chain's jobs get: each derives from its parent (lib/core/envelope.ts, childJobId). */
function chainIds(rootId: string) {
  const confirm = childJobId({ source: WORKLOAD_SOURCE, id: rootId }, 'booking.confirm-reservation', 0);
  const invoice = childJobId({ source: '/sqs-jobs/booking', id: confirm }, 'booking.issue-invoice', 0);
  const email = childJobId({ source: '/sqs-jobs/booking', id: invoice }, 'notifications.send-email', 0);
  return { confirm, invoice, email };
}

async function book(userId: string, bookingId: string, options: { sku?: string; user?: boolean } = {}) {
  if (options.user !== false) {
    await stack.repository.putUser({ userId, email: `${userId}@example.com`, name: userId });
  }
  const booking: Booking = {
    bookingId,
    userId,
    sku: options.sku ?? 'sku-01',
    quantity: 1,
    amountCents: 1_000,
    ordinal: 1,
    status: 'PENDING',
  };
  await stack.repository.putBooking(booking);
  return booking;
}

const job = (argv: string[]) =>
  runCli(['job', ...argv, '--local', localFile], stack.runtime.endpoints.sqs, { env: {} });

beforeAll(async () => {
  // What `SQS_JOBS_FUNCTION_LOGS=1 npm start` prints: the functions' lines on stderr.
  const previous = process.env.SQS_JOBS_FUNCTION_LOGS;
  process.env.SQS_JOBS_FUNCTION_LOGS = '1';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.startsWith('[')) {
      logLines.push(...text.split('\n').filter((l) => l !== ''));
      return true;
    }
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    // The default client timeout for the fake partner (5 s): no fault here makes a call hang, and
    // a short one (it was 3 s) can be outlasted by a fault-free call on a loaded machine.
    stack = await startSampleStack();
  } finally {
    if (previous === undefined) delete process.env.SQS_JOBS_FUNCTION_LOGS;
    else process.env.SQS_JOBS_FUNCTION_LOGS = previous;
  }
  await stack.repository.putStock('sku-01', 1_000);
  await stack.repository.putStock(SOLD_OUT_SKU, 0);
  await book('u-story', 'story-b1');
  // A user without a profile: the chain runs to its email, which cannot find the address.
  await book('u-nobody', 'story-b2', { user: false });
  await book('u-soldout', 'story-b3', { sku: SOLD_OUT_SKU });
  const client = new JobClient({
    source: WORKLOAD_SOURCE,
    queueUrls: stack.target.queueUrls,
    sqs: stack.target.producerSqs,
  });
  await client.send(
    sampleJobs.reserveInventory,
    { userId: 'u-story', bookingId: 'story-b1' },
    { id: 'story-b1', partitionKey: 'u-story', correlationId: 'order-story-1', traceparent: TRACEPARENT },
  );
  await client.send(
    sampleJobs.reserveInventory,
    { userId: 'u-nobody', bookingId: 'story-b2' },
    { id: 'story-b2', partitionKey: 'u-nobody' },
  );
  await client.send(
    sampleJobs.reserveInventory,
    { userId: 'u-soldout', bookingId: 'story-b3' },
    { id: 'story-b3', partitionKey: 'u-soldout' },
  );
  await stack.runtime.waitUntilDrained({ timeoutMs: 90_000 });
  dir = mkdtempSync(join(tmpdir(), 'sqs-jobs-story-'));
  localFile = join(dir, 'local.json');
  writeFileSync(localFile, JSON.stringify(describeLocalRuntime(stack.runtime)));
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('sqs-jobs job on a local run of the sample', () => {
  it('prints a completed booking chain from the first send to the last descendant', async () => {
    const ids = chainIds('story-b1');
    const out = await job(['booking.reserve-inventory', '--source', WORKLOAD_SOURCE, '--id', 'story-b1']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(
      `chain of booking.reserve-inventory id story-b1 (source ${WORKLOAD_SOURCE}): 4 jobs (4 done), from the first send to the last descendant`,
    );
    const heads = out.stdout.split('\n').filter((l) => /^\s*(└─ )?[a-z]+\.[a-z-]+ {2}id /.test(l));
    expect(heads.map((l) => l.trimEnd())).toEqual([
      `booking.reserve-inventory  id story-b1 (source ${WORKLOAD_SOURCE})   ← asked`,
      `   └─ booking.confirm-reservation  id ${ids.confirm} (source /sqs-jobs/booking)`,
      `      └─ booking.issue-invoice  id ${ids.invoice} (source /sqs-jobs/booking)`,
      `         └─ notifications.send-email  id ${ids.email} (source /sqs-jobs/booking)`,
    ]);
    expect(out.stdout).toMatch(/result: \{"bookingId":"story-b1","status":"RESERVED","alreadyDone":false\}/);
    // Every job done: no DLQ read at all.
    expect(out.stdout).not.toContain('dead-letter queues read');

    // The same chain from its last descendant, as JSON.
    const fromEmail = await job([
      'notifications.send-email',
      '--source',
      '/sqs-jobs/booking',
      '--id',
      ids.email,
      '--json',
    ]);
    expect(fromEmail.code).toBe(0);
    const chain = JSON.parse(fromEmail.stdout) as JobChain;
    expect(chain.jobs.map((j) => [j.type, j.depth, j.state, j.asked])).toEqual([
      ['booking.reserve-inventory', 0, 'done', false],
      ['booking.confirm-reservation', 1, 'done', false],
      ['booking.issue-invoice', 2, 'done', false],
      ['notifications.send-email', 3, 'done', true],
    ]);
    for (const j of chain.jobs) {
      expect(j.attempts).toBeGreaterThanOrEqual(1);
      expect(Date.parse(j.endedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(j.firstRunAt ?? ''));
    }
  }, 60_000);

  it('prints a chain whose last job was dead-lettered, with its cause, and consumes nothing', async () => {
    const ids = chainIds('story-b2');
    const out = await job([
      'booking.confirm-reservation',
      '--source',
      '/sqs-jobs/booking',
      '--id',
      ids.confirm,
    ]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('4 jobs (3 done, 1 DEAD-LETTERED)');
    expect(out.stdout).toMatch(/booking\.confirm-reservation {2}id .* {3}← asked/);
    expect(out.stdout).toMatch(
      new RegExp(
        `└─ notifications\\.send-email {2}id ${ids.email} \\(source /sqs-jobs/booking\\)\\n\\s+DEAD-LETTERED: in DLQ \\S+ since \\S+: PermanentError \\(PermanentError: user u-nobody not found\\)`,
      ),
    );
    expect(out.stdout).toContain(
      'dead-letter queues read (held while read, then visible again; nothing consumed)',
    );
    // The dead letter is still in its DLQ, visible.
    const dlqUrl = stack.runtime.queue('notifications').deadLetterQueue?.url as string;
    const read = await readDeadLetters({ sqs: stack.runtime.sqs, queueUrl: dlqUrl, waitTimeSeconds: 0 });
    expect(read.messages.map((m) => m.job?.id)).toContain(ids.email);
  }, 60_000);

  it('prints a root dead-lettered at its first step (sold out), and says when a job is unknown', async () => {
    const out = await job(['booking.reserve-inventory', '--source', WORKLOAD_SOURCE, '--id', 'story-b3']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('1 job (1 DEAD-LETTERED)');
    expect(out.stdout).toMatch(/DEAD-LETTERED: in DLQ \S+ since \S+: .*OutOfStock/);

    const unknown = await job([
      'booking.reserve-inventory',
      '--source',
      WORKLOAD_SOURCE,
      '--id',
      'never-sent',
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain('no idempotency record of booking.reserve-inventory id never-sent');
  }, 60_000);

  it("the functions' log lines carry the lineage and the trace", () => {
    const ids = chainIds('story-b2');
    const failure = logLines
      .map((l) => l.slice(l.indexOf('] ') + 2))
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.message === 'job dead-lettered' && l.jobId === ids.email);
    expect(failure).toMatchObject({
      jobType: 'notifications.send-email',
      parentJobId: ids.invoice,
      rootJobId: 'story-b2',
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
  });

  it('works with the export line npm start prints (AWS_ENDPOINT_URL_SQS / _DYNAMODB), and names a missing table in one line', async () => {
    const description = describeLocalRuntime(stack.runtime);
    const table = description.tables.find((t) => /idempotency/i.test(t.logicalId))?.name as string;
    const env = {
      AWS_ENDPOINT_URL_SQS: stack.runtime.endpoints.sqs,
      AWS_ENDPOINT_URL_DYNAMODB: stack.runtime.endpoints.dynamodb,
      AWS_REGION: description.region,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    };
    const where = description.queues.flatMap((q) => ['--queue-url', q.url]);
    const args = [
      'job',
      'booking.reserve-inventory',
      '--source',
      WORKLOAD_SOURCE,
      '--id',
      'story-b1',
      ...where,
    ];
    const found = await runCli([...args, '--idempotency-table', table], stack.runtime.endpoints.sqs, { env });
    expect(found.stderr).toBe('');
    expect(found.code).toBe(0);
    expect(found.stdout).toContain('4 jobs (4 done)');
    const missing = await runCli(
      [...args, '--idempotency-table', 'NoSuchTable'],
      stack.runtime.endpoints.sqs,
      {
        env,
      },
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      `error: no idempotency table named "NoSuchTable" at ${stack.runtime.endpoints.dynamodb}: check --idempotency-table (the stack output IdempotencyTableName) and the region\n`,
    );
  });

  it('dlq show prints a "follow its chain" command that runs as printed, from a shell without the export line', async () => {
    const ids = chainIds('story-b2');
    const description = describeLocalRuntime(stack.runtime);
    const dlqUrl = stack.runtime.queue('notifications').deadLetterQueue?.url as string;
    // The shell of the export line npm start prints, under `npm run sqs-jobs`.
    const env = {
      AWS_ENDPOINT_URL_SQS: stack.runtime.endpoints.sqs,
      AWS_ENDPOINT_URL_DYNAMODB: stack.runtime.endpoints.dynamodb,
      AWS_REGION: description.region,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      npm_lifecycle_event: 'sqs-jobs',
    };
    const show = await runCli(
      ['dlq', 'show', '--dlq-url', dlqUrl, '--job-id', ids.email, '--wait-seconds', '0'],
      stack.runtime.endpoints.sqs,
      { env },
    );
    expect(show.stderr).toBe('');
    expect(show.code).toBe(0);
    const line = /^follow its chain +(.+)$/m.exec(show.stdout)?.[1] ?? '';
    expect(line).toMatch(/^npm run sqs-jobs -- job notifications\.send-email /);
    expect(show.stdout).not.toContain('note:');
    // Pasted elsewhere: no endpoint variables, and the SQS client the flags make (not the test's).
    const argv = shellWords(line).slice(['npm', 'run', 'sqs-jobs', '--'].length);
    const followed = await runCli(argv, 'http://unused.invalid', { env: {}, createSqs: undefined });
    expect(followed.stderr).toBe('');
    expect(followed.code).toBe(0);
    expect(followed.stdout).toContain('4 jobs (3 done, 1 DEAD-LETTERED)');
    expect(followed.stdout).toMatch(/notifications\.send-email {2}id .* {3}← asked/);
    expect(followed.stdout).toMatch(/DEAD-LETTERED: in DLQ \S+ since \S+: PermanentError/);
  }, 60_000);
});
