/**
 * `sqs-jobs stats` in-process against the embedded SQS emulator: the counts match what was sent,
 * held in flight and delayed; the DLQ is found through the redrive policy; --json shape; --watch
 * refreshes until its abort signal; the age of the oldest message is n/a (with the reason) against
 * an endpoint, and the CloudWatch datapoint on AWS (a fake CloudWatch here).
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../lib/cli/index.ts';
import type { MetricDataRequest } from '../../lib/ops/oldest-age.ts';
import { type CliRun, runCli } from '../factories/cli.ts';
import { type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';

let emulator: EmulatedSqs;
let counter = 0;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

/** Runs `sqs-jobs stats` in-process against the emulator (`--endpoint` added unless `aws`). */
function stats(args: readonly string[], io: Partial<CliIo> = {}, aws = false): Promise<CliRun> {
  return runCli(['stats', ...args, ...(aws ? [] : ['--endpoint', emulator.endpoint])], emulator.endpoint, io);
}

/** A queue named `<prefix>-<n>` with an optional redrive policy. */
async function queue(prefix: string, options: { dlqArn?: string; fifo?: boolean } = {}) {
  counter += 1;
  const name = `${prefix}-${counter}${options.fifo ? '.fifo' : ''}`;
  const created = await emulator.sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        ...(options.fifo ? { FifoQueue: 'true' } : {}),
        ...(options.dlqArn
          ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: options.dlqArn, maxReceiveCount: 5 }) }
          : {}),
      },
    }),
  );
  const url = created.QueueUrl as string;
  const attributes = await emulator.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return { name, url, arn: attributes.Attributes?.QueueArn as string };
}

async function send(url: string, count: number, delaySeconds?: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await emulator.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: `{"n":${i}}`,
        ...(delaySeconds === undefined ? {} : { DelaySeconds: delaySeconds }),
      }),
    );
  }
}

/** A worker queue with 3 visible + 1 in flight + 2 delayed messages, and a DLQ holding 2. */
async function fixture(prefix: string) {
  const dlq = await queue(`${prefix}-dlq`);
  const main = await queue(prefix, { dlqArn: dlq.arn });
  await send(main.url, 4);
  await send(main.url, 2, 600);
  const held = await emulator.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: main.url, MaxNumberOfMessages: 1, VisibilityTimeout: 600 }),
  );
  expect(held.Messages).toHaveLength(1);
  await send(dlq.url, 2);
  return { main, dlq };
}

