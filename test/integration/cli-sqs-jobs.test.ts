/**
 * bin/sqs-jobs.ts as a user runs it: a child process under tsx. Its help, a refusal of an unknown
 * command, and `send` (envelope piped on stdin) then `stats` against the embedded emulator through
 * AWS_ENDPOINT_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { runScript, type ScriptRun } from '../factories/script-process.ts';

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

function sqsJobs(
  args: readonly string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<ScriptRun> {
  return runScript(['bin/sqs-jobs.ts', ...args], {
    stdin: options.stdin ?? '',
    ...(options.env ? { env: options.env } : {}),
  });
}

describe('bin/sqs-jobs.ts', () => {
  it('--help lists the commands; each command documents its flags; an unknown command is one line, exit 2', async () => {
    const main = await sqsJobs(['--help']);
    expect(main.code).toBe(0);
    for (const command of ['stats', 'send', 'dlq'])
      expect(main.stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'));
    const common = ['--endpoint', '--region', '--profile', '--json'];
    const expected: Record<string, string[]> = {
      stats: [...common, '--queue-url', '--queue-name-prefix', '--watch', 'ApproximateAgeOfOldestMessage'],
      send: [
        ...common,
        '--queue-url',
        '--envelope',
        '--type',
        '--data',
        '--source',
        '--partition-key',
        '--id',
        '--dry-run',
      ],
      dlq: ['list', 'show', 'redrive', 'StartMessageMoveTask'],
    };
    for (const [command, words] of Object.entries(expected)) {
      const help = await sqsJobs([command, '--help']);
      expect(help.code).toBe(0);
      for (const word of words) expect(help.stdout, `${command} --help documents ${word}`).toContain(word);
    }
    const unknown = await sqsJobs(['stat', '--queue-url', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(
      "error: unknown command 'stat' (Did you mean stats?) (add --help for usage)\n",
    );
  }, 60_000);

  it('send reads an envelope piped on stdin; stats then counts it (AWS_ENDPOINT_URL)', async () => {
    const queue = await emulator.createQueue('cli-process', false);
    const env = {
      AWS_ENDPOINT_URL: emulator.endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    };
    const body = JSON.stringify(
      createEnvelope({ type: 'payments.capture', source: '/test', id: 'proc-1', data: { paymentId: 'p-1' } }),
    );
    const sent = await sqsJobs(['send', '--queue-url', queue.url, '--envelope', '-', '--json'], {
      env,
      stdin: `${body}\n`,
    });
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ id: 'proc-1', type: 'payments.capture' });

    const stats = await sqsJobs(['stats', '--queue-url', queue.url, '--json'], { env });
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout).queues[0]).toMatchObject({ url: queue.url, visible: 1, inFlight: 0 });
    const [received] = await emulator.receive(queue);
    expect(received?.Body).toBe(body);
  }, 60_000);
});
