/**
 * `serveLocal` (what `sqs-jobs local` runs for any app's template): the stack keeps running until
 * stopped, and what it prints is enough to reach every queue, DLQ and table from another terminal.
 */
import { fileURLToPath } from 'node:url';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { runSqsJobsCli } from '../../lib/cli/index.ts';
import { type LocalRuntimeDescription, serveLocal } from '../../lib/local/serve.ts';

const ASSEMBLY = fileURLToPath(new URL('../fixtures/local/assembly', import.meta.url));
/** The CLI's fixed default ports would collide with other tests running beside these. */
const ANY_PORTS = ['--sqs-port', '0', '--dynamodb-port', '0', '--scheduler-port', '0'];

/** Runs serveLocal; `whileRunning` gets the printed text while the stack is up, then the stack is stopped. */
async function serve(json: boolean, whileRunning: (printed: string) => Promise<void>) {
  const stop = new AbortController();
  let printed = '';
  let inspected: Promise<void> = Promise.resolve();
  const description = await serveLocal({
    assemblyDir: ASSEMBLY,
    synthesize: 'never',
    env: {},
    json,
    signal: stop.signal,
    stdout: {
      write(text: string) {
        printed += text;
        inspected = whileRunning(printed).finally(() => stop.abort());
      },
    },
  });
  await inspected;
  return { printed, description };
}

function sqsOn(endpoint: string) {
  return new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
}

describe('serveLocal', () => {
  it('prints endpoints, every main queue with its DLQ, the tables and paste-ready commands, and keeps the queues up until stopped', async () => {
    let endpoint = '';
    let urls: string[] = [];
    const { printed } = await serve(false, async (text) => {
      endpoint = /SQS endpoint\s+(\S+)/.exec(text)?.[1] ?? '';
      urls = [...text.matchAll(/^ {2}(?:url|dlq) {2}(http\S+)/gm)].map((m) => m[1] as string);
      const sqs = sqsOn(endpoint);
      try {
        for (const url of urls) {
          const attrs = await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
          );
          expect(attrs.Attributes?.QueueArn).toBeDefined();
        }
      } finally {
        sqs.destroy();
      }
    });
    expect(printed).toMatch(/DynamoDB endpoint\s+http:\/\/127\.0\.0\.1:\d+/);
    // The local EventBridge Scheduler, for JobClient's one-time schedules from another terminal.
    expect(printed).toMatch(/Scheduler endpoint http:\/\/127\.0\.0\.1:\d+/);
    expect(printed).toMatch(/AWS_ENDPOINT_URL_SCHEDULER=http:\/\/127\.0\.0\.1:\d+ AWS_REGION=/);
    // Work and Ordered have a DLQ, Observations has none; the DLQs are not listed as main queues.
    expect(printed).toMatch(/queue \S+ \(FIFO\)\n {2}url {2}http\S+ordered\.fifo\n {2}dlq {2}http\S+\.fifo/);
    expect(printed).toContain('dlq  (none: no redrive policy)');
    expect(printed).not.toMatch(/queue WorkDlq/);
    expect(urls.length).toBe(5);
    expect(printed).toMatch(/table StateTableA1B2C3D4 {2}\S+/);
    expect(printed).toContain(`npx sqs-jobs stats --queue-url ${urls[0]}`);
    expect(printed).toContain(
      `export AWS_ENDPOINT_URL_SQS=${endpoint} AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:`,
    );
    expect(printed).toMatch(/AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local\n/);
    expect(printed).toMatch(/npx sqs-jobs dlq list --dlq-url http\S+\n/);
    // Stopped: the embedded SQS emulator no longer answers.
    const after = sqsOn(endpoint);
    await expect(after.send(new GetQueueAttributesCommand({ QueueUrl: urls[0] }))).rejects.toThrow();
    after.destroy();
  });

  it('--json prints one object with the same facts', async () => {
    const { printed, description } = await serve(true, async () => {});
    const parsed = JSON.parse(printed) as LocalRuntimeDescription;
    expect(parsed).toEqual(JSON.parse(JSON.stringify(description)));
    // ProdOnlyQueue has a false Condition: not created locally, not listed.
    expect(parsed.queues.map((q) => q.logicalId).sort()).toEqual(
      ['ObservationsE1E2E3E4', 'OrderedQueue0A1B2C3D', 'WorkQueue5A2E1B2C'].sort(),
    );
    expect(parsed.queues.find((q) => q.logicalId === 'OrderedQueue0A1B2C3D')?.fifo).toBe(true);
    expect(parsed.workers.length).toBeGreaterThan(0);
  });
});

describe('sqs-jobs local', () => {
  function io(stop: AbortController, out: string[], err: string[]) {
    return {
      stdout: {
        write(text: string) {
          out.push(text);
          stop.abort();
        },
      },
      stderr: { write: (text: string) => err.push(text) },
      stdinIsTTY: false,
      env: {},
      signal: stop.signal,
    };
  }

  it('runs the app of --assembly until interrupted, prints it as JSON and exits 0', async () => {
    const stop = new AbortController();
    const out: string[] = [];
    const err: string[] = [];
    const code = await runSqsJobsCli(
      ['local', '--assembly', ASSEMBLY, '--synth', 'never', '--json', ...ANY_PORTS],
      io(stop, out, err),
    );
    expect(err.join('')).toBe('');
    expect(code).toBe(0);
    const printed = JSON.parse(out.join('')) as LocalRuntimeDescription;
    expect(printed.stackName).toBe('FixtureStack');
    expect(printed.queues.some((q) => q.fifo && q.deadLetterQueueUrl?.endsWith('.fifo'))).toBe(true);
  });

  it('--console serves the console beside the stack: its URL in the JSON, 403 without the token, closed at Ctrl-C', async () => {
    const stop = new AbortController();
    let printed = '';
    let checked: Promise<void> = Promise.resolve();
    let origin = '';
    const code = await runSqsJobsCli(
      ['local', '--assembly', ASSEMBLY, '--synth', 'never', '--json', '--console', ...ANY_PORTS],
      {
        stdout: {
          write(text: string) {
            printed += text;
            checked = (async () => {
              const { console: served } = JSON.parse(printed) as {
                console: { url: string; readOnly: boolean };
              };
              expect(served.readOnly).toBe(false);
              origin = new URL(served.url).origin;
              expect((await fetch(served.url)).status).toBe(200);
              expect((await fetch(`${origin}/api/queues`)).status).toBe(403);
            })().finally(() => stop.abort());
          },
        },
        stderr: { write: () => {} },
        stdinIsTTY: false,
        env: {},
        signal: stop.signal,
      },
    );
    await checked;
    expect(code).toBe(0);
    expect(printed.trim().split('\n')).toHaveLength(1);
    await expect(fetch(`${origin}/api/queues`)).rejects.toThrow();
  });

  it('an assembly that is not there is one error line naming it, exit 2', async () => {
    const stop = new AbortController();
    const out: string[] = [];
    const err: string[] = [];
    const missing = `${ASSEMBLY}-missing`;
    const code = await runSqsJobsCli(
      ['local', '--assembly', missing, '--synth', 'never', ...ANY_PORTS],
      io(stop, out, err),
    );
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err.join('')).toMatch(
      new RegExp(`^error: .*${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\n$`),
    );
  });

  it('a bad --synth value is refused before anything starts', async () => {
    const err: string[] = [];
    const code = await runSqsJobsCli(['local', '--synth', 'sometimes'], io(new AbortController(), [], err));
    expect(code).toBe(2);
    expect(err.join('')).toContain("'sometimes'");
  });
});
