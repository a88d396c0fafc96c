/**
 * `sqs-jobs dlq` (lib/cli/) against the embedded SQS emulator: the commands as an operator
 * types them, their output and exit codes; plus the real process for --help and the refusal to
 * redrive without a terminal or --yes.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CliIo } from '../../lib/cli/index.ts';
import { createEnvelope, deduplicationIdOf } from '../../lib/core/envelope.ts';
import { PermanentError } from '../../lib/core/errors.ts';
import { opsClientConfig } from '../../lib/ops/client.ts';
import type { OpsSqsCommand } from '../../lib/ops/queue.ts';
import { evidenceAttributes } from '../../lib/runtime/dead-letter.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { type CliRun, runCli, singleAttemptSqs } from '../factories/cli.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { runScript } from '../factories/script-process.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';

const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

/** Runs `sqs-jobs dlq` in-process against the emulator (`--endpoint` added), short polls. */
function cli(args: readonly string[], io: Partial<CliIo> = {}): Promise<CliRun> {
  return runCli(
    ['dlq', ...args, '--endpoint', emulator.endpoint, '--wait-seconds', '0'],
    emulator.endpoint,
    io,
  );
}

async function visible(queue: EmulatedQueue): Promise<number> {
  const out = await emulator.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages);
}

/** Puts a dead letter with the worker's evidence attributes into `dlq`; returns the body. */
async function deadLetter(
  dlq: EmulatedQueue,
  input: { id: string; type: string; error: Error; reason: string; sourceMessageId?: string },
): Promise<string> {
  const body = JSON.stringify(
    createEnvelope({
      type: input.type,
      source: '/checkout',
      id: input.id,
      data: { orderId: `o-${input.id}` },
    }),
  );
  await emulator.sqs.send(
    new SendMessageCommand({
      QueueUrl: dlq.url,
      MessageBody: body,
      MessageAttributes: evidenceAttributes(body, {
        jobType: input.type,
        error: input.error,
        reason: input.reason,
        attempts: 3,
        firstFailureAtMs: Date.parse('2026-11-29T07:00:00Z'),
        lastFailureAtMs: Date.parse('2026-11-29T07:05:00Z'),
        handlerVersion: '12',
        sourceMessageId: input.sourceMessageId ?? `src-${input.id}`,
      }),
    }),
  );
  return body;
}

/**
 * Holds (another reader's visibility timeout) the message of `queue` that `pick` accepts; the
 * others received are made visible again.
 */
async function holdWhere(queue: EmulatedQueue, pick: (message: Message) => boolean): Promise<Message> {
  const out = await emulator.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 300,
      MessageAttributeNames: ['All'],
    }),
  );
  const messages = out.Messages ?? [];
  const held = messages.find(pick);
  for (const message of messages) {
    if (message === held) continue;
    await emulator.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queue.url,
        ReceiptHandle: message.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
  }
  if (held === undefined) throw new Error('no message to hold');
  return held;
}

async function fixture() {
  const { queue, dlq } = await emulator.createQueuePair('payments', false);
  const notFound = (id: string) => new PermanentError(`payment ${id} not found`);
  await deadLetter(dlq, { id: 'p-1', type: 'payments.capture', error: notFound('p-1'), reason: 'HTTP 404' });
  await deadLetter(dlq, { id: 'p-2', type: 'payments.capture', error: notFound('p-2'), reason: 'HTTP 404' });
  await deadLetter(dlq, {
    id: 'p-3',
    type: 'payments.refund',
    error: new Error('socket hang up'),
    reason: 'attempts-used-up: ECONNRESET',
  });
  return { queue, dlq };
}

