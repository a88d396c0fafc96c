/**
 * `sqs-jobs console` as a command, in-process, on the embedded SQS emulator: a stack's outputs
 * file gives the queues and their DLQs; the command prints the URL (token included), serves the
 * API until interrupted, and exits 0; without anything to look at it refuses with exit code 2.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliIo, runSqsJobsCli } from '../../lib/cli/index.ts';
import { TOKEN_HEADER } from '../../lib/console/server.ts';
import { type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

function io(signal: AbortSignal, onOut: (text: string) => void): CliIo & { err: string[] } {
  const err: string[] = [];
  return {
    err,
    stdout: { write: (text: string) => onOut(text) },
    stderr: { write: (text: string) => err.push(text) },
    stdinIsTTY: false,
    env: {},
    signal,
  };
}

describe('sqs-jobs console', () => {
  it('serves the queues of an outputs file until interrupted, behind its token', async () => {
    const queue = await emulator.createQueue('work', false);
    const dlq = await emulator.createQueue('work-dlq', false);
    await emulator.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: queue.url,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 8 }) },
      }),
    );
    const dir = mkdtempSync(join(tmpdir(), 'console-cli-'));
    const outputs = join(dir, 'outputs.json');
    writeFileSync(outputs, JSON.stringify({ Jobs: { WorkQueueUrl: queue.url, WorkDlqUrl: dlq.url } }));

    const interrupt = new AbortController();
    let printed = '';
    let onUrl: (url: string) => void = () => {};
    const url = new Promise<string>((resolve) => {
      onUrl = resolve;
    });
    const cliIo = io(interrupt.signal, (text) => {
      printed += text;
      const match = /"url":"([^"]+)"/.exec(printed);
      if (match?.[1]) onUrl(match[1]);
    });
    const exit = runSqsJobsCli(
      ['console', '--outputs-file', outputs, '--endpoint', emulator.endpoint, '--json', '--read-only'],
      cliIo,
    );
    const consoleUrl = await Promise.race([
      url,
      exit.then((code) => {
        throw new Error(`console exited ${code}: ${cliIo.err.join('')}`);
      }),
    ]);
    const { origin, searchParams } = new URL(consoleUrl);
    const token = searchParams.get('token') ?? '';
    expect(new URL(consoleUrl).hostname).toBe('127.0.0.1');
    expect(token.length).toBeGreaterThanOrEqual(40);

    const headers = { [TOKEN_HEADER]: token };
    const config = (await (await fetch(`${origin}/api/config`, { headers })).json()) as Record<
      string,
      unknown
    >;
    expect(config).toMatchObject({ title: 'Jobs', mode: 'endpoint', readOnly: true });
    const queues = (await (await fetch(`${origin}/api/queues`, { headers })).json()) as {
      queues: { id: string; dlq: { url: string } | null; oldestAgeSeconds: number | null }[];
      error?: string;
    };
    expect(queues.error).toBeUndefined();
    expect(queues.queues).toMatchObject([{ id: 'Work', dlq: { url: dlq.url }, oldestAgeSeconds: null }]);
    const page = await fetch(`${origin}/?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    // The key opens a session: the page gets a secret of its own, neither it nor the cookie is the key.
    const html = await page.text();
    expect(html).toMatch(/name="sqs-jobs-token" content="[\w-]{40,}"/);
    expect(html).not.toContain(token);
    expect(page.headers.get('set-cookie')).not.toContain(token);
    expect((await fetch(`${origin}/api/queues`)).status).toBe(403);

    interrupt.abort();
    expect(await exit).toBe(0);
    await expect(fetch(`${origin}/api/config`, { headers })).rejects.toThrow();
  });

  it('refuses to start without queues to show (exit code 2)', async () => {
    const cliIo = io(new AbortController().signal, () => {});
    expect(await runSqsJobsCli(['console'], cliIo)).toBe(2);
    expect(cliIo.err.join('')).toMatch(
      /console needs one of --local <file>, --outputs-file <file> or --queue-url <url>/,
    );
  });
});
