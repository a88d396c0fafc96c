/**
 * `sqs-jobs send` in-process against the embedded SQS emulator: an envelope from the flag and from
 * stdin, one built from --type/--data, the body received intact, FIFO group and dedup id, and the
 * refusals (FIFO without partition key, invalid envelope, bad JSON, missing queue) as one line with
 * exit code 2 and nothing sent.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliIo, DEFAULT_CLI_SOURCE } from '../../lib/cli/index.ts';
import { deduplicationIdOf, parseEnvelope } from '../../lib/core/envelope.ts';
import { type CliRun, runCli, singleAttemptSqs } from '../factories/cli.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

/** Runs `sqs-jobs send` in-process against the emulator (`--endpoint` added). */
function send(args: readonly string[], io: Partial<CliIo> = {}): Promise<CliRun> {
  return runCli(['send', ...args, '--endpoint', emulator.endpoint], emulator.endpoint, io);
}

/** Messages on the queue (visible + in flight + delayed), without receiving them. */
async function depth(queue: EmulatedQueue): Promise<number> {
  const out = await emulator.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queue.url,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return (
    Number(a.ApproximateNumberOfMessages) +
    Number(a.ApproximateNumberOfMessagesNotVisible) +
    Number(a.ApproximateNumberOfMessagesDelayed)
  );
}

/** Written by hand, as another service would: spacing, a precise decimal and the largest safe integer, an extension attribute. */
const ENVELOPE_TEXT = `{
  "specversion": "1.0",
  "id": "job-7",
  "source": "/services/legacy",
  "type": "payments.capture",
  "time": "2026-11-30T09:00:00Z",
  "datacontenttype": "application/json",
  "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  "data": { "paymentId": "p-1", "amount": 10.50, "ledgerRef": 9007199254740991 }
}`;

