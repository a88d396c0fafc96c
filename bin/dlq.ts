/**
 * `npm run dlq`: inspect and redrive dead-letter queues (lib/ops/cli.ts). Ctrl-C stops the
 * running command; it releases the messages it holds and exits 130 (a second Ctrl-C kills it,
 * and held messages then come back by themselves when their visibility timeout runs out).
 */
import { createInterface } from 'node:readline/promises';
import { runDlqCli } from '../lib/ops/cli.ts';

const interrupt = new AbortController();
process.once('SIGINT', () => {
  process.stderr.write('\ninterrupted: stopping and making held messages visible again…\n');
  interrupt.abort();
});

process.exitCode = await runDlqCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdinIsTTY: process.stdin.isTTY === true,
  env: process.env,
  signal: interrupt.signal,
  async ask(question) {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  },
});
