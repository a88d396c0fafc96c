/**
 * What the local runtime opens and the queue URLs it hands out, as a user of `sqs-jobs local`
 * (and `npm start`, which starts the same runtime) meets them: every listening socket is on
 * 127.0.0.1 (the emulators take any credentials), and the queue URLs SQS answers with
 * (CreateQueue, GetQueueUrl, ListQueues) are the documented `http://127.0.0.1:<sqs port>/000000000000/<name>`,
 * the same after a restart on the same port.
 */
import { Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { CreateQueueCommand, GetQueueUrlCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSqsJobsCli } from '../../lib/cli/index.ts';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';

const ASSEMBLY = fileURLToPath(new URL('../fixtures/local/assembly', import.meta.url));

/** The listening servers of this process (Node's active handles). */
function listeningServers(): Server[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h): h is Server => h instanceof Server && h.listening);
}

const running: LocalRuntime[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((rt) => rt.stop()));
});

async function start(sqsPort: number): Promise<LocalRuntime> {
  const rt = await startLocalRuntime({
    assemblyDir: ASSEMBLY,
    synthesize: 'never',
    env: {},
    ports: { sqs: sqsPort },
  });
  running.push(rt);
  return rt;
}

function client(rt: LocalRuntime): SQSClient {
  return new SQSClient({ endpoint: rt.endpoints.sqs, region: rt.region, credentials: rt.credentials });
}

describe('sqs-jobs local: loopback only, documented queue URLs', () => {
  it('listens on 127.0.0.1 only, the embedded SQS and DynamoDB emulators included', async () => {
    const before = new Set(listeningServers());
    await start(0);
    const opened = listeningServers().filter((s) => !before.has(s));
    // The SQS proxy, fauxqs, dynalite, the scheduler: at least those four.
    expect(opened.length).toBeGreaterThanOrEqual(4);
    const addresses = opened.map((s) => {
      const address = s.address();
      return typeof address === 'object' && address !== null ? address.address : String(address);
    });
    expect(addresses.filter((a) => a !== '127.0.0.1')).toEqual([]);
  });

  it('answers GetQueueUrl, ListQueues and CreateQueue with the documented URLs, the same after a restart', async () => {
    // Any free port, taken by the runtime itself: a port found free and closed before the start
    // could be taken by another process in between (it was, in a parallel run).
    const first = await start(0);
    const port = Number(new URL(first.endpoints.sqs).port);
    expect(port).toBeGreaterThan(0);
    const name = first.queue('work').name;
    const documented = `http://127.0.0.1:${port}/000000000000/${name}`;
    const sqs = client(first);
    expect((await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toBe(documented);
    expect((await sqs.send(new ListQueuesCommand({}))).QueueUrls).toContain(documented);
    const created = await sqs.send(new CreateQueueCommand({ QueueName: 'loopback-extra' }));
    expect(created.QueueUrl).toBe(`http://127.0.0.1:${port}/000000000000/loopback-extra`);
    sqs.destroy();
    await first.stop();
    running.splice(0);

    const second = await start(port);
    const again = client(second);
    expect((await again.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toBe(documented);
    again.destroy();
  });

  it('sqs-jobs stats on a local queue URL, with no endpoint set, reaches the emulator: no warning, no AWS', async () => {
    const rt = await start(0);
    const queue = rt.queue('work');
    const warnings: unknown[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args) => void warnings.push(args));
    let stdout = '';
    let stderr = '';
    // The SDK reads credentials from the process environment (any values work for an emulator).
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    try {
      const code = await runSqsJobsCli(['stats', '--queue-url', queue.url, '--json'], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        stdinIsTTY: false,
        // No AWS_ENDPOINT_URL_SQS: only the queue URL says where SQS is.
        env: {},
      });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    } finally {
      warn.mockRestore();
      vi.unstubAllEnvs();
    }
    expect(warnings).toEqual([]);
    const report = JSON.parse(stdout) as { queues: { url: string; deadLetterQueue?: { url?: string } }[] };
    expect(report.queues.map((q) => q.url)).toEqual([queue.url]);
    expect(queue.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/000000000000\//);
  });
});
