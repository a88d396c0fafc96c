/**
 * The `sqs-jobs` CLI against input a user gets wrong: numbers the worker cannot read as written,
 * stdin that is not UTF-8, a file path given where JSON is expected, an endpoint without a scheme;
 * and `--version`. No emulator: `--dry-run` and refusals send nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type CliIo, readUtf8, runSqsJobsCli, StdinError } from '../../lib/cli/index.ts';

async function run(argv: readonly string[], io: Partial<CliIo> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runSqsJobsCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdinIsTTY: false,
    env: {},
    createSqs: () => ({
      send: async () => {
        throw new Error('nothing may be sent in these tests');
      },
    }),
    ...io,
  });
  return { code, stdout, stderr };
}

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/payments';

const ENVELOPE = (data: string) =>
  '{"specversion":"1.0","id":"job-1","source":"/php","type":"payments.capture",' +
  `"time":"2026-11-29T07:00:00Z","datacontenttype":"application/json","data":${data}}`;

describe('sqs-jobs send: numbers the worker cannot read as written', () => {
  it.each([
    ['--data', ['--type', 'payments.capture', '--data', '{"amount":1e400}'], 'Infinity'],
    [
      '--data',
      ['--type', 'payments.capture', '--data', '{"ref":12345678901234567890}'],
      '12345678901234567000',
    ],
    ['--envelope', ['--envelope', ENVELOPE('{"amount":1e400}')], 'Infinity'],
    ['--envelope', ['--envelope', ENVELOPE('{"ref":12345678901234567890}')], '12345678901234567000'],
  ])('%s is refused with one line naming the number (exit 2)', async (_, flags, reads) => {
    for (const dryRun of [[], ['--dry-run']]) {
      const { code, stdout, stderr } = await run(['send', '--queue-url', QUEUE, ...flags, ...dryRun]);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/^error: data\.(amount|ref): the (number|integer) /);
      expect(stderr).toContain(`would read ${reads}`);
      expect(stderr).toContain('send it as a string');
      expect(stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('a number JavaScript reads as written goes through as written', async () => {
    const { code, stdout } = await run([
      'send',
      '--queue-url',
      QUEUE,
      '--type',
      'payments.capture',
      '--data',
      '{"amount":10.50,"ref":9007199254740991}',
      '--dry-run',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).body).toContain('"data":{"amount":10.50,"ref":9007199254740991}}');
  });
});

describe('stdin must be UTF-8', () => {
  const latin1 = Buffer.from(ENVELOPE('{"name":"café"}'), 'latin1');

  it('readUtf8 decodes UTF-8 (split across chunks, BOM dropped) and refuses anything else', async () => {
    const utf8 = Buffer.from(`\uFEFF${ENVELOPE('{"name":"café 🎉"}')}`, 'utf8');
    const at = utf8.indexOf(0xa9); // inside the two bytes of é
    expect(await readUtf8(Readable.from([utf8.subarray(0, at), utf8.subarray(at)]))).toBe(
      ENVELOPE('{"name":"café 🎉"}'),
    );
    const utf16WithBom = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(ENVELOPE('{}'), 'utf16le')]);
    const loneSurrogate = Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]); // CESU-8, not UTF-8
    for (const bytes of [latin1, utf16WithBom, loneSurrogate, utf8.subarray(0, at)]) {
      await expect(readUtf8(Readable.from([bytes]))).rejects.toThrow(
        new StdinError('stdin is not valid UTF-8: convert it, e.g. iconv -f latin1 -t utf-8'),
      );
    }
  });

  it.each([
    ['--envelope', ['--envelope', '-']],
    ['--data', ['--type', 'payments.capture', '--data', '-']],
  ])('send %s - with a Latin-1 file: one line, exit 2, nothing sent', async (flag, flags) => {
    const { code, stdout, stderr } = await run(['send', '--queue-url', QUEUE, ...flags], {
      readStdin: () => readUtf8(Readable.from([latin1])),
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `error: ${flag} -: stdin is not valid UTF-8: convert it, e.g. iconv -f latin1 -t utf-8\n`,
    );
  });
});

describe('sqs-jobs --version', () => {
  it('prints the version it is given, exit 0; listed in --help', async () => {
    for (const flag of ['--version', '-V']) {
      expect(await run([flag], { version: '1.2.3' })).toEqual({ code: 0, stdout: '1.2.3\n', stderr: '' });
    }
    const help = await run(['--help'], { version: '1.2.3' });
    expect(help.stdout).toMatch(/-V, --version\s+print the sqs-jobs version/);
  });
});

describe('sqs-jobs send to a FIFO queue URL with a trailing slash', () => {
  const FIFO = 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking.fifo/';

  it('is FIFO: the partition key is required, and the dry run shows the MessageGroupId', async () => {
    const base = ['send', '--queue-url', FIFO, '--type', 'booking.reserve', '--data', '{}', '--dry-run'];
    const missing = await run(base);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: --partition-key is required on FIFO queue "booking\.fifo"/);
    const ok = await run([...base, '--partition-key', 'user-7', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      queueUrl: FIFO.slice(0, -1),
      messageGroupId: 'user-7',
      messageDeduplicationId: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });
});

describe('sqs-jobs send without credentials', () => {
  it('fails at once: one error line, no retry warnings, exit 2', async () => {
    let calls = 0;
    const { code, stderr } = await run(['send', '--queue-url', QUEUE, '--type', 'x', '--data', '{}'], {
      createSqs: () => ({
        send: async () => {
          calls++;
          throw Object.assign(new Error('Could not load credentials from any providers'), {
            name: 'CredentialsProviderError',
            tryNextLink: false,
          });
        },
      }),
    });
    expect(code).toBe(2);
    expect(calls).toBe(1);
    expect(stderr).toBe(
      'error: no AWS credentials for SendMessageBatch (Could not load credentials from any providers): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (any values work for an emulator)\n',
    );
  });
});

describe('flag values a user gets wrong', () => {
  it.each([['localhost:4566'], ['4566'], ['ftp://localhost:4566']])(
    'local --endpoint %s names the flag, not an internal option',
    async (endpoint) => {
      const { code, stdout, stderr } = await run(['local', '--endpoint', endpoint]);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toBe(
        `error: --endpoint: "${endpoint}" is not an http(s) URL (e.g. http://localhost:4566)\n`,
      );
    },
  );

  it('send --envelope / --data given a file name: says how to read a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqs-jobs-cli-'));
    try {
      const file = join(dir, 'job.json');
      writeFileSync(file, ENVELOPE('{}'));
      const spaced = join(dir, "my job's.json");
      writeFileSync(spaced, '{}');
      const cases: Array<[string[], string]> = [
        [['--envelope', file], `use --envelope - < ${file}`],
        [['--envelope', `@${file}`], `use --envelope - < ${file}`],
        [['--type', 'x', '--data', file], `use --data - < ${file}`],
        [['--type', 'x', '--data', spaced], `use --data - < '${dir}/my job'\\''s.json'`],
      ];
      for (const [flags, says] of cases) {
        const { code, stderr } = await run(['send', '--queue-url', QUEUE, ...flags, '--dry-run']);
        expect(code).toBe(2);
        expect(stderr).toMatch(/^error: --(envelope|data) is not JSON \(.+\) but names a file: /);
        expect(stderr).toContain(`to read a file, ${says}\n`);
        expect(stderr.trim().split('\n')).toHaveLength(1);
      }
      // Not a file: the JSON error as before, no hint.
      const notFile = await run(['send', '--queue-url', QUEUE, '--envelope', join(dir, 'nope.json')]);
      expect(notFile.code).toBe(2);
      expect(notFile.stderr).not.toContain('to read a file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqs-jobs send --envelope: the attributes of a job sent for later', () => {
  it('a hand-written runat / schedulegeneration is refused (exit 2), naming JobClient runAt; nothing is sent', async () => {
    const months = new Date(Date.now() + 90 * 86_400_000).toISOString();
    const envelope = ENVELOPE('{"amount":1}').replace(
      '"datacontenttype"',
      `"runat":"${months}","schedulegeneration":"1","datacontenttype"`,
    );
    for (const dryRun of [[], ['--dry-run']]) {
      const { code, stdout, stderr } = await run([
        'send',
        '--queue-url',
        QUEUE,
        '--envelope',
        envelope,
        ...dryRun,
      ]);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(
        /^error: --envelope: runat and schedulegeneration are set by JobClient .*jobClient\.send\(job, data, \{ runAt \}\)/,
      );
    }
  });
});
