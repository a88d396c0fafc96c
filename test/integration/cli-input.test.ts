/**
 * bin/sqs-jobs.ts as a user runs it (a child process under tsx), on input a user gets wrong:
 * a Latin-1 file piped to `send --envelope -`, and `--version`. Nothing is sent: no emulator.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT, runScript, type ScriptRun } from '../factories/script-process.ts';

function sqsJobs(args: readonly string[], stdin: Uint8Array | string = ''): Promise<ScriptRun> {
  return runScript(['bin/sqs-jobs.ts', ...args], { env: { AWS_REGION: 'eu-west-1' }, stdin });
}

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/payments';

describe('bin/sqs-jobs.ts input', () => {
  it('a Latin-1 file piped to --envelope - is refused with one line (not sent with U+FFFD)', async () => {
    const envelope =
      '{"specversion":"1.0","id":"job-1","source":"/php","type":"payments.capture",' +
      '"time":"2026-11-29T07:00:00Z","datacontenttype":"application/json","data":{"name":"café"}}';
    const { code, stdout, stderr } = await sqsJobs(
      ['send', '--queue-url', QUEUE, '--envelope', '-', '--dry-run'],
      Buffer.from(envelope, 'latin1'),
    );
    expect(stderr).toBe(
      'error: --envelope -: stdin is not valid UTF-8: convert it, e.g. iconv -f latin1 -t utf-8\n',
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');

    const utf8 = await sqsJobs(
      ['send', '--queue-url', QUEUE, '--envelope', '-', '--dry-run', '--json'],
      Buffer.from(envelope, 'utf8'),
    );
    expect(utf8.code).toBe(0);
    expect(JSON.parse(utf8.stdout).body).toBe(envelope);
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const { code, stdout, stderr } = await sqsJobs([flag]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toBe(`${version}\n`);
    }
  });
});