describe('sqs-jobs dlq list', () => {
  it('prints the DLQ grouped by cause, then job type, and leaves every message visible', async () => {
    const { dlq } = await fixture();
    const { code, stdout } = await cli(['list', '--dlq-url', dlq.url]);
    expect(code).toBe(0);
    expect(stdout).toContain('read 3 messages; nothing deleted, all visible again');
    const lines = stdout.split('\n');
    const reason404 = lines.findIndex((l) => /^ {2}HTTP 404 +2$/.test(l));
    expect(reason404).toBeGreaterThan(0);
    expect(lines[reason404 + 1]).toMatch(/^ {4}payments\.capture +2$/);
    expect(stdout).toMatch(/errors: PermanentError ×2/);
    expect(stdout).toContain(
      'failures 2026-11-29T07:00:00.000Z → 2026-11-29T07:05:00.000Z, attempts 3, handler 12',
    );
    expect(stdout).toContain('message: payment p-1 not found');
    expect(stdout).toMatch(/ {2}attempts-used-up: ECONNRESET +1/);
    expect(await visible(dlq)).toBe(3);
  });

  it('--json with a filter and another grouping', async () => {
    const { dlq } = await fixture();
    const { code, stdout } = await cli([
      'list',
      '--dlq-url',
      dlq.url,
      '--json',
      '--reason',
      'HTTP*',
      '--group-by',
      'error-name,job-type',
    ]);
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(json.read).toBe(3);
    expect(json.total).toBe(2);
    expect(json.filter).toBe('reason HTTP*');
    expect(json.groups).toHaveLength(1);
    expect(json.groups[0].key).toEqual({ errorName: 'PermanentError', jobType: 'payments.capture' });
    expect(json.release).toEqual({ released: 3, failed: [] });
  });
});

