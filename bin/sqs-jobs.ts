#!/usr/bin/env node
/**
 * `sqs-jobs`: the operator CLI (lib/cli/): `stats`, `send`, `dlq list|show|redrive`, `local`.
 * Ctrl-C stops the running command (a dlq command releases the messages it holds and exits 130;
 * `stats --watch` ends with 0); a second Ctrl-C kills it, and held messages then come back by
 * themselves when their visibility timeout runs out.
 */
import { createInterface } from 'node:readline/promises';
import { runSqsJobsCli } from '../lib/cli/index.ts';
import { readUtf8 } from '../lib/cli/io.ts';
import packageJson from '../package.json' with { type: 'json' };

const argv = process.argv.slice(2);
const interrupt = new AbortController();
// The reader of stdout went away (`sqs-jobs stats --watch --json | head -n 2`): stop like Ctrl-C,
// quietly (a dlq command still releases what it holds).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  interrupt.abort();
});
process.once('SIGINT', () => {
  if (argv[0] === 'dlq')
    process.stderr.write('\ninterrupted: stopping and making held messages visible again…\n');
  else if (argv[0] !== 'stats') process.stderr.write('\ninterrupted: stopping…\n');
  interrupt.abort();
});

process.exitCode = await runSqsJobsCli(argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  version: packageJson.version,
  stdinIsTTY: process.stdin.isTTY === true,
  env: process.env,
  signal: interrupt.signal,
  // Fatal UTF-8: a Latin-1 file piped in is refused, not sent with U+FFFD in place of its é.
  readStdin: () => readUtf8(process.stdin),
  async ask(question) {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  },
});