describe('sqs-jobs send', () => {
  it('--envelope <json>: the body is received exactly as given, and the MessageId is printed', async () => {
    const queue = await emulator.createQueue('send-envelope', false);
    const { code, stdout, stderr } = await send(['--queue-url', queue.url, '--envelope', ENVELOPE_TEXT]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const [received] = await emulator.receive(queue);
    expect(received?.Body).toBe(ENVELOPE_TEXT);
    expect(stdout).toBe(
      `sent job job-7 (payments.capture) to ${queue.url.split('/').pop()}: MessageId ${received?.MessageId}\n`,
    );
  });

  it('--envelope - reads stdin (surrounding whitespace dropped); --json prints the ids', async () => {
    const queue = await emulator.createQueue('send-stdin', false);
    const { code, stdout } = await send(['--queue-url', queue.url, '--envelope', '-', '--json'], {
      readStdin: async () => `\n${ENVELOPE_TEXT}\n`,
    });
    expect(code).toBe(0);
    const [received] = await emulator.receive(queue);
    expect(received?.Body).toBe(ENVELOPE_TEXT);
    expect(JSON.parse(stdout)).toEqual({
      queueUrl: queue.url,
      id: 'job-7',
      type: 'payments.capture',
      messageId: received?.MessageId,
    });

    const empty = await send(['--queue-url', queue.url, '--envelope', '-'], { readStdin: async () => ' \n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      'error: --envelope -: stdin was empty; pipe the JSON in, e.g. --envelope - < job.json\n',
    );
  });

  it('--type/--data builds a valid envelope with the data exactly as written', async () => {
    const queue = await emulator.createQueue('send-type', false);
    const data = '{"bookingId":"b-42","amount":10.50,"ledgerRef":9007199254740991}';
    const { code, stdout } = await send([
      '--queue-url',
      queue.url,
      '--type',
      'payments.capture',
      '--data',
      data,
      '--id',
      'cli-1',
    ]);
    expect(code).toBe(0);
    const [received] = await emulator.receive(queue);
    const body = received?.Body ?? '';
    expect(body.endsWith(`,"data":${data}}`)).toBe(true);
    expect(parseEnvelope(body)).toMatchObject({
      specversion: '1.0',
      id: 'cli-1',
      source: DEFAULT_CLI_SOURCE,
      type: 'payments.capture',
      datacontenttype: 'application/json',
    });
    expect(stdout).toContain(`sent job cli-1 (payments.capture)`);
    expect(stdout).toContain(`MessageId ${received?.MessageId}`);
  });

  it('--data - reads the data from stdin; --source and --delay-seconds are used', async () => {
    const queue = await emulator.createQueue('send-data-stdin', false);
    const { code } = await send(
      [
        '--queue-url',
        queue.url,
        '--type',
        'notifications.email',
        '--data',
        '-',
        '--source',
        '/ops/alice',
        '--delay-seconds',
        '600',
      ],
      { readStdin: async () => '{"bookingId":"b-9"}\n' },
    );
    expect(code).toBe(0);
    expect(await emulator.receive(queue)).toEqual([]); // delayed
    const attributes = await emulator.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
      }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
  });

  it('FIFO: the partition key becomes the MessageGroupId, source + id the dedup id; the SequenceNumber is printed', async () => {
    const queue = await emulator.createQueue('send-fifo', true);
    const { code, stdout } = await send([
      '--queue-url',
      queue.url,
      '--type',
      'booking.reserve-inventory',
      '--data',
      '{"bookingId":"b-1"}',
      '--partition-key',
      'user-7',
      '--id',
      'r-1',
    ]);
    expect(code).toBe(0);
    const [received] = await emulator.receive(queue);
    expect(received?.Attributes?.MessageGroupId).toBe('user-7');
    expect(received?.Attributes?.MessageDeduplicationId).toBe(
      deduplicationIdOf({
        source: DEFAULT_CLI_SOURCE,
        id: 'r-1',
        type: 'booking.reserve-inventory',
        data: { bookingId: 'b-1' },
      }),
    );
    expect(parseEnvelope(received?.Body ?? '').partitionkey).toBe('user-7');
    expect(stdout).toMatch(
      new RegExp(
        `MessageId ${received?.MessageId}, SequenceNumber ${received?.Attributes?.SequenceNumber}\\n$`,
      ),
    );
  });

  it('FIFO without a partition key is refused in one line, nothing sent; a ready envelope is told its field', async () => {
    const queue = await emulator.createQueue('send-fifo-refused', true);
    const fromFlags = await send(['--queue-url', queue.url, '--type', 'booking.reserve', '--data', '{}']);
    expect(fromFlags.code).toBe(2);
    const name = queue.url.split('/').pop();
    expect(fromFlags.stderr).toBe(
      `error: --partition-key is required on FIFO queue "${name}": it becomes the MessageGroupId (e.g. the user id)\n`,
    );
    const fromEnvelope = await send(['--queue-url', queue.url, '--envelope', ENVELOPE_TEXT]);
    expect(fromEnvelope.code).toBe(2);
    expect(fromEnvelope.stderr).toBe(
      `error: partitionkey is required on FIFO queue "${name}": it becomes the MessageGroupId (e.g. the user id)\n`,
    );
    const spaced = await send([
      '--queue-url',
      queue.url,
      '--type',
      'booking.reserve',
      '--data',
      '{}',
      '--partition-key',
      'user 7',
    ]);
    expect(spaced.code).toBe(2);
    expect(spaced.stderr).toMatch(
      /^error: --partition-key must be 1-128 characters of a-z, A-Z, 0-9 and punctuation/,
    );
    expect(await depth(queue)).toBe(0);
  });

  it('an invalid envelope, bad JSON, a missing --data, a flag mix and a delay on FIFO are refused with exit 2', async () => {
    const queue = await emulator.createQueue('send-invalid', false);
    const cases: Array<[string[], string]> = [
      [
        ['--envelope', ENVELOPE_TEXT.replace('2026-11-30T09:00:00Z', 'yesterday')],
        'error: --envelope: time must be an RFC 3339 timestamp, got "yesterday"\n',
      ],
      [
        ['--envelope', ENVELOPE_TEXT.replace('"specversion": "1.0",', '')],
        'error: --envelope: specversion is missing\n',
      ],
      [['--envelope', '{"id":'], 'error: --envelope: body is not JSON'],
      [['--type', 'x', '--data', '{bookingId: 1}'], 'error: --data is not JSON ('],
      [['--type', '', '--data', '{}'], 'error: --type must not be empty\n'],
      [['--type', 'x'], "error: --type needs --data <json|->: the job's data"],
      [['--data', '{}'], 'error: --data needs --type <type>'],
      [[], 'error: send needs --envelope <json|-> or --type <type> with --data <json|->'],
      [
        ['--envelope', ENVELOPE_TEXT, '--partition-key', 'u'],
        "error: option '--envelope <json>' cannot be used with option '--partition-key <key>' (add --help for usage)\n",
      ],
      [
        ['--type', 'x', '--data', '{}', '--delay-seconds', '901'],
        "error: option '--delay-seconds <n>' argument '901' is invalid.",
      ],
    ];
    for (const [args, message] of cases) {
      const { code, stderr, stdout } = await send(['--queue-url', queue.url, ...args]);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr, args.join(' ')).toContain(message);
      expect(stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(stdout).toBe('');
    }
    const fifo = await emulator.createQueue('send-invalid', true);
    const delayed = await send([
      '--queue-url',
      fifo.url,
      '--type',
      'x',
      '--data',
      '{}',
      '--partition-key',
      'u',
      '--delay-seconds',
      '5',
    ]);
    expect(delayed.code).toBe(2);
    expect(delayed.stderr).toMatch(/^error: --delay-seconds is not allowed on FIFO queue/);
    expect(await depth(queue)).toBe(0);
    expect(await depth(fifo)).toBe(0);
  });

  it("standard queue: the partition key is sent as the MessageGroupId (a fair queue's tenant), without a dedup id", async () => {
    const queue = await emulator.createQueue('send-fair', false);
    const args = [
      '--queue-url',
      queue.url,
      '--type',
      'mail.send',
      '--data',
      '{}',
      '--partition-key',
      'tenant-7',
    ];
    const dry = await send([...args, '--id', 'm-1', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    const checked = JSON.parse(dry.stdout) as Record<string, unknown>;
    expect(checked.messageGroupId).toBe('tenant-7');
    expect(checked).not.toHaveProperty('messageDeduplicationId');
    // fauxqs takes a MessageGroupId on a standard queue but does not hand it back on receive (AWS
    // does, moto does): the message arrives, its envelope keeps the key.
    const sent = await send([...args, '--id', 'm-2']);
    expect(sent.code).toBe(0);
    const [received] = await emulator.receive(queue);
    expect(parseEnvelope(received?.Body ?? '').partitionkey).toBe('tenant-7');
  });

  it('--dry-run checks and shows what would be sent, and sends nothing', async () => {
    const queue = await emulator.createQueue('send-dry', true);
    const envelope = ENVELOPE_TEXT.replace('"data":', '"partitionkey": "user-3",\n  "data":');
    const { code, stdout } = await send([
      '--queue-url',
      queue.url,
      '--envelope',
      envelope,
      '--dry-run',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      dryRun: true,
      queueUrl: queue.url,
      id: 'job-7',
      type: 'payments.capture',
      messageGroupId: 'user-3',
      messageDeduplicationId: deduplicationIdOf(parseEnvelope(envelope)),
      bytes: Buffer.byteLength(envelope),
      body: envelope,
    });
    const text = await send(['--queue-url', queue.url, '--envelope', envelope, '--dry-run']);
    expect(text.stdout).toMatch(
      /^dry run: job job-7 \(payments\.capture\) checked for send-dry-\d+\.fifo; nothing was sent\n/,
    );
    expect(text.stdout).toMatch(/^ {2}MessageGroupId +user-3$/m);
    expect(await depth(queue)).toBe(0);
  });

  it('a queue that does not exist, or an endpoint that is not there: one line, exit 2', async () => {
    const missing = await send([
      '--queue-url',
      `${emulator.endpoint}/000000000000/no-such-queue`,
      '--type',
      'x',
      '--data',
      '{}',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: queue does not exist: \S+\/no-such-queue \(check the URL/m);

    const { code, stderr } = await runCli(
      [
        'send',
        '--queue-url',
        'http://127.0.0.1:9/000000000000/jobs',
        '--type',
        'x',
        '--data',
        '{}',
        '--endpoint',
        'http://127.0.0.1:9',
      ],
      'http://127.0.0.1:9',
      { createSqs: singleAttemptSqs },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^error: cannot reach the SQS endpoint for http:\/\/127\.0\.0\.1:9\/000000000000\/jobs .*ECONNREFUSED/m,
    );
  });
});
