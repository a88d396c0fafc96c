/**
 * `npm start -- --keep-running` (and `--console`, `--no-workload`) after the report: the sample
 * stack served (lib/sample/keep-running.ts) until Ctrl-C or SIGTERM, then everything stopped in
 * order; a second Ctrl-C quits at once with the same exit code.
 */
import type { StartBeside } from '../../local/serve.ts';
import { serveSampleStack } from '../../sample/keep-running.ts';
import type { SampleStack } from '../../sample/workload.ts';
import type { StartFlags } from './flags.ts';
import { printError, type StartIo } from './io.ts';
import { onStopSignals } from './signals.ts';

/**
 * Keeps the sample stack up until a stop signal, with what runs `beside` it (the console), then
 * stops all of it and prints `stopped` on stderr.
 * @param exitCode the report's (0 without a workload).
 * @returns `exitCode`, or 2 when serving could not start.
 */
export async function keepRunning(
  io: StartIo,
  stack: SampleStack,
  exitCode: number,
  flags: StartFlags,
  beside: readonly StartBeside[],
): Promise<number> {
  const stop = new AbortController();
  const stopListening = onStopSignals(
    io,
    ['SIGINT', 'SIGTERM'],
    () => {
      io.stderr.write(
        `\nstopping: ${beside.length > 0 ? 'the console, ' : ''}the workers, the fake external API and the emulators (Ctrl-C again to quit at once)…\n`,
      );
      stop.abort();
    },
    () => io.exit(exitCode),
  );
  let code = exitCode;
  try {
    await serveSampleStack(stack, {
      json: flags.json,
      stdout: io.stdout,
      signal: stop.signal,
      beside,
      afterReport: flags.workload,
      stopLine: flags.workload
        ? `Ctrl-C stops everything; the exit code is then the report's (${exitCode}).`
        : 'Ctrl-C stops everything.',
    });
  } catch (err) {
    printError(io, `could not keep the stack running: ${(err as Error).message}`, err);
    code = 2;
  } finally {
    await stack.stop();
    stopListening();
  }
  io.stderr.write('stopped\n');
  return code;
}
