/**
 * `sqs-jobs`: the operator CLI. Commands: `dlq list|show|redrive` (./dlq.ts), `stats` (./stats.ts),
 * `send` (./send.ts), `job` (./job.ts: a job's chain), `schedules` (./schedules.ts: jobs sent for later, recurring schedules), `local` (./local.ts: your app's stack on this machine). bin/sqs-jobs.ts wires it to the process; tests run it in-process with their
 * own {@link CliIo}.
 *
 * Exit codes: 0 done; 1 done with problems (per command, see its --help); 2 could not run (unknown
 * command or flag, bad input, queue, endpoint, credentials); 130 interrupted.
 */
import { Command } from 'commander';
import { CommandRunner, checkRequiredOptions } from './common.ts';
import { addConsoleCommand } from './console.ts';
import { addDlqCommand } from './dlq.ts';
import { CLI_EXIT, type CliIo } from './io.ts';
import { addJobCommand } from './job.ts';
import { addLocalCommand } from './local.ts';
import { addSchedulesCommand } from './schedules.ts';
import { addSendCommand } from './send.ts';
import { addStatsCommand } from './stats.ts';

export { CLI_EXIT, type CliIo, readUtf8, StdinError } from './io.ts';
export { DEFAULT_CLI_SOURCE } from './send.ts';
export { DEFAULT_WATCH_SECONDS } from './stats.ts';

const HELP_AFTER = `
Every command takes --endpoint, --region, --profile and --json; see sqs-jobs <command> --help.
Credentials: the AWS default chain (AWS_PROFILE or --profile, AWS_ACCESS_KEY_ID /
AWS_SECRET_ACCESS_KEY, SSO, instance roles; any values for an emulator). Endpoint: --endpoint,
else AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL, else AWS.

Exit codes: 0 done, 1 done with problems, 2 could not run (bad flags or input, queue, endpoint,
credentials), 130 interrupted. See docs/operations.md.`;

/**
 * Runs `sqs-jobs` with `argv` (the user's arguments, without `node` and the script).
 *
 * @returns the exit code; never throws (errors are `error:` lines on `io.stderr`).
 */
export async function runSqsJobsCli(argv: readonly string[], io: CliIo): Promise<number> {
  const runner = new CommandRunner(io);
  const program = new Command()
    .name('sqs-jobs')
    .description(
      'Operate sqs-jobs queues: queue depths and ages (stats), send a job (send), inspect and redrive ' +
        "dead-letter queues (dlq), a job's whole chain (job), run your stack locally (local), a web console (console), " +
        'jobs sent for later and recurring schedules (schedules).',
    )
    .exitOverride()
    .configureOutput({
      writeOut: runner.out,
      writeErr: runner.err,
      // One line: the error, commander's suggestion if any, and where to find the usage.
      outputError: (text, write) =>
        write(`${text.trim().replace(/\s*\n\s*/g, ' ')} (add --help for usage)\n`),
    })
    .addHelpText('after', HELP_AFTER);
  if (io.version !== undefined) program.version(io.version, '-V, --version', 'print the sqs-jobs version');

  addStatsCommand(program, runner);
  addSendCommand(program, runner);
  addDlqCommand(program, runner);
  addJobCommand(program, runner);
  addLocalCommand(program, runner);
  addConsoleCommand(program, runner);
  addSchedulesCommand(program, runner);
  checkRequiredOptions(program);

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    const code = (error as { exitCode?: number }).exitCode;
    return code === 0 ? CLI_EXIT.ok : CLI_EXIT.cannotRun;
  }
  return runner.exitCode;
}
