/**
 * The `sqs-jobs` program without an emulator: every command takes the connection flags to its SQS
 * client; flags and commands it does not know, and a missing command, are refused with exit 2.
 */
import { describe, expect, it } from 'vitest';
import { type CliIo, runSqsJobsCli } from '../../lib/cli/index.ts';
import type { OpsClientInput } from '../../lib/ops/client.ts';

async function run(argv: readonly string[], io: Partial<CliIo> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runSqsJobsCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdinIsTTY: false,
    env: {},
    ...io,
  });
  return { code, stdout, stderr };
}

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/payments';
const CONNECTION = [
  '--region',
  'eu-central-1',
  '--profile',
  'ops-admin',
  '--endpoint',
  'http://localhost:4566',
];

describe('sqs-jobs connection flags', () => {
  it.each([
    ['stats', ['stats', '--queue-url', QUEUE]],
    ['send', ['send', '--queue-url', QUEUE, '--type', 'x', '--data', '{}']],
    ['dlq list', ['dlq', 'list', '--dlq-url', QUEUE, '--wait-seconds', '0']],
    ['dlq show', ['dlq', 'show', '--dlq-url', QUEUE, '--job-id', 'j']],
    ['dlq redrive', ['dlq', 'redrive', '--dlq-url', QUEUE, '--target-url', QUEUE, '--dry-run']],
  ])('%s passes --region, --profile and --endpoint to its client', async (_, argv) => {
    const inputs: OpsClientInput[] = [];
    const { code, stderr } = await run([...argv, ...CONNECTION], {
      createSqs: (input) => {
        inputs.push(input);
        return {
          send: async () => {
            // As the SDK throws it: a client fault, so nothing retries it.
            throw Object.assign(new Error('The specified queue does not exist.'), {
              name: 'QueueDoesNotExist',
              $fault: 'client',
              $metadata: { httpStatusCode: 400 },
            });
          },
        };
      },
    });
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      region: 'eu-central-1',
      profile: 'ops-admin',
      endpoint: 'http://localhost:4566',
      queueUrl: QUEUE,
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^error: queue does not exist: https:\/\/sqs\.eu-west-1\.amazonaws\.com\/123456789012\/payments/,
    );
  });
});

describe('sqs-jobs refusals', () => {
  it.each([
    [['nope'], "error: unknown command 'nope' (add --help for usage)\n"],
    [['stats', '--queue-url', QUEUE, '--nope'], "error: unknown option '--nope' (add --help for usage)\n"],
    [
      ['stats', 'extra'],
      "error: too many arguments for 'stats'. Expected 0 arguments but got 1. (add --help for usage)\n",
    ],
    [['send'], "error: required option '--queue-url <url>' not specified (add --help for usage)\n"],
  ])('%j exits 2 with one line', async (argv, message) => {
    const { code, stdout, stderr } = await run(argv, {
      createSqs: () => {
        throw new Error('no client may be made');
      },
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(message);
  });

  it.each([
    ['dlq redrive --job-id', ['dlq', 'redrive', '--dlq-url', QUEUE, '--target-url', QUEUE, '--job-id', '']],
    ['dlq list --reason', ['dlq', 'list', '--dlq-url', QUEUE, '--reason', '  ']],
    ['dlq show --job-id', ['dlq', 'show', '--dlq-url', QUEUE, '--job-id', '']],
  ])('refuses an empty filter value (%s) with exit 2 before reading anything', async (_, argv) => {
    const { code, stdout, stderr } = await run(argv, {
      createSqs: () => {
        throw new Error('no client may be made');
      },
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /^error: option '--[a-z-]+ <[a-z]+>' argument '\s*' is invalid\. an empty value matches nothing: give a value, or leave the option out\./,
    );
  });

  it('names a misspelled flag of every command as unknown, with the flag meant, never as a missing one', async () => {
    // Every command, from the help (a new command is covered without changing this test).
    const commandsOf = async (path: readonly string[]): Promise<string[][]> => {
      const help = (await run([...path, '--help'])).stdout;
      // The "Commands:" section ends at the first blank line (the help text after it has examples).
      const section = help.split('\nCommands:\n')[1]?.split('\n\n')[0];
      if (section === undefined) return [[...path]];
      const names = [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)]
        .map((m) => m[1] as string)
        .filter((n) => n !== 'help');
      return (await Promise.all(names.map((n) => commandsOf([...path, n])))).flat();
    };
    const commands = await commandsOf([]);
    expect(commands.map((c) => c.join(' '))).toEqual(
      expect.arrayContaining([
        'stats',
        'send',
        'dlq list',
        'dlq show',
        'dlq redrive',
        'job',
        'local',
        'console',
      ]),
    );
    let checked = 0;
    for (const command of commands) {
      const help = (await run([...command, '--help'])).stdout;
      const flags = [...help.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)]
        .map((m) => m[1] as string)
        .filter((f) => f !== '--help' && f.length >= 6);
      for (const flag of flags) {
        // A letter dropped from the end: `--dlq-ur` for `--dlq-url`.
        const typo = flag.slice(0, -1);
        const { code, stderr } = await run([...command, typo, 'x'], {
          createSqs: () => {
            throw new Error('no client may be made');
          },
        });
        expect({ command, code, stderr }).toEqual({
          command,
          code: 2,
          stderr: expect.stringMatching(
            new RegExp(`^error: unknown option '${typo}' \\(Did you mean (one of .*)?${flag}\\b.*\\?\\)`),
          ),
        });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('without a command prints the usage on stderr and exits 2; --help prints it on stdout and exits 0', async () => {
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^Usage: sqs-jobs \[options\] \[command\]/);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: sqs-jobs \[options\] \[command\]/);
    expect(help.stdout).toContain('Exit codes: 0 done, 1 done with problems, 2 could not run');
  });
});