describe('sqs-jobs stats', () => {
  it('--json: visible, in flight, delayed and the DLQ depth of each queue', async () => {
    const { main, dlq } = await fixture('orders');
    const bare = await queue('bare');
    const { code, stdout, stderr } = await stats([
      '--queue-url',
      main.url,
      '--queue-url',
      bare.url,
      '--json',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(Date.parse(json.at)).not.toBeNaN();
    expect(json.queues).toHaveLength(2);
    const [withDlq, withoutDlq] = json.queues;
    expect(withDlq).toMatchObject({
      name: main.name,
      url: main.url,
      arn: main.arn,
      fifo: false,
      visible: 3,
      inFlight: 1,
      delayed: 2,
      deadLetterQueue: {
        name: dlq.name,
        url: dlq.url,
        arn: dlq.arn,
        maxReceiveCount: 5,
        visible: 2,
        inFlight: 0,
        delayed: 0,
      },
    });
    expect(withDlq.oldestMessageAge).toEqual({
      seconds: null,
      source: null,
      at: null,
      note: expect.stringContaining(
        `SQS reports the age of the oldest message only as the CloudWatch metric ApproximateAgeOfOldestMessage, which the custom endpoint ${emulator.endpoint}`,
      ),
    });
    expect(withoutDlq).toMatchObject({
      name: bare.name,
      visible: 0,
      inFlight: 0,
      delayed: 0,
      deadLetterQueue: null,
    });
    expect(withoutDlq.deadLetterQueueNote).toMatch(/^no redrive policy/);
  });

  it('text: one row per queue, the DLQ column, and notes that say why something is missing', async () => {
    const { main, dlq } = await fixture('text');
    const bare = await queue('text-bare');
    const { code, stdout } = await stats(['--queue-url', main.url, '--queue-url', bare.url]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^queue stats at \S+Z \(counts are approximate/);
    expect(lines[1]).toMatch(
      /^queue +type +visible +in flight +delayed +oldest +dead-letter queue: visible$/,
    );
    expect(stdout).toMatch(new RegExp(`^${main.name} +standard +3 +1 +2 +n/a +${dlq.name}: 2$`, 'm'));
    expect(stdout).toMatch(new RegExp(`^${bare.name} +standard +0 +0 +0 +n/a +none$`, 'm'));
    expect(stdout).toContain(
      'note: oldest: n/a: SQS reports the age of the oldest message only as the CloudWatch metric ApproximateAgeOfOldestMessage',
    );
    expect(stdout).toContain(`note: ${bare.name}: no redrive policy`);
  });

  it('--queue-name-prefix lists the queues through ListQueues (a DLQ that matches is a row too)', async () => {
    const { main, dlq } = await fixture('listed');
    await queue('other');
    const { code, stdout } = await stats(['--queue-name-prefix', 'listed', '--json']);
    expect(code).toBe(0);
    const names = JSON.parse(stdout).queues.map((q: { name: string }) => q.name);
    expect(names.sort()).toEqual([main.name, dlq.name].sort());

    const none = await stats(['--queue-name-prefix', 'nothing-has-this-name']);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/: no queues$/m);
  });

  it('FIFO queue and a redrive policy naming a DLQ that no longer exists', async () => {
    const dlq = await queue('gone-dlq', { fifo: true });
    const main = await queue('gone', { dlqArn: dlq.arn, fifo: true });
    await emulator.sqs.send(new DeleteQueueCommand({ QueueUrl: dlq.url }));
    const { code, stdout } = await stats(['--queue-url', main.url, '--json']);
    expect(code).toBe(0);
    const [row] = JSON.parse(stdout).queues;
    expect(row.fifo).toBe(true);
    expect(row.deadLetterQueue).toBeNull();
    expect(row.deadLetterQueueNote).toBe(
      `the dead-letter queue ${dlq.arn} of its redrive policy does not exist`,
    );
  });

  it('--watch --json prints one line per refresh, re-reads each time, and stops on the abort signal', async () => {
    const { main } = await fixture('watch');
    const interrupt = new AbortController();
    const lines: string[] = [];
    const waits: Array<number> = [];
    const { code, stderr } = await stats(['--queue-url', main.url, '--watch', '7', '--json'], {
      stdout: {
        write: (text: string) => {
          lines.push(...text.split('\n').filter((l) => l !== ''));
          if (lines.length === 2) interrupt.abort();
        },
      },
      signal: interrupt.signal,
      // Between refreshes one more job arrives: the second refresh must see it.
      sleep: async (ms) => {
        waits.push(ms);
        await send(main.url, 1);
      },
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lines).toHaveLength(2);
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first.queues[0].visible).toBe(3);
    expect(second.queues[0].visible).toBe(4);
    expect(waits).toEqual([7_000]);
  });

  it('--watch in text on a pipe prints each refresh in turn; on a terminal it redraws', async () => {
    const { main } = await fixture('watch-text');
    for (const isTTY of [false, true]) {
      const interrupt = new AbortController();
      let stdout = '';
      let refreshes = 0;
      const { code } = await stats(['--queue-url', main.url, '--watch'], {
        stdout: {
          isTTY,
          write: (text: string) => {
            stdout += text;
            refreshes += 1;
            if (refreshes === 2) interrupt.abort();
          },
        },
        signal: interrupt.signal,
        sleep: async () => {},
      });
      expect(code).toBe(0);
      const count = (text: string) => stdout.split(text).length - 1;
      expect(count('\x1b[H\x1b[2Jqueue stats at ')).toBe(isTTY ? 2 : 0);
      expect(count('\nqueue stats at ') + (stdout.startsWith('queue stats at ') ? 1 : 0)).toBe(isTTY ? 0 : 2);
      if (isTTY) expect(stdout).toContain('refreshing every 5 s; Ctrl-C to stop');
    }
  });

  it('on AWS reads the age of the oldest message from CloudWatch and shows the datapoint', async () => {
    const { main, dlq } = await fixture('aws');
    const requests: MetricDataRequest[] = [];
    const now = Date.parse('2026-11-30T10:45:30Z');
    // As on AWS: queue URLs on an AWS host (a URL on this machine is an emulator's, whose endpoint
    // it names); the test's client still reaches the emulator, which finds queues by region and name.
    const onAws = (url: string) => url.replace(/^http:\/\/[^/]+/, 'https://sqs.us-east-1.amazonaws.com');
    const { code, stdout } = await stats(
      ['--queue-url', onAws(main.url), '--queue-url', onAws(dlq.url)],
      {
        nowMs: () => now,
        createMetrics: async (input) => {
          expect(input.endpoint).toBeUndefined();
          return {
            async getMetricData(request) {
              requests.push(request);
              return {
                MetricDataResults: [
                  {
                    Id: 'q0',
                    Timestamps: [new Date('2026-11-30T10:44:00Z'), new Date('2026-11-30T10:43:00Z')],
                    Values: [192, 130],
                  },
                  { Id: 'q1', Timestamps: [], Values: [] },
                ],
              };
            },
          };
        },
      },
      true,
    );
    expect(code).toBe(0);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.MetricDataQueries.map((q) => q.MetricStat.Metric.Dimensions[0]!.Value)).toEqual([
      main.name,
      dlq.name,
    ]);
    expect(stdout).toMatch(
      new RegExp(`^${main.name} +standard +3 +1 +2 +3m 12s @10:44Z +${dlq.name}: 2$`, 'm'),
    );
    expect(stdout).toMatch(new RegExp(`^${dlq.name} +standard +2 +0 +0 +n/a +none$`, 'm'));
    expect(stdout).toContain(
      `note: ${dlq.name}: oldest: n/a: no ApproximateAgeOfOldestMessage datapoint in CloudWatch for the last 15 min`,
    );
    expect(stdout).toContain(
      'note: oldest: CloudWatch ApproximateAgeOfOldestMessage, Maximum of the latest 1-minute',
    );
  });

  it('exits 2 with one line: no queue given, a queue that does not exist, a bad --watch', async () => {
    const none = await stats([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      'error: stats needs --queue-url <url> or --queue-name-prefix <prefix> (add --help for usage)\n',
    );
    const { url } = await queue('deleted');
    await emulator.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    const missing = await stats(['--queue-url', url]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: queue does not exist: \S+deleted-\d+ \(check the URL/);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    const badWatch = await stats(['--queue-url', url, '--watch', '0']);
    expect(badWatch.code).toBe(2);
    expect(badWatch.stderr).toMatch(
      /^error: option '--watch \[seconds\]' argument '0' is invalid\. must be a whole number from 1 to 3600 \(add --help for usage\)\n$/,
    );
  });
});