describe('sqs-jobs dlq show', () => {
  it('shows the evidence and the body of a job by job id, or by the source message id', async () => {
    const { dlq } = await fixture();
    const byJob = await cli(['show', '--dlq-url', dlq.url, '--job-id', 'p-3']);
    expect(byJob.code).toBe(0);
    expect(byJob.stdout).toMatch(/job id +p-3/);
    expect(byJob.stdout).toMatch(/reason +attempts-used-up: ECONNRESET/);
    expect(byJob.stdout).toMatch(/error +Error: socket hang up/);
    expect(byJob.stdout).toMatch(/source message id +src-p-3/);
    expect(byJob.stdout).toContain('stack:');
    expect(byJob.stdout).toContain('"orderId": "o-p-3"');

    const bySource = await cli(['show', '--dlq-url', dlq.url, '--message-id', 'src-p-1', '--json']);
    expect(bySource.code).toBe(0);
    const found = JSON.parse(bySource.stdout).found;
    expect(found).toHaveLength(1);
    expect(found[0].job.id).toBe('p-1');
    expect(found[0].evidence.attempts).toBe(3);
    expect(await visible(dlq)).toBe(3);
  });

  it('exits 1 when nothing matches and 2 without an id', async () => {
    const { dlq } = await fixture();
    const missing = await cli(['show', '--dlq-url', dlq.url, '--job-id', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('job nope not found among 3 messages');
    const noId = await cli(['show', '--dlq-url', dlq.url]);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toContain('show needs --message-id or --job-id');
  });
});

describe('sqs-jobs dlq redrive', () => {
  it('refuses without --yes when stdin is not a terminal, and moves nothing', async () => {
    const { queue, dlq } = await fixture();
    const { code, stderr } = await cli(['redrive', '--dlq-url', dlq.url, '--target-url', queue.url]);
    expect(code).toBe(2);
    expect(stderr).toContain('refusing to redrive without confirmation: stdin is not a terminal');
    expect(stderr).toContain('--dry-run');
    expect(await visible(dlq)).toBe(3);
  });

  it('--dry-run lists what would move and changes nothing', async () => {
    const { queue, dlq } = await fixture();
    const { code, stdout } = await cli([
      'redrive',
      '--dlq-url',
      dlq.url,
      '--target-url',
      queue.url,
      '--reason',
      'HTTP 404',
      '--dry-run',
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain('dry run: redrive reason HTTP 404');
    expect(stdout).toContain('would move 2 messages (nothing was sent or deleted):');
    expect(stdout).toMatch(/job p-1 +payments\.capture +HTTP 404/);
    expect(stdout).toMatch(/job p-2 +payments\.capture +HTTP 404/);
    expect(stdout).toContain('selected 2, moved 0 (dry run); left in the DLQ: 1 not selected');
    expect(await visible(dlq)).toBe(3);
    expect(await visible(queue)).toBe(0);
  });

  it('asks on a terminal: no moves nothing, yes moves', async () => {
    const { queue, dlq } = await fixture();
    const args = [
      'redrive',
      '--dlq-url',
      dlq.url,
      '--target-url',
      queue.url,
      '--job-type',
      'payments.refund',
    ];
    const questions: string[] = [];
    const declined = await cli(args, {
      stdinIsTTY: true,
      ask: async (q) => {
        questions.push(q);
        return 'n';
      },
    });
    expect(declined.code).toBe(1);
    expect(declined.stderr).toMatch(/from payments-dlq-\d+ \(about 3 messages\)/);
    expect(declined.stdout).toContain('not confirmed: nothing read, nothing moved');
    expect(questions).toHaveLength(1);
    expect(await visible(dlq)).toBe(3);

    const accepted = await cli(args, { stdinIsTTY: true, ask: async () => 'y' });
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain('selected 1, moved 1, failed 0; left in the DLQ: 2 not selected');
    expect(await visible(queue)).toBe(1);
    expect(await visible(dlq)).toBe(2);
  });

  it('--yes --verify-seconds reports a redriven job that came back, and exits 1', async () => {
    const { queue, dlq } = await fixture();
    const metrics = new Metrics({ namespace: 'SqsJobs' });
    metrics.clearDefaultDimensions();
    // The "fix" covers p-2 only; p-1 fails again and goes back to the DLQ.
    const handler = createWorker({
      jobs: [
        defineJob({
          type: 'payments.capture',
          queue: 'payments',
          schema: z.object({ orderId: z.string() }),
          run: async ({ orderId }) => {
            if (orderId === 'o-p-1') throw new PermanentError(`payment p-1 still not found`);
          },
        }),
      ],
      queueName: 'payments',
      queueUrl: queue.url,
      dlqUrl: dlq.url,
      handlerVersion: '13',
      idempotency: false,
      sqs: emulator.sqs,
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics,
      env: {},
    });
    const waits: number[] = [];
    /** The verify pause: the event source mapping runs the redriven jobs meanwhile. */
    const sleep = async (ms: number) => {
      waits.push(ms);
      const messages = await emulator.receive(queue);
      const records = messages.map((m) => recordFromMessage(m, queue.arn));
      await captureOutput(() => handler(sqsEvent(records), lambdaContext(60_000)));
      for (const m of messages) {
        await emulator.sqs.send(
          new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle }),
        );
      }
    };
    const { code, stdout, stderr } = await cli(
      [
        'redrive',
        '--dlq-url',
        dlq.url,
        '--target-url',
        queue.url,
        '--reason',
        'HTTP 404',
        '--yes',
        '--verify-seconds',
        '5',
      ],
      { sleep },
    );
    expect(waits).toEqual([5_000]);
    expect(stderr).toContain('waiting 5 s for the redriven jobs to run');
    expect(stdout).toContain('selected 2, moved 2, failed 0; left in the DLQ: 1 not selected');
    expect(stdout).toContain('verify after 5 s: 1 of 2 redriven jobs came back to the DLQ');
    expect(stdout).toMatch(
      /job p-1 +payments\.capture +now .*: PermanentError \(payment p-1 still not found\)/,
    );
    expect(code).toBe(1);
  });

  it.each([
    ['90 s fast', 90_000],
    ['90 s slow', -90_000],
  ] as const)(
    '--verify-seconds with the operator clock %s: reports the job that came back, not a dead letter that was not redriven',
    async (_clock, skewMs) => {
      const { queue, dlq } = await fixture();
      // p-2 was dead-lettered twice (sent twice by its producer); a `dlq list` elsewhere holds the
      // second dead letter while the redrive runs, so the redrive moves only the first.
      await deadLetter(dlq, {
        id: 'p-2',
        type: 'payments.capture',
        error: new PermanentError('payment p-2 not found'),
        reason: 'HTTP 404',
        sourceMessageId: 'src-p-2-again',
      });
      const held = await holdWhere(
        dlq,
        (m) => m.MessageAttributes?.SourceMessageId?.StringValue === 'src-p-2-again',
      );
      const metrics = new Metrics({ namespace: 'SqsJobs' });
      metrics.clearDefaultDimensions();
      // The "fix" covers p-2 only; p-1 fails again at once and goes back to the DLQ.
      const handler = createWorker({
        jobs: [
          defineJob({
            type: 'payments.capture',
            queue: 'payments',
            schema: z.object({ orderId: z.string() }),
            run: async ({ orderId }) => {
              if (orderId === 'o-p-1') throw new PermanentError(`payment p-1 still not found`);
            },
          }),
        ],
        queueName: 'payments',
        queueUrl: queue.url,
        dlqUrl: dlq.url,
        handlerVersion: '13',
        idempotency: false,
        sqs: emulator.sqs,
        logger: new Logger({ logLevel: 'SILENT' }),
        metrics,
        env: {},
      });
      /** The verify pause: the other reader lets go; the event source mapping runs the redriven jobs. */
      const sleep = async () => {
        await emulator.sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: dlq.url,
            ReceiptHandle: held.ReceiptHandle,
            VisibilityTimeout: 0,
          }),
        );
        const messages = await emulator.receive(queue);
        const records = messages.map((m) => recordFromMessage(m, queue.arn));
        await captureOutput(() => handler(sqsEvent(records), lambdaContext(60_000)));
        for (const m of messages) {
          await emulator.sqs.send(
            new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle }),
          );
        }
      };
      const args = [
        'redrive',
        '--dlq-url',
        dlq.url,
        '--target-url',
        queue.url,
        '--reason',
        'HTTP 404',
        '--yes',
      ];
      const { code, stdout } = await cli([...args, '--verify-seconds', '5'], {
        sleep,
        nowMs: () => Date.now() + skewMs,
      });
      expect(stdout).toContain('selected 2, moved 2, failed 0; left in the DLQ: 1 not selected');
      const verify = stdout.slice(stdout.indexOf('verify after'));
      expect(verify).toMatch(/^verify after 5 s: 1 of 2 redriven jobs came back to the DLQ\n/);
      expect(verify).toMatch(
        /job p-1 +payments\.capture +now .*: PermanentError \(payment p-1 still not found\)/,
      );
      expect(verify).not.toMatch(/job p-2 /);
      expect(code).toBe(1);
    },
  );

  it('--json prints counts and the verification', async () => {
    const { queue, dlq } = await fixture();
    const { code, stdout } = await cli(
      [
        'redrive',
        '--dlq-url',
        dlq.url,
        '--target-url',
        queue.url,
        '--yes',
        '--json',
        '--verify-seconds',
        '1',
      ],
      { sleep: async () => {} },
    );
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(json.counts).toEqual({ selected: 3, moved: 3, failed: 0, skipped: 0, notDeleted: 0 });
    expect(json.verify.cameBack).toEqual([]);
    expect(json.verify.targetPending).toBe(3);
  });

  it('FIFO: keeps the group and sends a fresh dedup id through the CLI', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const job = createEnvelope({
      type: 'booking.reserve',
      source: '/web',
      id: 'b-1',
      data: {},
      partitionKey: 'user-9',
    });
    await emulator.send(queue, job, 'user-9');
    const [original] = await emulator.receive(queue);
    await emulator.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: original?.ReceiptHandle }),
    );
    await emulator.send(dlq, job, 'user-9');

    const { code } = await cli(['redrive', '--dlq-url', dlq.url, '--target-url', queue.url, '--yes']);
    expect(code).toBe(0);
    const [arrived] = await emulator.receive(queue);
    expect(arrived?.Attributes?.MessageGroupId).toBe('user-9');
    expect(arrived?.Attributes?.MessageDeduplicationId).not.toBe(deduplicationIdOf(job));
  });

  /**
   * What a worker does with a job that fails again: takes it off `queue` and dead-letters it into
   * `dlq` (FIFO: same group) with evidence naming the message it received.
   */
  async function failAgain(queue: EmulatedQueue, dlq: EmulatedQueue): Promise<number> {
    const messages = await emulator.receive(queue);
    for (const m of messages) {
      const group = m.Attributes?.MessageGroupId;
      await emulator.sqs.send(
        new SendMessageCommand({
          QueueUrl: dlq.url,
          MessageBody: m.Body,
          MessageAttributes: evidenceAttributes(m.Body ?? '', {
            jobType: 'booking.reserve',
            error: new PermanentError('still out of stock'),
            reason: 'OutOfStockError',
            attempts: 1,
            firstFailureAtMs: Date.now(),
            lastFailureAtMs: Date.now(),
            handlerVersion: '13',
            sourceMessageId: m.MessageId ?? '',
          }),
          ...(group === undefined
            ? {}
            : { MessageGroupId: group, MessageDeduplicationId: `again-${m.MessageId}` }),
        }),
      );
      await emulator.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle }),
      );
    }
    return messages.length;
  }

  it('FIFO --verify-seconds: a job that came back behind the rest of its group is "not verified", exit 1', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    for (const id of ['b-1', 'b-2']) {
      const job = createEnvelope({
        type: 'booking.reserve',
        source: '/web',
        id,
        data: {},
        partitionKey: 'user-7',
      });
      await emulator.send(dlq, job, 'user-7');
    }
    // Only b-1 is redriven; it fails again and joins the group's end, behind b-2.
    const { code, stdout } = await cli(
      [
        'redrive',
        '--dlq-url',
        dlq.url,
        '--target-url',
        queue.url,
        '--job-id',
        'b-1',
        '--yes',
        '--verify-seconds',
        '5',
      ],
      {
        sleep: async () => {
          expect(await failAgain(queue, dlq)).toBe(1);
        },
      },
    );
    expect(stdout).toContain('selected 1, moved 1');
    expect(stdout).toContain('verify after 5 s: 0 of 1 redriven job came back to the DLQ');
    expect(stdout).toMatch(
      /not verified: 1 redriven job: in the FIFO DLQ its message group starts with another message/,
    );
    expect(stdout).toMatch(/ {2}job b-1 +booking\.reserve +group user-7, behind /);
    expect(stdout).not.toContain('nothing came back');
    expect(code).toBe(1);
  });

  it('FIFO --verify-seconds: a whole group redriven and completed is verified, exit 0', async () => {
    const { queue, dlq } = await emulator.createQueuePair('booking', true);
    const job = createEnvelope({
      type: 'booking.reserve',
      source: '/web',
      id: 'b-9',
      data: {},
      partitionKey: 'user-8',
    });
    await emulator.send(dlq, job, 'user-8');
    const { code, stdout } = await cli(
      ['redrive', '--dlq-url', dlq.url, '--target-url', queue.url, '--yes', '--verify-seconds', '5'],
      {
        sleep: async () => {
          // The job runs and completes: taken off the queue.
          for (const m of await emulator.receive(queue)) {
            await emulator.sqs.send(
              new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle }),
            );
          }
        },
      },
    );
    expect(stdout).toContain('nothing came back');
    expect(stdout).not.toContain('not verified');
    expect(code).toBe(0);
  });

  it('a job that comes back while the redrive still runs is reported (came back) and exits 1, also without --verify-seconds', async () => {
    const { queue, dlq } = await fixture();
    const { code, stdout } = await cli(
      ['redrive', '--dlq-url', dlq.url, '--target-url', queue.url, '--reason', 'HTTP 404', '--yes'],
      {
        // The worker fails the jobs again as soon as they are sent: they are back in the DLQ
        // before the redrive has finished reading it.
        createSqs: (input) => {
          const sqs = new SQSClient({
            ...opsClientConfig({ ...input, endpoint: emulator.endpoint }),
            credentials: CREDENTIALS,
          });
          return {
            async send(command: OpsSqsCommand) {
              const out = await sqs.send(command as Parameters<SQSClient['send']>[0]);
              const sent = command.input as { QueueUrl?: string; Entries?: unknown[] };
              if (command.constructor.name === 'SendMessageBatchCommand' && sent.QueueUrl === queue.url) {
                await failAgain(queue, dlq);
              }
              return out;
            },
            destroy: () => sqs.destroy(),
          };
        },
      },
    );
    expect(stdout).toMatch(/moved 2 messages/);
    expect(stdout).toContain(
      'selected 2, moved 2, failed 0; left in the DLQ: 1 not selected, 2 copies that came back during this redrive (not moved again)',
    );
    expect(code).toBe(1);
  });

  it('refuses a main queue as --dlq-url (no queue dead-letters into it), exit 2, unless --any-source-queue', async () => {
    const { queue, dlq } = await fixture();
    // Swapped by mistake: the live queue as the DLQ, the DLQ as the target.
    await emulator.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"live":1}' }));
    const swapped = await cli(['redrive', '--dlq-url', queue.url, '--target-url', dlq.url, '--yes']);
    expect(swapped.code).toBe(2);
    expect(swapped.stderr).toMatch(
      /^error: payments-\d+ is no queue's dead-letter queue: no queue's redrive policy names it \(checked: .+\); it has a dead-letter queue of its own .*add --any-source-queue\n$/,
    );
    expect(await visible(queue)).toBe(1);
    expect(await visible(dlq)).toBe(3);
    // Said on purpose: it runs (a dry run here).
    const anyway = await cli([
      'redrive',
      '--dlq-url',
      queue.url,
      '--target-url',
      dlq.url,
      '--any-source-queue',
      '--dry-run',
    ]);
    expect(anyway.code, anyway.stderr).toBe(0);
    expect(anyway.stdout).toMatch(/selected 1/);
  });

  it('a DLQ redriven to a queue that is not its source is a DLQ all the same (found among the queues): a warning, not a refusal', async () => {
    const { dlq } = await fixture();
    const other = await emulator.createQueue('other', false);
    const run = await cli(['redrive', '--dlq-url', dlq.url, '--target-url', other.url, '--dry-run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/selected 3/);
  });

  it('exits 2 with a clear message for a FIFO/standard mismatch, a bad URL, an unreachable endpoint, a bad flag', async () => {
    const { dlq } = await fixture();
    const fifo = await emulator.createQueue('booking', true);
    const mismatch = await cli(['redrive', '--dlq-url', dlq.url, '--target-url', fifo.url, '--yes']);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(
      /error: the DLQ payments-dlq-\d+ is a standard queue but the target booking-\d+\.fifo is a FIFO queue/,
    );

    const badUrl = await cli(['list', '--dlq-url', 'arn:aws:sqs:us-east-1:123456789012:payments-dlq']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('--dlq-url');
    expect(badUrl.stderr).toContain('is an ARN; pass the queue URL instead');

    const { code, stderr } = await runCli(
      [
        'dlq',
        'list',
        '--dlq-url',
        'http://127.0.0.1:9/000000000000/payments-dlq',
        '--endpoint',
        'http://127.0.0.1:9',
      ],
      'http://127.0.0.1:9',
      { createSqs: singleAttemptSqs },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/error: cannot reach the SQS endpoint .*ECONNREFUSED/);

    const badFlag = await cli(['list', '--dlq-url', dlq.url, '--hold-seconds', '0']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--hold-seconds.*must be a whole number from 1 to 43200/);
  });
});

/**
 * `sqs-jobs dlq` as a user runs it: a child process on bin/sqs-jobs.ts, or on its alias bin/dlq.ts
 * (`npm run dlq`).
 */
function run(
  args: readonly string[],
  env: Record<string, string> = {},
  entry: readonly string[] = ['bin/sqs-jobs.ts', 'dlq'],
): Promise<CliRun> {
  return runScript([...entry, ...args], { env });
}

describe('bin/sqs-jobs.ts dlq', () => {
  it('documents every command and flag in --help, and the StartMessageMoveTask alternative', async () => {
    const main = await run(['--help']);
    expect(main.code).toBe(0);
    for (const command of ['list', 'show', 'redrive']) expect(main.stdout).toContain(command);
    expect(main.stdout).toContain('StartMessageMoveTask');
    const common = ['--dlq-url', '--endpoint', '--region', '--hold-seconds', '--wait-seconds', '--json'];
    const filters = ['--job-type', '--reason', '--error-name', '--job-id'];
    const expected: Record<string, string[]> = {
      list: [...common, ...filters, '--max', '--group-by'],
      show: [...common, '--message-id', '--job-id', '--max'],
      redrive: [
        ...common,
        ...filters,
        '--target-url',
        '--max',
        '--dry-run',
        '--yes',
        '--verify-seconds',
        '--any-source-queue',
      ],
    };
    for (const [command, flags] of Object.entries(expected)) {
      const help = await run([command, '--help']);
      expect(help.code).toBe(0);
      for (const flag of flags) expect(help.stdout, `${command} --help documents ${flag}`).toContain(flag);
    }
    expect((await run(['redrive', '--help'])).stdout).toContain('StartMessageMoveTask');
  }, 60_000);

  it('refuses to redrive from a script without --yes (exit 2) before connecting anywhere; also as npm run dlq (bin/dlq.ts)', async () => {
    const { code, stderr } = await run(
      [
        'redrive',
        '--dlq-url',
        'http://127.0.0.1:9/000000000000/x-dlq',
        '--target-url',
        'http://127.0.0.1:9/000000000000/x',
      ],
      {},
      ['bin/dlq.ts'],
    );
    expect(code).toBe(2);
    expect(stderr).toContain('refusing to redrive without confirmation');
  }, 30_000);

  it('lists a DLQ through AWS_ENDPOINT_URL and exits 0', async () => {
    const { dlq } = await fixture();
    const { code, stdout } = await run(['list', '--dlq-url', dlq.url, '--wait-seconds', '0'], {
      AWS_ENDPOINT_URL: emulator.endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    expect(code).toBe(0);
    expect(stdout).toContain('read 3 messages; nothing deleted, all visible again');
    expect(await visible(dlq)).toBe(3);
  }, 30_000);
});
