/**
 * What `npm start` needs from its process, injected so that tests run it in-process: its output
 * streams, the environment, the stop signals (Ctrl-C) and an immediate exit. bin/start.ts wires
 * the real process. Also how an error that stops the run is printed.
 */

/** The signals that stop `npm start`: Ctrl-C, and SIGTERM while the stack is kept running. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Where `npm start` reads and writes; tests pass their own. */
export interface StartIo {
  /**
   * The report and the description of a kept stack; without --json also the progress. When
   * `isTTY` is true it must be a `tty.WriteStream`: the progress is then a bar drawn in place.
   */
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  /** Refusals, errors, Ctrl-C messages; with --json also the progress. */
  readonly stderr: { write(text: string): unknown };
  /**
   * The environment: the endpoint variables (ENDPOINT_ENV of lib/local/emulators.ts) and
   * `SQS_JOBS_DEBUG`. (The parser itself reads --endpoint's default, `SQS_JOBS_ENDPOINT_URL`,
   * from `process.env`: commander has no other source.)
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Calls `listener` at each `signal` received, until the returned function removes it. */
  readonly onSignal: (signal: StopSignal, listener: () => void) => () => void;
  /** Ends the process at once with `code` (a second Ctrl-C). */
  readonly exit: (code: number) => void;
}

/** Set to 1 to print the stack of an error that stops the run. */
export const DEBUG_ENV = 'SQS_JOBS_DEBUG';

/**
 * Prints an error that stops the run: one `error:` line; with `err`, its stack trace when
 * `SQS_JOBS_DEBUG=1`, else a line saying how to get it.
 */
export function printError(io: StartIo, message: string, err?: unknown): void {
  io.stderr.write(`error: ${message}\n`);
  if (err !== undefined && io.env[DEBUG_ENV] === '1') {
    io.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  } else if (err !== undefined) {
    io.stderr.write(`(set ${DEBUG_ENV}=1 for the stack trace)\n`);
  }
}
