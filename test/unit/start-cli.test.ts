/**
 * `npm start`'s command line in process: `runStartCli` with its I/O injected, on the flags, the
 * help and the refusals that stop it before anything starts (exit 0 or 2). The run itself, Ctrl-C
 * and the exit code through npm are tested on the process: test/integration/start-cli.test.ts and
 * start-keep-running.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runStartCli, type StartIo } from '../../lib/cli/start/index.ts';
import { parseStartArgs } from '../../lib/cli/start/parse.ts';

/** Runs `npm start -- <args>` in process; a signal listener or an exit would be a bug here. */
async function start(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = { stdout: '', stderr: '' };
  const io: StartIo = {
    stdout: { write: (text: string) => (output.stdout += text), isTTY: false },
    stderr: { write: (text: string) => (output.stderr += text) },
    env: {},
    onSignal: () => () => {},
    exit: (code) => {
      throw new Error(`exit(${code}) called`);
    },
  };
  const code = await runStartCli(args, io);
  return { code, ...output };
}

/** The flags `parseStartArgs` makes of `args` (a refusal is a test failure): no output, no exit. */
function parsedFlags(args: readonly string[]) {
  const io: StartIo = {
    stdout: { write: () => true, isTTY: false },
    stderr: { write: () => true },
    env: {},
    onSignal: () => () => {},
    exit: (code) => {
      throw new Error(`exit(${code}) called`);
    },
  };
  const request = parseStartArgs(args, io);
  if (typeof request === 'number') throw new Error(`refused: ${request}`);
  return request.flags;
}

describe('npm start flags (in process)', () => {
  // The parser reads --endpoint's variable from process.env: the test's own must not leak in.
  beforeEach(() => {
    vi.stubEnv('SQS_JOBS_ENDPOINT_URL', undefined);
    vi.stubEnv('SQS_JOBS_SQS_ENDPOINT', undefined);
    vi.stubEnv('SQS_JOBS_DYNAMODB_ENDPOINT', undefined);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('documents every flag in --help', async () => {
    const { code, stdout } = await start(['--help']);
    expect(code).toBe(0);
    for (const flag of [
      '--users',
      '--bookings-per-user',
      '--seed',
      '--fault-rate',
      '--timeout-rate',
      '--throttle-rate',
      '--unavailable-rate',
      '--bad-request-rate',
      '--slow-rate',
      '--lost-response-rate',
      '--visibility-timeout-seconds',
      '--out-of-stock',
      '--malformed',
      '--duplicates',
      '--timeout-seconds',
      '--endpoint',
      '--json',
      '--keep-running',
      '--console',
      '--no-workload',
      '--console-port',
      '--read-only',
      '--partner-rate-limit',
      '--no-partner-rate-limit',
      '--no-limits',
      '--batches',
    ]) {
      expect(stdout).toContain(flag);
    }
    expect(stdout).toContain('SQS_JOBS_ENDPOINT_URL');
  });

  it('refuses a bad flag value with exit code 2 and a message naming it', async () => {
    const { code, stderr } = await start(['--fault-rate', '1.5']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--fault-rate.*must be a number from 0 to 1/);
  });

  it('names a misspelled flag as unknown, with the flag meant, and exits 2 before anything starts', async () => {
    const typos = [
      ['--user', '--users'],
      ['--fault-rat', '--fault-rate'],
      ['--keep-runing', '--keep-running'],
      ['--timeout-second', '--timeout-seconds'],
    ] as const;
    for (const [typo, meant] of typos) {
      const { code, stdout, stderr } = await start([typo, '3']);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toBe(`error: unknown option '${typo}'\n(Did you mean ${meant}?)\n`);
    }
  });

  it('refuses --endpoint that is not an http(s) URL at flag parsing, naming it, before anything starts', async () => {
    const { code, stdout, stderr } = await start(['--endpoint', 'notaurl']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--endpoint.*notaurl.*must be an http\(s\) URL/);
    expect(stdout).toBe('');
  });

  it('names an unreachable endpoint in one line, without a stack, and exits 2', async () => {
    const { code, stdout, stderr } = await start(['--endpoint', 'http://127.0.0.1:1']);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^error: cannot reach the endpoint http:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\): check that it is running and reachable/,
      ),
    ]);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).not.toContain('synthesizing');
  });

  it('bounds --users and --bookings-per-user', async () => {
    const users = await start(['--users', '1e9']);
    expect(users.code).toBe(2);
    expect(users.stderr).toMatch(/--users.*must be an integer from 1 to 10,000/);
    const bookings = await start(['--bookings-per-user', '21']);
    expect(bookings.code).toBe(2);
    expect(bookings.stderr).toMatch(/--bookings-per-user.*must be an integer from 1 to 20/);
  });

  it('--batches: none by default, in the soak too; an integer from 0 to 10,000', async () => {
    const batches = (args: readonly string[]) => parsedFlags(args).batches;
    expect(batches([])).toBe(0);
    expect(batches(['--soak'])).toBe(0);
    expect(batches(['--soak', '--batches', '1000'])).toBe(1000);
    const refused = await start(['--batches', '10001']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--batches.*must be an integer from 0 to 10,000/);
  });

  it('--partner-rate-limit takes a number of requests per second above 0', async () => {
    for (const value of ['0', '-1', 'fast']) {
      const { code, stderr } = await start(['--partner-rate-limit', value]);
      expect(code, value).toBe(2);
      expect(stderr, value).toMatch(
        /--partner-rate-limit.*must be a number of requests per second > 0, e\.g\. 5/,
      );
    }
  });

  it("limits the partner when asked (--partner-rate-limit), not by default nor in the soak; --no-limits drops the sample's own limit", () => {
    const flags = (args: readonly string[]) => {
      const { partnerRateLimit, limits } = parsedFlags(args);
      return { partner: partnerRateLimit, limits };
    };
    expect(flags([])).toEqual({ partner: undefined, limits: true });
    expect(flags(['--partner-rate-limit', '1', '--no-limits'])).toEqual({ partner: 1, limits: false });
    expect(flags(['--partner-rate-limit', '2.5'])).toEqual({ partner: 2.5, limits: true });
    expect(flags(['--no-partner-rate-limit'])).toEqual({ partner: false, limits: true });
    expect(flags(['--soak'])).toEqual({ partner: undefined, limits: true });
  });

  it('names every rate it summed when the fault rates add up to more than 1', async () => {
    const { code, stderr } = await start(['--timeout-rate', '0.6', '--throttle-rate', '0.6']);
    expect(code).toBe(2);
    expect(stderr).toContain('the fault rates add up to 1.2525, more than 1');
    expect(stderr).toContain('--timeout-rate 0.6');
    expect(stderr).toContain('--throttle-rate 0.6');
    expect(stderr).toContain('503 0.0175 (35% of --fault-rate 0.05)');
    expect(stderr).toContain('400 0.005 (10% of --fault-rate 0.05)');
    expect(stderr).toContain('slow --slow-rate 0.03');
  });

  it('--no-workload refuses the workload flags', async () => {
    const { code, stderr } = await start(['--no-workload', '--users', '3']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--no-workload runs no workload: --users has nothing to do/);
  });
});
